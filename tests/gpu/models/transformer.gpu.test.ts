/**
 * The GPU transformer against its CPU twin: forward logits, backward gradients, whole training
 * steps (loss, optimizer stats, updated weights), KV-cache generation, the flat buffer pool, and
 * whole GRPO updates (their RL loss on the GPU: see also policy-step.gpu.test.ts).
 * Runs in Node (Dawn) only (vite.config.ts says why).
 *
 * Tolerances: every layer is f32 on both sides but sums in a different order (tiles, tree
 * reductions) and the GPU's exp/tanh differ from V8's in the last bits; relative errors of ~1e-6
 * per op compound through 2 blocks to ~1e-5 on logits of size ~1. Gradients are compared relative
 * to each tensor's largest entry.
 */
import { describe, expect, it, vi } from 'vitest';
import { additionTask } from '../../../src/envs/token-tasks/addition';
import { reverseTask } from '../../../src/envs/token-tasks/reverse';
import type { GenerateRequest } from '../../../src/models/generate';
import type { LanguageModel } from '../../../src/models/language-model';
import { CpuLanguageModel } from '../../../src/models/lm-cpu';
import { GpuLanguageModel } from '../../../src/models/lm-gpu';
import type { OptimizerConfig } from '../../../src/models/optimizer';
import type { ParamLayout } from '../../../src/models/param-layout';
import { CharTokenizer } from '../../../src/models/tokenizer';
import type { TransformerConfig } from '../../../src/models/transformer-config';
import { transformerBackward, transformerForward } from '../../../src/models/transformer-cpu';
import { TransformerGpu } from '../../../src/models/transformer-gpu';
import { transformerLayout } from '../../../src/models/transformer-params';
import { promptTokens } from '../../../src/agents/prompt-tokens';
import { createGrpoTrainer } from '../../../src/rl/grpo';
import { DEFAULT_GRPO_CONFIG } from '../../../src/rl/grpo-config';
import { packSequences } from '../../../src/models/sequence-batch';
import { testGpu } from '../../support/gpu';
import { maxAbsDiff, randomLogits, seededRandom } from '../../support/random';

const gpu = await testGpu();
const tokenizer = CharTokenizer.createDefault();

const small: TransformerConfig = {
  vocab: 23,
  context: 12,
  width: 32,
  layers: 2,
  heads: 4,
  tiedEmbeddings: false,
  valueHead: false,
};

function tokensFor(n: number, vocab: number, seed: number): Int32Array {
  const next = seededRandom(seed);
  return Int32Array.from({ length: n }, () => Math.floor(next() * vocab));
}

/** Initial weights plus noise (gains ≠ 1, biases ≠ 0), f32. */
function noisyParams(config: TransformerConfig, seed: number): Float32Array {
  const layout = transformerLayout(config);
  const params = layout.initialize<Float32Array>(seed);
  const noise = randomLogits(layout.total, 0.2, seed + 1);
  for (const e of layout.entries) {
    for (let i = e.offset; i < e.offset + e.size; i++) params[i]! += noise[i]!;
  }
  return params;
}

/** max |a − b| per tensor, relative to the tensor's largest |b|; returns the worst tensor. */
function worstTensor(layout: ParamLayout, a: Float32Array, b: Float32Array) {
  let worst = { name: '', rel: 0 };
  for (const e of layout.entries) {
    const x = a.subarray(e.offset, e.offset + e.size);
    const y = b.subarray(e.offset, e.offset + e.size);
    const scale = Math.max(1e-6, ...Array.from(y, Math.abs));
    const rel = maxAbsDiff(x, y) / scale;
    if (!(rel <= worst.rel)) worst = { name: e.name, rel };
  }
  return worst;
}

describe.skipIf(!gpu)('transformer on the GPU vs the CPU twin', () => {
  const device = gpu!;

  it.each([
    ['untied', small],
    [
      'tied + value head, 1 layer, 8 heads',
      { ...small, tiedEmbeddings: true, valueHead: true, layers: 1, heads: 8 },
    ],
    ['rotary positions', { ...small, positions: 'rotary' } as TransformerConfig],
    [
      'rotary, base 1e6, tied + value head',
      { ...small, positions: 'rotary', rotaryBase: 1e6, tiedEmbeddings: true, valueHead: true },
    ] as [string, TransformerConfig],
  ])('forward and backward match (%s)', async (_, config) => {
    const layout = transformerLayout(config);
    const params = noisyParams(config, 3);
    const [batch, seq] = [3, 9];
    const tokens = tokensFor(batch * seq, config.vocab, 4);
    const cpu = transformerForward(config, layout, params, tokens, batch, seq);
    const dlogits = randomLogits(batch * seq * config.vocab, 1, 5);
    const dvalues = config.valueHead ? randomLogits(batch * seq, 1, 6) : undefined;
    const cpuGrads = transformerBackward(config, layout, params, cpu.acts, dlogits, dvalues);

    const model = new TransformerGpu(device, config, params);
    try {
      const ws = model.writeTokens(tokens, batch, seq);
      const dl = device.upload(dlogits, 'dlogits');
      const dv = dvalues && device.upload(dvalues, 'dvalues');
      const pass = device.beginBatch('fwd+bwd');
      await model.encodeForward(pass, ws);
      await model.encodeBackward(pass, ws, dl, dv);
      pass.submit();
      const logits = await device.readF32(ws.logits, batch * seq * config.vocab);
      expect(maxAbsDiff(logits, cpu.logits)).toBeLessThan(5e-5);
      if (cpu.values) {
        const values = await device.readF32(ws.values!, batch * seq);
        expect(maxAbsDiff(values, cpu.values)).toBeLessThan(5e-5);
      }
      const worst = worstTensor(layout, await model.readGrads(), cpuGrads);
      expect(worst.rel, worst.name).toBeLessThan(2e-4);
      device.pool.release(dl);
      if (dv) device.pool.release(dv);
    } finally {
      model.release();
    }
  });

  it('a training step matches: loss, grad norm, clip scale and updated weights, 3 steps', async () => {
    const config = { ...small, vocab: tokenizer.vocabSize, context: 14, tiedEmbeddings: true };
    const params = transformerLayout(config).initialize<Float32Array>(11);
    const cpu = new CpuLanguageModel(config, params);
    const gpuModel = new GpuLanguageModel(device, config, params);
    // maxGradNorm small enough that clipping is active, so the scale path is compared too.
    const optimizer: OptimizerConfig = { lr: 1e-2, weightDecay: 0.1, maxGradNorm: 0.5 };
    const task = reverseTask();
    const random = seededRandom(2);
    try {
      for (let step = 0; step < 3; step++) {
        const pairs = Array.from({ length: 4 }, () => {
          const s = task.sample(random);
          return { prompt: s.prompt, completion: s.answer };
        });
        const batch = packSequences(tokenizer, pairs, config.context);
        await cpu.trainCrossEntropy(batch, optimizer);
        await gpuModel.trainCrossEntropy(batch, optimizer);
      }
      const [a, b] = [await cpu.takeMetrics(), await gpuModel.takeMetrics()];
      expect(b.map((m) => m.step)).toEqual([1, 2, 3]);
      a.forEach((m, i) => {
        expect(b[i]!.applied).toBe(true);
        expect(b[i]!.loss).toBeCloseTo(m.loss, 4);
        expect(b[i]!.gradNorm).toBeCloseTo(m.gradNorm, 4);
        expect(b[i]!.clipScale).toBeCloseTo(m.clipScale, 4);
        expect(m.clipScale).toBeLessThan(1);
      });
      const layout = transformerLayout(config);
      const [pc, pg] = [await cpu.readParams(), await gpuModel.readParams()];
      // Adam divides by √v: an update of size lr, so weights agree to ~lr · (relative error).
      expect(maxAbsDiff(pg, pc)).toBeLessThan(2e-4);
      expect(maxAbsDiff(pg, params)).toBeGreaterThan(1e-3); // they did move
      const [oc, og] = [await cpu.readOptimizer(), await gpuModel.readOptimizer()];
      expect(og.stats[3]).toBe(3);
      const worst = worstTensor(layout, og.m, oc.m);
      expect(worst.rel, worst.name).toBeLessThan(1e-3);
    } finally {
      gpuModel.dispose();
    }
  });

  it('skips a step whose gradient is not finite and leaves the weights untouched', async () => {
    const config = { ...small, vocab: tokenizer.vocabSize, context: 14 };
    const params = transformerLayout(config).initialize<Float32Array>(1);
    const layout = transformerLayout(config);
    params[layout.entry('lm_head.w').offset] = NaN;
    const model = new GpuLanguageModel(device, config, params);
    try {
      const batch = packSequences(tokenizer, [{ prompt: 'ab=', completion: 'ba' }], 14);
      await model.trainCrossEntropy(batch, { lr: 1e-2, maxGradNorm: 1 });
      const [m] = await model.takeMetrics();
      expect(m!.applied).toBe(false);
      expect(m!.step).toBe(0);
      const after = await model.readParams();
      after[layout.entry('lm_head.w').offset] = 0;
      params[layout.entry('lm_head.w').offset] = 0;
      expect(maxAbsDiff(after, params)).toBe(0);
    } finally {
      model.dispose();
    }
  });

  it.each<[string, Partial<TransformerConfig>]>([
    ['learned positions', {}],
    ['rotary positions', { positions: 'rotary' }],
  ])(
    'generates the same tokens as the CPU twin: greedy, and seeded sampling with top-k/top-p (%s)',
    async (_, positions) => {
      const config: TransformerConfig = {
        ...small,
        vocab: tokenizer.vocabSize,
        context: 16,
        tiedEmbeddings: true,
        ...positions,
      };
      const params = noisyParams(config, 21);
      const cpu = new CpuLanguageModel(config, params);
      const model = new GpuLanguageModel(device, config, params);
      const random = seededRandom(5);
      const task = reverseTask();
      const base: GenerateRequest = {
        prompts: Array.from({ length: 5 }, () => promptTokens(tokenizer, task.sample(random))),
        maxLength: 16,
        maxNewTokens: 9,
        stopTokens: [tokenizer.eos],
        padToken: tokenizer.pad,
        sampling: { temperature: 0 },
        seed: 3,
      };
      try {
        for (const sampling of [{ temperature: 0 }, { temperature: 1.3, topK: 20, topP: 0.9 }]) {
          const request = { ...base, sampling };
          const [a, b] = [await cpu.generate(request), await model.generate(request)];
          expect([...b.tokens]).toEqual([...a.tokens]);
          expect([...b.mask]).toEqual([...a.mask]);
          expect(maxAbsDiff(b.logprobs, a.logprobs)).toBeLessThan(1e-4);
          expect(a.mask.reduce((s, x) => s + x, 0)).toBeGreaterThan(5);
        }
      } finally {
        model.dispose();
      }
    },
  );

  it('a GRPO update (its loss on the GPU, as kernels) matches the CPU backend', async () => {
    const config = { ...small, vocab: tokenizer.vocabSize, context: 16, tiedEmbeddings: true };
    const params = noisyParams(config, 31);
    const task = reverseTask();
    const grpo = {
      ...DEFAULT_GRPO_CONFIG,
      groupSize: 4,
      promptsPerUpdate: 3,
      maxNewTokens: 6,
      klCoef: 0.1,
      entropyCoef: 0.01,
    };
    const make = (policy: LanguageModel, reference: LanguageModel) =>
      createGrpoTrainer({ policy, reference, tokenizer, task, seed: 4 }, grpo);
    const cpu = new CpuLanguageModel(config, params);
    const policy = new GpuLanguageModel(device, config, params);
    const reference = new GpuLanguageModel(device, config, params);
    const hostLoss = vi.spyOn(policy, 'backwardFromLogp');
    try {
      const a = await make(cpu, new CpuLanguageModel(config, params)).update();
      const b = await make(policy, reference).update();
      expect(hostLoss).not.toHaveBeenCalled();
      expect(b['reward/mean']).toBe(a['reward/mean']);
      expect(b['response_length/mean']).toBe(a['response_length/mean']);
      for (const key of ['actor/pg_loss', 'actor/entropy', 'actor/kl_loss', 'actor/grad_norm']) {
        expect(b[key], key).toBeCloseTo(a[key]!, 4);
      }
      expect(maxAbsDiff(await policy.readParams(), await cpu.readParams())).toBeLessThan(1e-4);
    } finally {
      policy.dispose();
      reference.dispose();
    }
  });

  it('a GRPO update with the ptx term (demonstration rows joined to the batch) matches the CPU', async () => {
    const retained = additionTask({ minDigits: 1, maxDigits: 1 });
    const task = reverseTask({ minLength: 2, maxLength: 3 });
    const config = { ...small, vocab: tokenizer.vocabSize, context: 16, tiedEmbeddings: true };
    const params = noisyParams(config, 37);
    const grpo = {
      ...DEFAULT_GRPO_CONFIG,
      groupSize: 2,
      promptsPerUpdate: 3,
      maxNewTokens: 4,
      ptxCoef: 0.7,
      ptxBatch: 5,
      retainedEvalPrompts: 4,
    };
    const make = (policy: LanguageModel) =>
      createGrpoTrainer({ policy, tokenizer, task, seed: 6, retained }, grpo);
    const cpu = new CpuLanguageModel(config, params);
    const policy = new GpuLanguageModel(device, config, params);
    try {
      const a = await make(cpu).update();
      const b = await make(policy).update();
      expect(b['reward/mean']).toBe(a['reward/mean']);
      expect(b['retained/success_rate']).toBe(a['retained/success_rate']);
      expect(Number.isFinite(a['actor/ptx_loss'])).toBe(true);
      for (const key of ['actor/pg_loss', 'actor/ptx_loss', 'actor/grad_norm']) {
        expect(b[key], key).toBeCloseTo(a[key]!, 4);
      }
      expect(maxAbsDiff(await policy.readParams(), await cpu.readParams())).toBeLessThan(1e-4);
    } finally {
      policy.dispose();
    }
  });
});
