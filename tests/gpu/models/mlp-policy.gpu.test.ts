/**
 * The GPU actor-critic against its CPU twin (both f32, same initial parameters): forward logits
 * and values at a rollout batch (4) and a minibatch (128); three optimizer steps over actor and
 * critic together (gradient norm, clip scale, step count, updated joint parameters, and the
 * forward pass afterwards, which runs on the per-network copies); a non-finite gradient skipped on
 * both; a steady buffer pool; bad input rejected before any dispatch. Runs in Node (Dawn) only
 * (vite.config.ts says why).
 *
 * Tolerances as in mlp.gpu.test.ts (same kernels): outputs 1e-5 absolute; weights after 3 Adam
 * steps 2e-6 absolute (each step moves a weight by ≈ lr = 2.5e-4, so this is < 1% of a step).
 */
import { describe, expect, it } from 'vitest';
import {
  createCpuActorCritic,
  createGpuActorCritic,
  type GpuActorCritic,
} from '../../../src/models/mlp-policy';
import type { OptimizerConfig } from '../../../src/models/optimizer';
import { OpInputError } from '../../../src/ops/errors';
import { CartPole } from '../../../src/envs/cartpole';
import { createPpo } from '../../../src/rl/ppo';
import { DEFAULT_PPO_CONFIG } from '../../../src/rl/ppo-config';
import { testGpu } from '../../support/gpu';
import { maxAbsDiff, randomLogits } from '../../support/random';

const gpu = await testGpu();

/** CleanRL's optimizer: Adam lr 2.5e-4, eps 1e-5, no decay; clip 0.5 (active for these grads). */
const optimizer: OptimizerConfig = { lr: 2.5e-4, eps: 1e-5, weightDecay: 0, maxGradNorm: 0.5 };

describe.skipIf(!gpu)('actor-critic on the GPU vs the CPU twin', () => {
  const device = gpu!;

  it.each([4, 128])('forward matches (batch %i)', async (batch) => {
    const cpu = createCpuActorCritic(4, 2, 3);
    const model = createGpuActorCritic(device, 4, 2, 3);
    try {
      expect(await model.readParams()).toEqual(await cpu.readParams());
      const obs = randomLogits(batch * 4, 2, 4);
      const want = await cpu.forward(obs, batch);
      const got = await model.forward(obs, batch);
      expect(got.logits).toHaveLength(batch * 2);
      expect(got.values).toHaveLength(batch);
      expect(maxAbsDiff(got.logits, want.logits)).toBeLessThan(1e-5);
      expect(maxAbsDiff(got.values, want.values)).toBeLessThan(1e-5);
    } finally {
      model.dispose();
    }
  });

  it('three optimizer steps over both networks match the CPU', async () => {
    const cpu = createCpuActorCritic(4, 2, 11);
    const model = createGpuActorCritic(device, 4, 2, 11);
    const initial = await cpu.readParams();
    const batch = 64;
    try {
      for (let s = 0; s < 3; s++) {
        const obs = randomLogits(batch * 4, 2, 20 + s);
        const dLogits = randomLogits(batch * 2, 0.1, 30 + s);
        const dValues = randomLogits(batch, 0.5, 40 + s);
        // A rollout-sized forward in between: backward must use the last forward's activations.
        await model.forward(randomLogits(16, 1, 50 + s), 4);
        await cpu.forward(obs, batch);
        await model.forward(obs, batch);
        const want = await cpu.backward(dLogits, dValues, optimizer);
        const got = await model.backward(dLogits, dValues, optimizer);
        expect(want.clipScale).toBeLessThan(1);
        expect(got.applied).toBe(true);
        expect(got.step).toBe(s + 1);
        expect(got.gradNorm).toBeCloseTo(want.gradNorm, 4);
        expect(got.clipScale).toBeCloseTo(want.clipScale, 4);
      }
      const updated = await model.readParams();
      expect(maxAbsDiff(updated, initial)).toBeGreaterThan(5e-4);
      expect(maxAbsDiff(updated, await cpu.readParams())).toBeLessThan(2e-6);
      // The updated joint parameters were copied back into each network's own buffer.
      const obs = randomLogits(8 * 4, 2, 60);
      const want = await cpu.forward(obs, 8);
      const got = await model.forward(obs, 8);
      expect(maxAbsDiff(got.logits, want.logits)).toBeLessThan(1e-5);
      expect(maxAbsDiff(got.values, want.values)).toBeLessThan(1e-5);
    } finally {
      model.dispose();
    }
  });

  it('skips a step with a non-finite gradient, like the CPU', async () => {
    const model = createGpuActorCritic(device, 4, 2, 5);
    try {
      const before = await model.readParams();
      await model.forward(randomLogits(8, 1, 1), 2);
      const stats = await model.backward(
        new Float32Array([0.1, Infinity, 0.2, 0.3]),
        new Float32Array(2),
        optimizer,
      );
      expect(stats.applied).toBe(false);
      expect(stats.step).toBe(0);
      expect(await model.readParams()).toEqual(before);
    } finally {
      model.dispose();
    }
  });

  it('drives PPO updates as the CPU model does (same episodes, metrics within 1e-3, clipfrac 0.05)', async () => {
    // 2 envs × 16 steps, 2 minibatches, 2 epochs. The rollouts sample the same actions as long as
    // no uniform draw falls within ~1e-6 of a probability boundary; for this seed none does.
    const config = {
      ...DEFAULT_PPO_CONFIG,
      numEnvs: 2,
      numSteps: 16,
      numMinibatches: 2,
      updateEpochs: 2,
      totalTimesteps: 64,
    };
    const model = createGpuActorCritic(device, 4, 2, 1);
    try {
      const onGpu = createPpo(() => new CartPole(), config, 1, { model });
      const onCpu = createPpo(() => new CartPole(), config, 1);
      for (let u = 0; u < 2; u++) {
        const got = await onGpu.update();
        const want = await onCpu.update();
        expect(onGpu.lastEpisodes).toEqual(onCpu.lastEpisodes);
        expect(onGpu.lastRollout!.terminated).toEqual(onCpu.lastRollout!.terminated);
        for (const [name, value] of Object.entries(want)) {
          if (name === 'charts/SPS') continue;
          // A count over 64 samples: one ratio on the other side of 1 ± 0.2 moves it by 1/64.
          const tolerance = name === 'losses/clipfrac' ? 0.05 : 1e-3 * Math.max(1, Math.abs(value));
          expect(Math.abs(got[name]! - value), name).toBeLessThan(tolerance);
        }
      }
      expect(maxAbsDiff(await model.readParams(), await onCpu.model.readParams())).toBeLessThan(
        1e-5,
      );
    } finally {
      model.dispose();
    }
  });

  it('allocates nothing after the first step of a shape', async () => {
    const model = createGpuActorCritic(device, 4, 2, 1);
    const obs = randomLogits(32 * 4, 1, 2);
    const dLogits = randomLogits(64, 0.1, 3);
    const dValues = randomLogits(32, 0.1, 4);
    const step = async () => {
      await model.forward(obs.subarray(0, 16), 4);
      await model.forward(obs, 32);
      await model.backward(dLogits, dValues, optimizer);
    };
    try {
      await step();
      const first = device.pool.stats();
      for (let i = 0; i < 5; i++) await step();
      const after = device.pool.stats();
      expect(after.created).toBe(first.created);
      expect(after.inUse).toBe(first.inUse);
    } finally {
      model.dispose();
    }
  });

  it.each<[string, (model: GpuActorCritic) => Promise<unknown>, RegExp]>([
    [
      'backward before any forward',
      (model) => model.backward(new Float32Array(2), new Float32Array(1), optimizer),
      /backward needs a forward\(\) first/,
    ],
    [
      'dLogits of the wrong length',
      async (model) => {
        await model.forward(new Float32Array(12), 3);
        return model.backward(new Float32Array(5), new Float32Array(3), optimizer);
      },
      /dLogits must have batch × actions of the last forward = 6 elements, got 5/,
    ],
    [
      'obs of the wrong length',
      (model) => model.forward(new Float32Array(10), 3),
      /obs must have batch × inputs = 12 elements, got 10/,
    ],
  ])('rejects %s (OpInputError)', async (_, act, message) => {
    for (const expected of [OpInputError, message]) {
      const model = createGpuActorCritic(device, 4, 2, 1);
      try {
        await expect(act(model)).rejects.toThrow(expected);
      } finally {
        model.dispose();
      }
    }
  });
});
