/** Parity of kernels/explained_variance.wgsl with its CPU twin; runs in Node (Dawn) and Chromium. */
import { describe, expect, it } from 'vitest';
import { explainedVarianceGpu } from '../../src/gpu/kernels/explained-variance';
import { OpInputError } from '../../src/ops/errors';
import { type ExplainedVariance, explainedVariance } from '../../src/ops/explained-variance';
import { testGpu } from '../support/gpu';
import { randomLogits, seededRandom } from '../support/random';

const gpu = await testGpu();

/** Values that explain part of the returns (ev around 0.75), and a mask with ~80 % ones. */
function inputs(n: number, seed: number, offset = 0) {
  const returns = randomLogits(n, 2, seed).map((r) => r + offset);
  const noise = randomLogits(n, 1, seed + 1);
  const values = returns.map((r, i) => r + noise[i]!);
  const next = seededRandom(seed + 2);
  const mask = new Float32Array(n).map(() => (next() < 0.8 ? 1 : 0));
  return { returns, values, mask };
}

function expectParity(out: ExplainedVariance, cpu: ExplainedVariance, what: string): void {
  expect(out.defined, what).toBe(cpu.defined);
  expect(out.tokens, what).toBe(cpu.tokens);
  if (cpu.value !== undefined) expect(Math.abs(out.value! - cpu.value), what).toBeLessThan(1e-4);
  expect(Math.abs(out.varReturns - cpu.varReturns), what).toBeLessThan(
    1e-4 * cpu.varReturns + 1e-7,
  );
  expect(Math.abs(out.varResidual - cpu.varResidual), what).toBeLessThan(
    1e-4 * cpu.varResidual + 1e-7,
  );
}

describe.skipIf(!gpu)('explained_variance kernel vs CPU reference', () => {
  const device = gpu!;

  it('matches the hand-worked example: ev = 0.6 (plain), 0.6000024 (verl)', async () => {
    const returns = new Float32Array([1, 2, 100, 3, 4, -7]);
    const values = new Float32Array([1, 2, -50, 2, 5, 8]);
    const mask = new Float32Array([1, 1, 0, 1, 1, 0]);
    const plain = await explainedVarianceGpu(device, returns, values, mask, 2, 3, {
      correction: 0,
      epsilon: 0,
    });
    expect(plain.value).toBeCloseTo(0.6, 6);
    expect(plain.tokens).toBe(4);
    const verl = await explainedVarianceGpu(device, returns, values, mask, 2, 3);
    expect(verl.value).toBeCloseTo(0.6000024, 6);
    expect(verl.varReturns).toBeCloseTo(5 / 3, 6);
  });

  it.each([
    [1, 5],
    [3, 100],
    [16, 1024], // 16,384 tokens: exactly 256 workgroups of 64
    [64, 1500], // 96,000 tokens: several tokens per thread (grid-stride)
  ])('matches on %i × %i for both definitions', async (rows, cols) => {
    const { returns, values, mask } = inputs(rows * cols, rows + cols, 3);
    mask[0] = 1;
    mask[mask.length - 1] = 1;
    for (const flavor of ['verl', 'trl'] as const) {
      const cpu = explainedVariance(returns, values, mask, rows, cols, { flavor });
      const out = await explainedVarianceGpu(device, returns, values, mask, rows, cols, { flavor });
      expectParity(out, cpu, `${rows} × ${cols} ${flavor}`);
    }
  });

  it('matches on 8 random shapes (seeded)', async () => {
    const next = seededRandom(77);
    for (let trial = 0; trial < 8; trial++) {
      const rows = 1 + Math.floor(next() * 40);
      const cols = 2 + Math.floor(next() * 900);
      const { returns, values, mask } = inputs(rows * cols, 300 + trial, 10 * next());
      mask[0] = 1;
      mask[1] = 1;
      const cpu = explainedVariance(returns, values, mask, rows, cols);
      const out = await explainedVarianceGpu(device, returns, values, mask, rows, cols);
      expectParity(out, cpu, `${rows} × ${cols}`);
    }
  });

  it('is 1 for a perfect prediction and 0 for predicting the mean', async () => {
    const returns = randomLogits(2000, 3, 9);
    const mask = new Float32Array(2000).fill(1);
    const perfect = await explainedVarianceGpu(device, returns, returns, mask, 40, 50);
    expect(perfect.value).toBe(1);
    let mean = 0;
    for (const r of returns) mean += r / returns.length;
    const atMean = await explainedVarianceGpu(
      device,
      returns,
      new Float32Array(2000).fill(mean),
      mask,
      40,
      50,
      { correction: 0, epsilon: 0 },
    );
    expect(Math.abs(atMean.value!)).toBeLessThan(1e-5);
  });

  it('is undefined, never NaN, for constant returns, an empty mask or one token', async () => {
    const constant = await explainedVarianceGpu(
      device,
      new Float32Array(300).fill(2),
      randomLogits(300, 1, 4),
      new Float32Array(300).fill(1),
      3,
      100,
      { flavor: 'trl' },
    );
    expect(constant).toMatchObject({ value: undefined, defined: false, varReturns: 0 });
    const { returns, values } = inputs(40, 5);
    const empty = await explainedVarianceGpu(device, returns, values, new Float32Array(40), 4, 10);
    expect(empty).toEqual({
      value: undefined,
      defined: false,
      varReturns: 0,
      varResidual: 0,
      tokens: 0,
    });
    const oneToken = new Float32Array(40);
    oneToken[17] = 1;
    const one = await explainedVarianceGpu(device, returns, values, oneToken, 4, 10);
    expect(one.defined).toBe(false);
    expect(one.tokens).toBe(1);
  });

  it('rejects non-finite inputs on the GPU like the CPU reference', async () => {
    const { returns, values, mask } = inputs(50, 6);
    values[33] = NaN;
    mask[33] = 0;
    expect(() => explainedVariance(returns, values, mask, 5, 10)).toThrow(
      /explainedVariance: values must be finite, but index 33/,
    );
    await expect(explainedVarianceGpu(device, returns, values, mask, 5, 10)).rejects.toThrow(
      /explainedVariance: values must be finite, but index 33 is not .*found on the GPU/,
    );
  });

  it('rejects bad shapes, masks and options before any dispatch', async () => {
    const created = device.pool.stats().created;
    const x = new Float32Array(4);
    await expect(
      explainedVarianceGpu(device, x, x, new Float32Array([0, 1, 1, 3]), 2, 2),
    ).rejects.toThrow(/explainedVariance: mask must be 0 or 1/);
    await expect(explainedVarianceGpu(device, x, new Float32Array(2), x, 2, 2)).rejects.toThrow(
      OpInputError,
    );
    await expect(explainedVarianceGpu(device, x, x, x, 2, 2, { epsilon: NaN })).rejects.toThrow(
      /explainedVariance: epsilon must be/,
    );
    expect(device.pool.stats().created).toBe(created);
  });
});
