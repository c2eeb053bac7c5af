/**
 * Parity of kernels/reinforce_pp_returns.wgsl and the REINFORCE++ compositions with the CPU twins.
 */
import { describe, expect, it } from 'vitest';
import {
  discountedReturnsGpu,
  reinforcePlusPlusBaselineGpu,
  reinforcePlusPlusGpu,
} from '../../src/gpu/kernels/reinforce-pp';
import { OpInputError } from '../../src/ops/errors';
import {
  discountedReturns,
  reinforcePlusPlus,
  reinforcePlusPlusBaseline,
} from '../../src/ops/reinforce-pp';
import { testGpu } from '../support/gpu';
import { maxAbsDiff, randomLogits, seededRandom } from '../support/random';

const gpu = await testGpu();

function randomMask(n: number, seed: number, p = 0.8): Float32Array {
  const next = seededRandom(seed);
  return Float32Array.from({ length: n }, () => (next() < p ? 1 : 0));
}

/** Returns-to-go accumulate over T steps in f32: compare relative to magnitude. */
function relDiff(actual: Float32Array, expected: Float32Array): number {
  let worst = 0;
  for (let i = 0; i < actual.length; i++) {
    worst = Math.max(worst, Math.abs(actual[i]! - expected[i]!) / (1 + Math.abs(expected[i]!)));
  }
  return worst;
}

describe.skipIf(!gpu)('REINFORCE++ kernels vs CPU reference', () => {
  const device = gpu!;

  it.each([
    [1, 1],
    [1, 3],
    [4, 255],
    [65, 130],
  ])('returns-to-go and REINFORCE++ match on %i × %i (verl and OpenRLHF)', async (rows, cols) => {
    const rewards = randomLogits(rows * cols, 1, rows + cols);
    const mask = randomMask(rows * cols, cols);
    for (const flavor of ['verl', 'openrlhf'] as const) {
      const options = { flavor, gamma: 0.97 };
      const returns = await discountedReturnsGpu(device, rewards, mask, rows, cols, options);
      expect(relDiff(returns, discountedReturns(rewards, mask, rows, cols, options))).toBeLessThan(
        2e-5,
      );
      const expected = reinforcePlusPlus(rewards, mask, rows, cols, options);
      const actual = await reinforcePlusPlusGpu(device, rewards, mask, rows, cols, options);
      expect(relDiff(actual.returns, expected.returns), flavor).toBeLessThan(2e-5);
      expect(maxAbsDiff(actual.advantages, expected.advantages), flavor).toBeLessThan(1e-4);
      expect(actual.whitenStats.count).toBe(expected.whitenStats.count);
      expect(actual.whitenStats.emptyMask).toBe(expected.whitenStats.emptyMask);
    }
  });

  it.each([
    [2, 1, 5],
    [4, 2, 2],
    [8, 4, 100],
    [48, 6, 300],
  ])('REINFORCE++-baseline matches with %i rows, G = %i, T = %i', async (rows, g, cols) => {
    const rewards = randomLogits(rows * cols, 0.05, rows * g + cols);
    const mask = randomMask(rows * cols, rows + 7, 0.9);
    for (const flavor of ['verl', 'openrlhf'] as const) {
      const expected = reinforcePlusPlusBaseline(rewards, mask, rows, cols, g, { flavor });
      const actual = await reinforcePlusPlusBaselineGpu(device, rewards, mask, rows, cols, g, {
        flavor,
      });
      const label = `${flavor} G=${g}`;
      expect(maxAbsDiff(actual.centeredScores, expected.centeredScores), label).toBeLessThan(1e-5);
      expect(maxAbsDiff(actual.advantages, expected.advantages), label).toBeLessThan(1e-4);
      expect(actual.whitenStats.count, label).toBe(expected.whitenStats.count);
    }
  });

  it('matches the hand-worked baseline case, including a zero-advantage OpenRLHF G = 1', async () => {
    const rewards = new Float32Array([0, 1, 0, 0, 1, 1, 0, 1]);
    const mask = new Float32Array([1, 1, 1, 1, 1, 1, 1, 0]);
    const out = await reinforcePlusPlusBaselineGpu(device, rewards, mask, 4, 2, 2);
    const [p, q] = [3 / Math.sqrt(14), -4 / Math.sqrt(14)];
    expect(maxAbsDiff(out.advantages, [p, p, q, q, p, p, q, 0])).toBeLessThan(1e-6);
    const own = await reinforcePlusPlusBaselineGpu(device, rewards, mask, 4, 2, 1, {
      flavor: 'openrlhf',
    });
    expect(Array.from(own.advantages)).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
  });

  it('rejects the same bad input as the CPU reference', async () => {
    const mask = new Float32Array(6).fill(1);
    const created = device.pool.stats().created;
    await expect(
      reinforcePlusPlusGpu(device, new Float32Array(6), mask, 2, 3, { gamma: -1 }),
    ).rejects.toThrow(/gamma must be in \[0, 1\]/);
    await expect(
      reinforcePlusPlusBaselineGpu(device, new Float32Array(6), mask, 3, 2, 2),
    ).rejects.toThrow(/groupSize must divide B = 3/);
    expect(device.pool.stats().created).toBe(created);
    const bad = new Float32Array([0, 0, 0, 0, Infinity, 0]);
    const pattern = /rewards must be finite, but index 4/;
    expect(() => reinforcePlusPlus(bad, mask, 2, 3)).toThrow(pattern);
    await expect(reinforcePlusPlusGpu(device, bad, mask, 2, 3)).rejects.toThrow(OpInputError);
    await expect(reinforcePlusPlusGpu(device, bad, mask, 2, 3)).rejects.toThrow(pattern);
    await expect(discountedReturnsGpu(device, bad, mask, 2, 3)).rejects.toThrow(pattern);
    await expect(reinforcePlusPlusBaselineGpu(device, bad, mask, 2, 3, 1)).rejects.toThrow(
      /reinforcePlusPlusBaseline: rewards must be finite, but index 4/,
    );
    expect(device.pool.stats().inUse).toBe(0);
  });
});
