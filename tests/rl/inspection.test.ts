/**
 * The per-token inspection of a GRPO update: what the lab's inspector shows must be what the
 * update trained on — the mask, the advantages, the ratios (1 at the first optimizer step, moved
 * after it) and, for agent tasks, the tool tokens marked and never trained.
 */
import { describe, expect, it } from 'vitest';
import { multiplyTask } from '../../src/agents/tasks/multiply';
import { reverseTask } from '../../src/envs/token-tasks/reverse';
import { CpuLanguageModel } from '../../src/models/lm-cpu';
import { CharTokenizer } from '../../src/models/tokenizer';
import type { TransformerConfig } from '../../src/models/transformer-config';
import { transformerLayout } from '../../src/models/transformer-params';
import { createGrpoTrainer } from '../../src/rl/grpo';
import { DEFAULT_GRPO_CONFIG } from '../../src/rl/grpo-config';
import { inspectBatch } from '../../src/rl/inspection';
import { packRows, rollout } from '../../src/rl/token-rollout';
import { DEFAULT_REWARD_CONFIG } from '../../src/envs/token-tasks/rewards';
import { scriptedPolicy } from '../agents/scripted-policy';

const tokenizer = CharTokenizer.createDefault();

function model(context: number) {
  const config: TransformerConfig = {
    vocab: tokenizer.vocabSize,
    context,
    width: 32,
    layers: 1,
    heads: 2,
    tiedEmbeddings: true,
    valueHead: false,
  };
  return new CpuLanguageModel(config, transformerLayout(config).initialize<Float32Array>(3));
}

describe('GRPO inspection', () => {
  it('one iteration: ratio 1 and nothing clipped; the group advantage on every trained token', async () => {
    const task = reverseTask({ minLength: 2, maxLength: 3, alphabet: 'abc' });
    const t = createGrpoTrainer(
      { policy: model(task.maxChars + 8), tokenizer, task, seed: 1 },
      { ...DEFAULT_GRPO_CONFIG, groupSize: 4, promptsPerUpdate: 2, maxNewTokens: 5 },
    );
    await t.update();
    const samples = t.lastSamples;
    expect(samples.map((s) => s.group)).toEqual([0, 0, 0, 0, 1, 1, 1, 1]);
    for (const s of samples) {
      const trained = s.tokens.filter((k) => k.trained);
      expect(trained.length).toBeGreaterThan(0);
      // The text of the tokens is the completion (up to <eos>, which is a trained token too).
      const written = trained
        .map((k) => k.text)
        .filter((x) => !tokenizer.isSpecial(tokenizer.encode(x)[0]!));
      expect(written.join('')).toBe(s.completion);
      for (const k of trained) {
        expect(k.ratio).toBe(1);
        expect(k.clipped).toBe(false);
        expect(k.advantage).toBe(s.advantage);
      }
    }
    // Group-relative: the advantages of a group sum to zero (std-normalised GRPO).
    for (const g of [0, 1]) {
      const sum = samples.filter((s) => s.group === g).reduce((a, s) => a + s.advantage, 0);
      expect(Math.abs(sum)).toBeLessThan(1e-5);
    }
  });

  it('several iterations: ratios move off 1 and a tight clip range clips some tokens', async () => {
    const task = reverseTask({ minLength: 2, maxLength: 3, alphabet: 'abc' });
    // A length penalty gives a random policy's completions different rewards (the few that stop at
    // an early <eos> are shorter than the ones cut at maxNewTokens), and REINFORCE++ whitens across
    // the batch, so the advantages (and with them the gradient) are not all zero.
    const t = createGrpoTrainer(
      { policy: model(task.maxChars + 8), tokenizer, task, seed: 5 },
      {
        ...DEFAULT_GRPO_CONFIG,
        lengthPenalty: 0.2,
        lengthTarget: 1,
        groupSize: 4,
        promptsPerUpdate: 4,
        maxNewTokens: 10,
        advantageEstimator: 'reinforce++',
        iterations: 4,
        lr: 3e-2,
        clipLow: 0.01,
        clipHigh: 0.01,
      },
    );
    await t.update();
    expect(new Set(t.lastSamples.map((s) => s.reward)).size).toBeGreaterThan(1);
    const trained = t.lastSamples.flatMap((s) => s.tokens.filter((k) => k.trained));
    expect(trained.some((k) => k.ratio !== 1)).toBe(true);
    expect(trained.some((k) => k.clipped)).toBe(true);
    // A clipped token is outside [1 − ε, 1 + ε] on the side its advantage pushes.
    for (const k of trained.filter((k) => k.clipped)) {
      expect(k.advantage > 0 ? k.ratio > 1.01 : k.ratio < 0.99).toBe(true);
    }
  });

  it('agent task: tool tokens are marked as observations and never trained', async () => {
    const task = multiplyTask();
    const rows = await rollout({
      policy: scriptedPolicy(tokenizer, (_p, call) =>
        call === 0 ? '<call>calc(12*34)</call>' : '<answer>408</answer>',
      ),
      tokenizer,
      task,
      rewards: DEFAULT_REWARD_CONFIG,
      samples: [{ prompt: '12*34=', answer: '408' }],
      maxLength: 40,
      maxNewTokens: 32,
      sampling: { temperature: 1 },
      seed: 1,
    });
    const packed = packRows(rows);
    const n = packed.rows * packed.seq;
    const [sample] = inspectBatch(tokenizer, {
      rows,
      groupSize: 1,
      seq: packed.seq,
      targets: packed.targets,
      mask: packed.mask,
      advantages: packed.mask.map((m) => m * 0.5),
      logp: new Float32Array(n).fill(-1),
      oldLogp: new Float32Array(n).fill(-1),
      clip: { clipLow: 0.2, clipHigh: 0.2 },
    });
    // <call> calc(12*34) </call> (13) | <result> 408 </result> (5) | <answer> 408 </answer> (5)
    expect(sample!.tokens.map((k) => (k.observation ? 'o' : k.trained ? 't' : '?')).join('')).toBe(
      't'.repeat(13) + 'o'.repeat(5) + 't'.repeat(5),
    );
    expect(sample!.tokens[13]!.text).toBe('<result>');
    const observed = sample!.tokens.filter((k) => k.observation);
    expect(observed.every((k) => !k.trained && Number.isNaN(k.ratio) && !k.clipped)).toBe(true);
    expect(sample!.advantage).toBe(0.5);
  });
});

describe('GRPO loss normalisation', () => {
  it("dr-grpo divides by B × max_completion_length (maxNewTokens), as TRL's dr_grpo does", async () => {
    const task = reverseTask({ minLength: 2, maxLength: 3, alphabet: 'abc' });
    // The length penalty makes a completion that stops early (an <eos> drawn by chance) earn more
    // than its group, so the group advantages are not all zero.
    const t = createGrpoTrainer(
      { policy: model(task.maxChars + 16), tokenizer, task, seed: 5 },
      {
        ...DEFAULT_GRPO_CONFIG,
        lengthPenalty: 0.2,
        lengthTarget: 1,
        groupSize: 8,
        promptsPerUpdate: 2,
        maxNewTokens: 12,
        lossAggregation: 'dr-grpo',
      },
    );
    const m = await t.update();
    // One iteration: ratio 1, so each trained token's loss is −A; the batch sum divided by
    // B · L_max with B = 16 rows and L_max = maxNewTokens = 12 (not the rows' width T).
    const sum = t.lastSamples
      .flatMap((s) => s.tokens.filter((k) => k.trained))
      .reduce((acc, k) => acc - k.advantage, 0);
    expect(Math.abs(sum)).toBeGreaterThan(1e-3);
    expect(m['actor/pg_loss']).toBeCloseTo(sum / (16 * 12), 5);
  });
});
