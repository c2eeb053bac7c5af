/** Parity of kernels/gae.wgsl with its CPU twin; runs in Node (Dawn) and in Chromium. */
import { describe, expect, it } from 'vitest';
import { gaeGpu } from '../../src/gpu/kernels/gae';
import { OpInputError } from '../../src/ops/errors';
import { type GaeInput, type GaeOptions, gae } from '../../src/ops/gae';
import { testGpu } from '../support/gpu';
import { randomLogits, seededRandom } from '../support/random';

const gpu = await testGpu();

/** f32 scans accumulate rounding over T steps: compare relative to magnitude. */
function expectClose(actual: Float32Array, expected: Float32Array, label: string, tol = 2e-5) {
  expect(actual.length, label).toBe(expected.length);
  for (let i = 0; i < actual.length; i++) {
    const bound = tol * (1 + Math.abs(expected[i]!));
    if (!(Math.abs(actual[i]! - expected[i]!) <= bound)) {
      expect.fail(`${label}: index ${i}: GPU ${actual[i]} vs CPU ${expected[i]}`);
    }
  }
}

function randomInput(rows: number, cols: number, seed: number, extras: boolean): GaeInput {
  const next = seededRandom(seed);
  const input: GaeInput = {
    rewards: randomLogits(rows * cols, 1, seed),
    values: randomLogits(rows * cols, 1, seed + 1),
    mask: Float32Array.from({ length: rows * cols }, () => (next() < 0.8 ? 1 : 0)),
  };
  if (extras) {
    input.dones = Float32Array.from({ length: rows * cols }, () => (next() < 0.05 ? 1 : 0));
    input.bootstrapValue = randomLogits(rows, 2, seed + 2);
  }
  return input;
}

describe.skipIf(!gpu)('gae kernel vs CPU reference', () => {
  const device = gpu!;

  it.each([
    [1, 1],
    [1, 3],
    [3, 255],
    [7, 257],
    [65, 300],
  ])('matches on %i × %i in every flavor, with and without dones/bootstrap', async (rows, cols) => {
    for (const flavor of ['verl', 'trl', 'openrlhf'] as const) {
      for (const extras of [false, true]) {
        const input = randomInput(rows, cols, rows * 1000 + cols, extras);
        const options: GaeOptions = { flavor, gamma: 0.99, lambda: 0.95 };
        const expected = gae(input, rows, cols, options);
        const actual = await gaeGpu(device, input, rows, cols, options);
        const label = `${flavor} ${rows}×${cols} extras=${extras}`;
        expectClose(actual.advantages, expected.advantages, `${label} advantages`);
        expectClose(actual.returns, expected.returns, `${label} returns`);
      }
    }
  });

  it('matches the hand-worked skip and zero-step cases', async () => {
    const input: GaeInput = {
      rewards: new Float32Array([1, 0, 2]),
      values: new Float32Array([0.5, 0.4, 1.0]),
      mask: new Float32Array([1, 0, 1]),
    };
    const skip = await gaeGpu(device, input, 1, 3, { gamma: 0.9, lambda: 0.8 });
    expectClose(skip.advantages, new Float32Array([2.12, 1.0, 1.0]), 'skip');
    const zero = await gaeGpu(device, input, 1, 3, { flavor: 'openrlhf', gamma: 0.9, lambda: 0.8 });
    expectClose(zero.advantages, new Float32Array([1.6664, 1.62, 1]), 'zero-step');
  });

  it('matches on 10 random shapes and options (seeded)', async () => {
    const next = seededRandom(77);
    for (let trial = 0; trial < 10; trial++) {
      const rows = 1 + Math.floor(next() * 40);
      const cols = 1 + Math.floor(next() * 600);
      const options: GaeOptions = {
        gamma: next(),
        lambda: next(),
        maskMode: next() < 0.5 ? 'skip' : 'zero-step',
      };
      const input = randomInput(rows, cols, trial, next() < 0.5);
      const expected = gae(input, rows, cols, options);
      const actual = await gaeGpu(device, input, rows, cols, options);
      expectClose(actual.advantages, expected.advantages, `trial ${trial} advantages`);
      expectClose(actual.returns, expected.returns, `trial ${trial} returns`);
    }
  });

  it('rejects the same bad input as the CPU reference', async () => {
    const good = randomInput(2, 3, 5, true);
    const created = device.pool.stats().created;
    // Shape, option and mask errors: on the CPU, before any buffer or dispatch.
    await expect(gaeGpu(device, { ...good, values: new Float32Array(5) }, 2, 3)).rejects.toThrow(
      /values must have rows × cols = 2 × 3 = 6 elements, got 5/,
    );
    await expect(gaeGpu(device, good, 2, 3, { gamma: 1.5 })).rejects.toThrow(
      /gamma must be in \[0, 1\]/,
    );
    const badMask = good.mask.slice();
    badMask[4] = 0.5;
    await expect(gaeGpu(device, { ...good, mask: badMask }, 2, 3)).rejects.toThrow(
      /mask must be 0 or 1, but index 4/,
    );
    expect(device.pool.stats().created).toBe(created);
    // Non-finite values: found by the kernel, same error class and tensor/index as the CPU.
    for (const [tensor, index, value] of [
      ['rewards', 4, NaN],
      ['values', 1, Infinity],
      ['bootstrapValue', 1, -Infinity],
    ] as const) {
      const data = (good[tensor] as Float32Array).slice();
      data[index] = value;
      const bad = { ...good, [tensor]: data };
      const pattern = new RegExp(`gae: ${tensor} must be finite, but index ${index}`);
      expect(() => gae(bad, 2, 3)).toThrow(pattern);
      const onGpu = gaeGpu(device, bad, 2, 3);
      await expect(onGpu).rejects.toThrow(OpInputError);
      await expect(gaeGpu(device, bad, 2, 3)).rejects.toThrow(pattern);
    }
    // The pool got every buffer back.
    expect(device.pool.stats().inUse).toBe(0);
  });
});
