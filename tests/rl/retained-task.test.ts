/**
 * The retained task (src/rl/retained-task.ts): the ptx term's rows (its gradient is in
 * tests/rl/policy-step.test.ts), the rules that need a retained task, and — on the CPU
 * trainers — that the ptx term is the supervised step it
 * claims to be, that it keeps a task the RL update would otherwise not train, and that
 * retained/success_rate reads the retained task's greedy success.
 */
import { describe, expect, it } from 'vitest';
import { additionTask } from '../../src/envs/token-tasks/addition';
import { multiplyTask } from '../../src/agents/tasks/multiply';
import { shoppingTask } from '../../src/agents/tasks/shopping';
import { copyTask } from '../../src/envs/token-tasks/copy';
import { CpuLanguageModel } from '../../src/models/lm-cpu';
import { CharTokenizer } from '../../src/models/tokenizer';
import type { TransformerConfig } from '../../src/models/transformer-config';
import { transformerLayout } from '../../src/models/transformer-params';
import { OpInputError } from '../../src/ops/errors';
import { evaluateTask } from '../../src/rl/evaluate';
import { createGrpoTrainer } from '../../src/rl/grpo';
import { DEFAULT_GRPO_CONFIG, type GrpoConfig } from '../../src/rl/grpo-config';
import { createPpoLmTrainer, DEFAULT_PPO_LM_CONFIG } from '../../src/rl/ppo-lm';
import {
  checkRetained,
  DEFAULT_RETAINED_CONFIG,
  mixPtx,
  ptxDemonstrations,
  retainedRowLength,
} from '../../src/rl/retained-task';
import { rolloutLength } from '../../src/rl/token-rollout';

const tokenizer = CharTokenizer.createDefault();
// Trained on copy; addition is the retained task (digits, '+': prompts copy never makes).
const task = copyTask({ minLength: 2, maxLength: 3, alphabet: 'abc' });
const retained = additionTask({ minDigits: 1, maxDigits: 1 });
const config: TransformerConfig = {
  vocab: tokenizer.vocabSize,
  context: Math.max(task.maxChars, retained.maxChars) + 2,
  width: 32,
  layers: 1,
  heads: 4,
  tiedEmbeddings: true,
  valueHead: true,
};
const small: GrpoConfig = {
  ...DEFAULT_GRPO_CONFIG,
  groupSize: 4,
  promptsPerUpdate: 4,
  maxNewTokens: 4,
  lr: 3e-3,
};

describe('mixPtx', () => {
  const rl = { tokens: new Int32Array(2 * 9).fill(7), targets: new Int32Array(2 * 9), rows: 2 };
  const at = { seed: 3, step: 4, key: 0 };
  const on = { ...DEFAULT_RETAINED_CONFIG, ptxCoef: 0.5, ptxBatch: 3 };

  it('is off without a retained task or at ptxCoef 0', () => {
    expect(mixPtx(undefined, tokenizer, on, { ...rl, seq: 9 }, at)).toBeUndefined();
    const off = { ...on, ptxCoef: 0 };
    expect(mixPtx(retained, tokenizer, off, { ...rl, seq: 9 }, at)).toBeUndefined();
  });

  it('appends the demonstrations after the RL rows, with their answer mask', () => {
    const seq = retainedRowLength(retained);
    const mix = mixPtx(retained, tokenizer, on, { ...rl, seq }, at)!;
    const demos = ptxDemonstrations(retained, tokenizer, 3, seq, at);
    expect(mix.rows).toBe(5);
    expect(Array.from(mix.tokens.subarray(0, 2 * seq))).toEqual(Array(2 * seq).fill(7));
    expect(Array.from(mix.tokens.subarray(2 * seq))).toEqual(Array.from(demos.tokens));
    expect(Array.from(mix.targets.subarray(2 * seq))).toEqual(Array.from(demos.targets));

    expect(Array.from(mix.mask)).toEqual(Array.from(demos.mask));
    expect(mix.mask.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
  });

  it('draws the same demonstrations for the same (seed, update, step) and others elsewhere', () => {
    const seq = retainedRowLength(retained);
    const a = ptxDemonstrations(retained, tokenizer, 4, seq, at);
    const b = ptxDemonstrations(retained, tokenizer, 4, seq, at);
    const c = ptxDemonstrations(retained, tokenizer, 4, seq, { ...at, key: 1 });
    expect(Array.from(b.tokens)).toEqual(Array.from(a.tokens));
    expect(Array.from(c.tokens)).not.toEqual(Array.from(a.tokens));
  });
});

describe('checkRetained', () => {
  it('refuses ptxCoef or retainedEvalPrompts without a retained task, naming the field', () => {
    for (const field of ['ptxCoef', 'retainedEvalPrompts'] as const) {
      const bad = { ...DEFAULT_RETAINED_CONFIG, [field]: 1 };
      expect(() => checkRetained(bad, undefined, 64, 'grpo')).toThrow(
        new OpInputError('grpo', field, 'needs a retained task in the run (none was given)'),
      );
    }
    expect(() => checkRetained(DEFAULT_RETAINED_CONFIG, undefined, 64, 'grpo')).not.toThrow();
  });

  it("refuses a retained task whose rows do not fit the model's context", () => {
    const need = retainedRowLength(retained);
    expect(() => checkRetained(DEFAULT_RETAINED_CONFIG, retained, need - 1, 'ppo')).toThrow(
      /ppo: retained .* needs rows of \d+ tokens, the model's context is/,
    );
    expect(() => checkRetained(DEFAULT_RETAINED_CONFIG, retained, need, 'ppo')).not.toThrow();
  });

  it('is enforced by the trainers at creation and on a live change', () => {
    const model = new CpuLanguageModel(
      config,
      transformerLayout(config).initialize<Float32Array>(1),
    );
    expect(() =>
      createGrpoTrainer({ policy: model, tokenizer, task, seed: 1 }, { ...small, ptxCoef: 1 }),
    ).toThrow(/ptxCoef/);
    const t = createPpoLmTrainer(
      { policy: model, tokenizer, task, seed: 1 },
      { ...DEFAULT_PPO_LM_CONFIG, promptsPerUpdate: 4, minibatches: 2 },
    );
    expect(() => t.setHyperparams({ retainedEvalPrompts: 8 })).toThrow(/retainedEvalPrompts/);
  });
});

describe('the ptx term in the trainers (CPU)', () => {
  it('is one supervised step on its demonstrations when the RL advantages are all 0', async () => {
    // A fresh policy never copies right, so every group's rewards are equal (all 0) and the
    // clipped surrogate's gradient is exactly 0: the update is the ptx term alone. At temperature
    // 1 and ptxCoef 1 that is SFT's own step on the same demonstrations.
    const start = transformerLayout(config).initialize<Float32Array>(2);
    const cfg: GrpoConfig = { ...small, temperature: 1, ptxCoef: 1, ptxBatch: 6 };
    const policy = new CpuLanguageModel(config, start.slice());
    const t = createGrpoTrainer({ policy, tokenizer, task, seed: 9, retained }, cfg);
    const m = await t.update();
    expect(m['reward/mean']).toBe(0);
    expect(m['frac_reward_zero_std']).toBe(1);
    expect(Number.isFinite(m['actor/ptx_loss'])).toBe(true);

    const T =
      Math.max(
        rolloutLength(config.context, task, cfg.maxNewTokens, tokenizer),
        retainedRowLength(retained),
      ) - 1;
    const demos = ptxDemonstrations(retained, tokenizer, 6, T, { seed: 9, step: 0, key: 0 });
    const sft = new CpuLanguageModel(config, start.slice());
    await sft.trainCrossEntropy(demos, {
      lr: cfg.lr,
      beta1: 0.9,
      beta2: 0.999,
      eps: 1e-8,
      weightDecay: cfg.weightDecay,
      maxGradNorm: cfg.maxGradNorm,
    });
    const [a, b] = [await policy.readParams(), await sft.readParams()];
    let moved = 0;
    let worst = 0;
    for (let i = 0; i < a.length; i++) {
      moved = Math.max(moved, Math.abs(a[i]! - start[i]!));
      worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
    }
    expect(moved).toBeGreaterThan(1e-4); // the step did move the weights…
    expect(worst).toBeLessThan(1e-6); // …exactly as SFT's step does
  });

  it('teaches the retained task while RL trains on another; without it nothing does', async () => {
    const run = async (ptxCoef: number) => {
      const policy = new CpuLanguageModel(
        config,
        transformerLayout(config).initialize<Float32Array>(3),
      );
      const cfg = { ...small, ptxCoef, ptxBatch: 16, retainedEvalPrompts: 4 };
      const t = createGrpoTrainer({ policy, tokenizer, task, seed: 4, retained }, cfg);
      const losses: number[] = [];
      for (let i = 0; i < 12; i++) {
        const m = await t.update();
        expect(m['retained/success_rate']).toBeGreaterThanOrEqual(0);
        expect(m['retained/success_rate']).toBeLessThanOrEqual(1);
        if (ptxCoef > 0) losses.push(m['actor/ptx_loss']!);
        else expect(m['actor/ptx_loss']).toBeUndefined();
      }
      return { policy, losses };
    };
    const withPtx = await run(1);
    // The supervised loss on fresh demonstrations falls by a third or more in 12 steps.
    expect(withPtx.losses.at(-1)!).toBeLessThan(withPtx.losses[0]! * 0.67);
    const without = await run(0);
    const nll = async (policy: CpuLanguageModel) => {
      const demos = ptxDemonstrations(retained, tokenizer, 32, config.context - 1, {
        seed: 77,
        step: 0,
        key: 0,
      });
      const { logp } = await policy.scoreTokens(
        demos.tokens,
        demos.targets,
        demos.batch,
        demos.seq,
        1,
      );
      let sum = 0;
      let count = 0;
      demos.mask.forEach((m, i) => {
        sum -= m * logp[i]!;
        count += m;
      });
      return sum / count;
    };
    expect(await nll(withPtx.policy)).toBeLessThan((await nll(without.policy)) - 0.5);
  });

  it('a retained task with ptx and its check off changes nothing, though its rows are wider', async () => {
    // An agent task, whose token-sum normalization is the row's width: shopping's episodes need
    // 122 positions, multiply's rollout rows 63, so the batch is widened to hold them.
    const agent = multiplyTask({ minDigits: 1, maxDigits: 1 });
    const wide = shoppingTask({ items: 1, maxQuantity: 1 });
    const cfgModel = { ...config, context: retainedRowLength(wide) };
    expect(retainedRowLength(wide)).toBeGreaterThan(
      rolloutLength(cfgModel.context, agent, 4, tokenizer),
    );
    const run = async (withRetained: boolean) => {
      const start = transformerLayout(cfgModel).initialize<Float32Array>(8);
      const policy = new CpuLanguageModel(cfgModel, start);
      const t = createGrpoTrainer(
        { policy, tokenizer, task: agent, seed: 8, ...(withRetained ? { retained: wide } : {}) },
        { ...small, lossAggregation: 'seq-mean-token-sum-norm' },
      );
      // Every metric but the wall-clock ones (perf/tokens_per_s).
      const timeless = (m: Record<string, number>) =>
        Object.fromEntries(Object.entries(m).filter(([k]) => k !== 'perf/tokens_per_s'));
      const metrics = [timeless(await t.update()), timeless(await t.update())];
      return { metrics, params: await policy.readParams() };
    };
    const [plain, kept] = [await run(false), await run(true)];
    expect(kept.metrics).toEqual(plain.metrics);
    expect(Array.from(kept.params)).toEqual(Array.from(plain.params));
  });

  it('reports retained/success_rate as the greedy success on the same fixed prompts', async () => {
    const params = transformerLayout(config).initialize<Float32Array>(5);
    const policy = new CpuLanguageModel(config, params);
    const cfg = { ...small, lr: 1e-12, retainedEvalPrompts: 16 };
    const t = createGrpoTrainer({ policy, tokenizer, task, seed: 5, retained }, cfg);
    const m = await t.update();
    // lr 1e-12 leaves the weights all but unchanged: the metric is the policy's own evaluation.
    const own = await evaluateTask(policy, tokenizer, retained, {
      samples: 16,
      seed: 20_261_203,
    });
    expect(m['retained/success_rate']).toBe(own.successRate);
  });

  it('PPO mixes the demonstrations into every minibatch step', async () => {
    const policy = new CpuLanguageModel(
      config,
      transformerLayout(config).initialize<Float32Array>(6),
    );
    const t = createPpoLmTrainer(
      { policy, tokenizer, task, seed: 6, retained },
      {
        ...DEFAULT_PPO_LM_CONFIG,
        promptsPerUpdate: 4,
        minibatches: 2,
        epochs: 2,
        maxNewTokens: 4,
        ptxCoef: 1,
        ptxBatch: 8,
      },
    );
    const first = await t.update();
    for (let i = 0; i < 5; i++) await t.update();
    const last = await t.update();
    expect(Number.isFinite(first['actor/ptx_loss'])).toBe(true);
    expect(last['actor/ptx_loss']!).toBeLessThan(first['actor/ptx_loss']!);
  });
});
