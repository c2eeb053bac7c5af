/**
 * The GPU MLP against its CPU twin (f32): forward outputs and backward gradients for CleanRL's
 * CartPole actor (4 → 64 → 64 → 2) and critic (4 → 64 → 64 → 1) at batch 1, 7 and 512, odd widths
 * with relu and gelu, a full optimizer step (grad norm, clipping, AdamW) on updated weights, a
 * steady buffer pool, and bad input. Runs in Node only.
 *
 * Tolerances: both sides are f32 but sum in a different order (64 × 64 matmul tiles, tree column
 * sums) and WGSL's tanh/exp may differ from V8's by more than an ulp on a hardware GPU (the spec
 * allows tanh an error inherited from sinh/cosh): ~1e-7 relative per op, compounding over 3 layers.
 * Measured on SwiftShader: outputs ≤ 4e-7 absolute (bound 1e-5), gradients ≤ 1e-6 relative to each
 * tensor's largest entry (bound 1e-4; they sum over up to 512 rows), weights after 3 AdamW steps
 * ≤ 2e-7 absolute (bound 2e-6).
 */
import { describe, expect, it } from 'vitest';
import { mlpBackward, mlpForward } from '../../../src/models/mlp-cpu';
import { MlpGpu } from '../../../src/models/mlp-gpu';
import {
  type MlpConfig,
  initMlp,
  mlpLayout,
  ppoActorConfig,
  ppoCriticConfig,
} from '../../../src/models/mlp-params';
import {
  CpuOptimizerState,
  type OptimizerConfig,
  optimizerStepCpu,
  readStats,
} from '../../../src/models/optimizer';
import { encodeOptimizerStep, GpuOptimizerState } from '../../../src/models/optimizer-gpu';
import type { ParamLayout } from '../../../src/models/param-layout';
import { OpInputError } from '../../../src/ops/errors';
import { testGpu } from '../../support/gpu';
import { maxAbsDiff, randomLogits } from '../../support/random';

const gpu = await testGpu();

/** CleanRL's init plus noise on every tensor, so biases ≠ 0 and the actor's head is not ~0. */
function noisyParams(config: MlpConfig, seed: number): Float32Array {
  const layout = mlpLayout(config);
  const params = initMlp(config, seed);
  const noise = randomLogits(layout.total, 0.1, seed + 1);
  for (const e of layout.entries) {
    for (let i = e.offset; i < e.offset + e.size; i++) params[i]! += noise[i]!;
  }
  return params;
}

/** max |a − b| per tensor, relative to the tensor's largest |b|; the worst tensor. */
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

/**
 * `data` in a pooled buffer at a 256-byte-aligned non-zero offset, as a slice: the model must take
 * dout from any BufferRef (e.g. a region of a loss kernel's output).
 */
function uploadAsSlice(device: NonNullable<typeof gpu>, data: Float32Array) {
  const padded = new Float32Array(64 + data.length + 64).fill(NaN);
  padded.set(data, 64);
  const buffer = device.upload(padded, 'dout host');
  return { buffer, offset: 256, size: data.byteLength };
}

const odd: MlpConfig = {
  inputs: 5,
  hidden: [33, 70, 17],
  outputs: 3,
  activation: 'relu',
  outputGain: 1,
};

describe.skipIf(!gpu)('MLP on the GPU vs the CPU twin', () => {
  const device = gpu!;

  it.each<[string, MlpConfig, number]>([
    ['actor, batch 1', ppoActorConfig(4, 2), 1],
    ['actor, batch 7', ppoActorConfig(4, 2), 7],
    ['actor, batch 512', ppoActorConfig(4, 2), 512],
    ['critic, batch 1', ppoCriticConfig(4), 1],
    ['critic, batch 7', ppoCriticConfig(4), 7],
    ['critic, batch 512', ppoCriticConfig(4), 512],
    ['relu 5 → [33, 70, 17] → 3, batch 7', odd, 7],
    ['gelu 5 → [33, 70, 17] → 3, batch 65', { ...odd, activation: 'gelu' }, 65],
  ])('forward and backward match (%s)', async (_, config, batch) => {
    const layout = mlpLayout(config);
    const params = noisyParams(config, 3);
    const obs = randomLogits(batch * config.inputs, 2, 4);
    const cpu = mlpForward(config, layout, params, obs, batch);
    const dout = randomLogits(batch * config.outputs, 1, 5);
    const cpuGrads = mlpBackward(config, layout, params, cpu.acts, dout);

    const model = new MlpGpu(device, config, params);
    const doutRef = uploadAsSlice(device, dout);
    try {
      const ws = model.writeObservations(obs, batch);
      const step = device.beginBatch('mlp fwd+bwd');
      await model.encodeForward(step, ws);
      await model.encodeBackward(step, ws, doutRef);
      step.submit();
      const out = await device.readF32(ws.out, batch * config.outputs);
      expect(maxAbsDiff(out, cpu.out)).toBeLessThan(1e-5);
      const grads = await model.readGrads();
      const worst = worstTensor(layout, grads, cpuGrads);
      expect(worst.rel, worst.name).toBeLessThan(1e-4);
      // Padding reads zero (the grad norm sums the whole buffer).
      const used = new Uint8Array(layout.total);
      for (const e of layout.entries) used.fill(1, e.offset, e.offset + e.size);
      expect(grads.every((g, i) => used[i] || g === 0)).toBe(true);
    } finally {
      device.pool.release(doutRef.buffer);
      model.release();
    }
  });

  it('a full optimizer step (clip + AdamW) matches optimizerStepCpu, 3 steps', async () => {
    const config = ppoActorConfig(4, 2);
    const layout = mlpLayout(config);
    const initial = noisyParams(config, 11);
    const batch = 64;
    // CleanRL: Adam lr 2.5e-4, eps 1e-5, max_grad_norm 0.5 (small enough that clipping is active);
    // decay 0.01 so the decayed and undecayed ranges differ.
    const optimizer: OptimizerConfig = {
      lr: 2.5e-4,
      eps: 1e-5,
      weightDecay: 0.01,
      maxGradNorm: 0.5,
    };
    const cpuParams = initial.slice();
    const cpuState = new CpuOptimizerState(cpuParams);
    const model = new MlpGpu(device, config, initial);
    const state = new GpuOptimizerState(device, layout);
    const douts: { buffer: GPUBuffer }[] = [];
    try {
      for (let s = 0; s < 3; s++) {
        const obs = randomLogits(batch * config.inputs, 2, 20 + s);
        const dout = randomLogits(batch * config.outputs, 1, 30 + s);
        const cpu = mlpForward(config, layout, cpuParams, obs, batch);
        const grads = mlpBackward(config, layout, cpuParams, cpu.acts, dout);
        const cpuStats = optimizerStepCpu(layout, cpuParams, grads, cpuState, optimizer);
        expect(cpuStats.clipScale).toBeLessThan(1);

        const ws = model.writeObservations(obs, batch);
        const doutBuffer = device.upload(dout, 'dout');
        douts.push({ buffer: doutBuffer });
        const step = device.beginBatch('mlp train step');
        await model.encodeForward(step, ws);
        await model.encodeBackward(step, ws, doutBuffer);
        await encodeOptimizerStep(
          device,
          step,
          { params: model.params, grads: model.grads },
          state,
          optimizer,
        );
        step.submit();
        const gpuStats = readStats(await device.readF32(state.stats, 4));
        expect(gpuStats.applied).toBe(true);
        expect(gpuStats.step).toBe(s + 1);
        expect(gpuStats.gradNorm).toBeCloseTo(cpuStats.gradNorm, 4);
        expect(gpuStats.clipScale).toBeCloseTo(cpuStats.clipScale, 4);
      }
      const updated = await model.readParams();
      // Adam moves each weight by ~lr per step: 3 steps move up to 7.5e-4; the twins agree to a
      // small fraction of that (the update's direction m/√v carries the gradients' f32 error).
      expect(maxAbsDiff(updated, initial)).toBeGreaterThan(5e-4);
      expect(maxAbsDiff(updated, cpuParams)).toBeLessThan(2e-6);
    } finally {
      for (const { buffer } of douts) device.pool.release(buffer);
      state.release();
      model.release();
    }
  });

  it('allocates nothing after the first step of a shape', async () => {
    const config = ppoCriticConfig(4);
    const model = new MlpGpu(device, config, initMlp(config, 1));
    const obs = randomLogits(16 * 4, 1, 1);
    const dout = device.upload(randomLogits(16, 1, 2), 'dout');
    const run = async () => {
      const ws = model.writeObservations(obs, 16);
      const step = device.beginBatch('mlp step');
      await model.encodeForward(step, ws);
      await model.encodeBackward(step, ws, dout);
      step.submit();
    };
    try {
      await run();
      await model.readGrads();
      const after1 = device.pool.stats();
      for (let i = 0; i < 20; i++) await run();
      await model.readGrads();
      const after = device.pool.stats();
      expect(after.created).toBe(after1.created);
      expect(after.inUse).toBe(after1.inUse);
    } finally {
      device.pool.release(dout);
      model.release();
    }
  });

  it('rejects a bad config, parameters and observations before any dispatch', () => {
    const config = ppoActorConfig(4, 2);
    const params = initMlp(config, 1);
    expect(() => new MlpGpu(device, { ...config, hidden: [64, 2000] }, params)).toThrow(
      OpInputError,
    );
    expect(() => new MlpGpu(device, { ...config, hidden: [64, 2000] }, params)).toThrow(
      /hidden\[1\] must be an integer in \[1, 1024\], got 2000/,
    );
    expect(() => new MlpGpu(device, config, params.subarray(1))).toThrow(/params must have/);
    const model = new MlpGpu(device, config, params);
    try {
      expect(() => model.writeObservations(new Float32Array(10), 3)).toThrow(
        /obs must have batch × inputs = 12 elements, got 10/,
      );
      expect(() => model.workspaceFor(0)).toThrow(/batch must be an integer/);
    } finally {
      model.release();
    }
  });
});
