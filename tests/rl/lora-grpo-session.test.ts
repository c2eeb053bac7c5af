/**
 * A LoRA-GRPO session stops and goes on: its state (adapters, their AdamW moments, the trainer's
 * random draws and config) taken after two updates and restored into a fresh session gives the
 * next updates exactly as an unbroken run makes them; a state that does not fit is refused by
 * field, and the session it was offered to is unchanged.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { chatTokenizer, type ChatTokenizer } from '../../src/agents/chat-task';
import { createTokenTask } from '../../src/agents/token-task-registry';
import { loadLmModel, loadLmTokenizer } from '../../src/cli/lm-model';
import { LORA_MODULES } from '../../src/models/hf/llama-lora';
import type { ModelSpec } from '../../src/models/model-spec';
import { LoraGrpoSession, loraGrpoConfig } from '../../src/rl/lora-grpo-session';

const MODEL = 'public/models/hf/tiny-chat';
let spec: ModelSpec;
let base: Float32Array;
let tokenizer: ChatTokenizer;

beforeAll(async () => {
  const loaded = await loadLmModel(MODEL);
  spec = loaded.model.spec;
  base = loaded.params;
  tokenizer = chatTokenizer(await loadLmTokenizer(MODEL));
});

function session(seed = 3): LoraGrpoSession {
  return new LoraGrpoSession({
    spec,
    base,
    tokenizer,
    task: createTokenTask('addition', { minDigits: 1, maxDigits: 2, reverseAnswer: true }),
    lora: { rank: 4, alpha: 8, targets: [...LORA_MODULES] },
    grpo: loraGrpoConfig({ lr: 5e-3, promptsPerUpdate: 3, groupSize: 4, maxNewTokens: 6 }),
    seed,
  });
}

/** The metrics without wall-clock rates, which differ between any two runs. */
const untimed = (metrics: Record<string, number>) =>
  Object.fromEntries(
    Object.entries(metrics).filter(([name]) => !name.startsWith('perf/tokens_per')),
  );

describe('LoraGrpoSession state', () => {
  it('restored into a fresh session, goes on exactly as the unbroken run', async () => {
    const unbroken = session();
    const metrics = [];
    for (let u = 0; u < 4; u++) metrics.push(await unbroken.update());

    const first = session();
    await first.update();
    await first.update();
    const saved = await first.state();
    expect(saved.trainer.step).toBe(2);
    const second = session();
    expect(second.step).toBe(0);
    second.restore(saved);
    expect(second.step).toBe(2);
    const resumed = [await second.update(), await second.update()];

    expect(resumed.map(untimed)).toEqual(metrics.slice(2).map(untimed));
    const [a, b] = [await unbroken.state(), await second.state()];
    expect(b.params).toEqual(a.params);
    expect(b.optimizer.m).toEqual(a.optimizer.m);
    expect(b.optimizer.v).toEqual(a.optimizer.v);
    // The adapters moved: a check that compared untrained adapters would prove nothing.
    expect((await session().state()).params).not.toEqual(a.params);
  });

  it('refuses a state of other adapters or with a NaN, naming the field, and changes nothing', async () => {
    const run = session();
    await run.update();
    const before = await run.state();
    const other = await new LoraGrpoSession({
      spec,
      base,
      tokenizer,
      task: createTokenTask('addition', {}),
      lora: { rank: 2, alpha: 4, targets: ['q_proj'] },
      grpo: loraGrpoConfig({ lr: 5e-3, promptsPerUpdate: 1, groupSize: 2, maxNewTokens: 4 }),
      seed: 1,
    }).state();
    expect(() => run.restore(other)).toThrow(/params.*adapters' \d+ floats \(r = 4 on q_proj/);
    const nan = await session().state();
    nan.optimizer.v[7] = NaN;
    expect(() => run.restore(nan)).toThrow(/optimizer\.v\[7\].*finite/);
    const wrongAlgorithm = { ...(await session().state()) };
    wrongAlgorithm.trainer = { ...wrongAlgorithm.trainer, algorithm: 'ppo' };
    expect(() => run.restore(wrongAlgorithm)).toThrow();
    const after = await run.state();
    expect(after.params).toEqual(before.params);
    expect(after.optimizer.m).toEqual(before.optimizer.m);
    expect(after.trainer).toEqual(before.trainer);
  });
});
