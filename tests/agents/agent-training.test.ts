/**
 * Training on agent tasks with the real trainers on the CPU: a smoke update of GRPO and PPO (value
 * head, both GAE mask modes) with the tool metrics present, and the tool-use stage's fast learning
 * test — a short SFT warm-up on calculator transcripts takes a fresh model from never solving the
 * task to solving it by calling the tool.
 */
import { describe, expect, it } from 'vitest';
import { multiplyTask } from '../../src/agents/tasks/multiply';
import { CpuLanguageModel } from '../../src/models/lm-cpu';
import { CharTokenizer } from '../../src/models/tokenizer';
import type { TransformerConfig } from '../../src/models/transformer-config';
import { transformerLayout } from '../../src/models/transformer-params';
import { runEpisodes } from '../../src/agents/episode';
import { seededRandom } from '../../src/util/random';
import { createGrpoTrainer } from '../../src/rl/grpo';
import { DEFAULT_GRPO_CONFIG } from '../../src/rl/grpo-config';
import { createPpoLmTrainer, DEFAULT_PPO_LM_CONFIG } from '../../src/rl/ppo-lm';
import { DEFAULT_SFT_CONFIG, runSft } from '../../src/rl/sft';

const tokenizer = CharTokenizer.createDefault();
const task = multiplyTask({ minDigits: 1, maxDigits: 2 });

function model(valueHead: boolean) {
  const config: TransformerConfig = {
    vocab: tokenizer.vocabSize,
    context: task.maxChars + 2,
    width: 32,
    layers: 2,
    heads: 2,
    tiedEmbeddings: true,
    valueHead,
  };
  return new CpuLanguageModel(config, transformerLayout(config).initialize<Float32Array>(7));
}

const TOOL_METRICS = ['tools/call_frequency', 'tools/failure_frequency', 'num_turns/mean'];

describe('agent tasks in the trainers (CPU)', () => {
  it('GRPO: an update reports the tool metrics', async () => {
    const t = createGrpoTrainer(
      { policy: model(false), tokenizer, task, seed: 1 },
      { ...DEFAULT_GRPO_CONFIG, groupSize: 2, promptsPerUpdate: 2, maxNewTokens: 8 },
    );
    const m = await t.update();
    for (const key of TOOL_METRICS) expect(Number.isFinite(m[key]), key).toBe(true);
    expect(m['num_turns/mean']).toBeGreaterThanOrEqual(1);
  });

  it.each(['skip', 'zero-step'] as const)('PPO (GAE %s): an update runs', async (gaeMaskMode) => {
    const t = createPpoLmTrainer(
      { policy: model(true), tokenizer, task, seed: 1 },
      {
        ...DEFAULT_PPO_LM_CONFIG,
        promptsPerUpdate: 4,
        minibatches: 2,
        maxNewTokens: 8,
        gaeMaskMode,
      },
    );
    const m = await t.update();
    for (const key of [...TOOL_METRICS, 'critic/vf_loss']) {
      expect(Number.isFinite(m[key]), key).toBe(true);
    }
  });

  it('learns the call syntax from transcripts in 150 SFT steps: calls 0 → ≥ 90%, success 0 → > 0', async () => {
    const policy = model(false);
    const random = seededRandom(99);
    const samples = Array.from({ length: 32 }, () => task.sample(random));
    const measure = async () => {
      const episodes = await runEpisodes({
        policy,
        tokenizer,
        task,
        samples,
        maxLength: task.maxChars + 2,
        maxTurnTokens: 24,
        sampling: { temperature: 0 },
        seed: 1,
      });
      const called = episodes.filter((e) => e.calls.some((c) => c.tool === 'calc' && c.ok));
      const solved = episodes.filter((e) => e.answer !== null && task.verify(e.sample, e.answer));
      return { called: called.length / 32, solved: solved.length / 32 };
    };
    expect(await measure()).toEqual({ called: 0, solved: 0 });
    await runSft(policy, tokenizer, task, {
      ...DEFAULT_SFT_CONFIG,
      steps: 150,
      batchSize: 16,
      evalSamples: 4,
    });
    const after = await measure();
    expect(after.called).toBeGreaterThanOrEqual(0.9);
    expect(after.solved).toBeGreaterThan(0);
  }, 120_000);
});
