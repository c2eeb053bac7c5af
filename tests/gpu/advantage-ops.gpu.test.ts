/**
 * The trainers' advantage ops on a WebGPU model's backend (src/rl/advantage-ops.ts): every op of
 * the facade, called the way GRPO and PPO call it, gives the CPU reference's numbers; and a model
 * chooses the set of its own backend. Runs in Node (Dawn) and in Chromium.
 */
import { describe, expect, it } from 'vitest';
import { CpuLanguageModel } from '../../src/models/lm-cpu';
import { GpuLanguageModel } from '../../src/models/lm-gpu';
import {
  advantageOps,
  CPU_ADVANTAGE_OPS,
  gpuAdvantageOps,
  type AdvantageOps,
} from '../../src/rl/advantage-ops';
import { testGpu } from '../support/gpu';
import { stepConfig, stepParams } from '../support/policy-step-fixture';
import { maxAbsDiff, seededRandom } from '../support/random';

const gpu = await testGpu();

const G = 4;
const B = 12; // 3 groups
const T = 9;

/** A GRPO-like batch: 0/1 scores on each row's last token (one group all equal), a mask. */
function batch() {
  const next = seededRandom(5);
  const mask = new Float32Array(B * T);
  const rewards = new Float32Array(B * T);
  const values = Float32Array.from({ length: B * T }, () => next() - 0.5);
  const logp = Float32Array.from({ length: B * T }, () => -next() * 3);
  const refLogp = logp.map((x) => x + (next() - 0.5) * 0.4);
  for (let r = 0; r < B; r++) {
    const start = 2 + Math.floor(next() * 4);
    for (let t = start; t < T; t++) mask[r * T + t] = 1;
    rewards[r * T + T - 1] = r < G ? 1 : next() < 0.5 ? 1 : 0;
  }
  return { mask, rewards, values, logp, refLogp };
}

/** Every op, as the trainers call them; the arrays each returns, by name. */
async function runAll(ops: AdvantageOps): Promise<Record<string, Float32Array | number>> {
  const { mask, rewards, values, logp, refLogp } = batch();
  const scores = await ops.sumOverTokens(rewards, B, T);
  const grouped = await ops.groupAdvantages(scores, G, { stdNormalization: 'group' });
  const rloo = await ops.rlooAdvantages(scores, G);
  const kl = await ops.perTokenKl(logp, refLogp, mask, B, T, { estimator: 'k3' });
  const penalized = await ops.klRewardPenalty(rewards, kl.kl, mask, B, T, 0.05);
  const gae = await ops.gae({ rewards: penalized.rewards, values, mask }, B, T, {
    gamma: 1,
    lambda: 0.95,
  });
  return {
    scores,
    grouped: grouped.advantages,
    fracZeroStd: grouped.stats.fracRewardZeroStd,
    rloo: rloo.advantages,
    tokens: await ops.broadcastToTokens(grouped.advantages, mask, B, T),
    rpp: (await ops.reinforcePlusPlus(rewards, mask, B, T, { gamma: 1 })).advantages,
    rppBaseline: (await ops.reinforcePlusPlusBaseline(rewards, mask, B, T, G)).advantages,
    kl: kl.kl,
    klMean: penalized.klMean,
    advantages: gae.advantages,
    returns: gae.returns,
    whitened: (await ops.whiten(gae.advantages, mask, B, T)).output,
    explained: (await ops.explainedVariance(gae.returns, values, mask, B, T)).value ?? NaN,
  };
}

describe.skipIf(!gpu)('advantage ops on the GPU vs the CPU references', () => {
  const device = gpu!;

  it('every op gives the CPU numbers', async () => {
    const onGpu = await runAll(gpuAdvantageOps(device));
    const onCpu = await runAll(CPU_ADVANTAGE_OPS);
    expect(Object.keys(onGpu)).toEqual(Object.keys(onCpu));
    for (const [name, expected] of Object.entries(onCpu)) {
      const got = onGpu[name]!;
      if (typeof expected === 'number') expect(got, name).toBeCloseTo(expected, 5);
      else expect(maxAbsDiff(got as Float32Array, expected), name).toBeLessThan(1e-5);
    }
    // Not all zeros: the comparison has something to compare.
    expect(onCpu.fracZeroStd).toBeCloseTo(1 / 3, 6);
    expect(maxAbsDiff(onCpu.grouped as Float32Array, new Float32Array(B))).toBeGreaterThan(0.5);
  });

  it('a model picks its own backend’s ops', () => {
    const params = stepParams(1);
    const onGpu = new GpuLanguageModel(device, stepConfig, params);
    try {
      expect(advantageOps(onGpu).backend).toBe('webgpu');
      expect(advantageOps(new CpuLanguageModel(stepConfig, params))).toBe(CPU_ADVANTAGE_OPS);
    } finally {
      onGpu.dispose();
    }
  });

  it('refuses a non-finite score on the GPU as the CPU does, naming the tensor', async () => {
    const scores = Float32Array.from([1, 0, NaN, 1]);
    await expect(gpuAdvantageOps(device).groupAdvantages(scores, 4)).rejects.toThrow(/scores/);
    await expect(CPU_ADVANTAGE_OPS.groupAdvantages(scores, 4)).rejects.toThrow(/scores/);
  });
});
