import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../../src/ops/errors';
import { layerNormBackward, layerNormForward } from '../../../src/ops/nn/layer-norm';
import { dot, gradCheck, probeWeights, randomF64 } from '../../support/gradcheck';

describe('layerNormForward (CPU reference)', () => {
  it('matches a 2 × 3 example worked by hand', () => {
    // eps = 1/3 makes var + eps a perfect square in both rows.
    // Row 0: x = [1, 2, 3]: mean = 2, var = (1 + 0 + 1)/3 = 2/3, var + eps = 1 → rstd = 1,
    //   xhat = [−1, 0, 1].
    // Row 1: x = [8, 6, 1]: mean = 15/3 = 5, deviations [3, 1, −4], var = (9 + 1 + 16)/3 = 26/3,
    //   var + eps = 27/3 = 9 → rstd = 1/3, xhat = [1, 1/3, −4/3].
    // gamma = [2, 0.5, −1], beta = [0.5, 1, 0]:
    //   out row 0 = [−2 + 0.5, 0 + 1, −1 + 0] = [−1.5, 1, −1]
    //   out row 1 = [2 + 0.5, 1/6 + 1, 4/3 + 0] = [2.5, 7/6, 4/3]
    const x = new Float64Array([1, 2, 3, 8, 6, 1]);
    const gamma = new Float64Array([2, 0.5, -1]);
    const beta = new Float64Array([0.5, 1, 0]);
    const { out, mean, rstd } = layerNormForward(x, gamma, beta, 2, 3, 1 / 3);
    const expected = [-1.5, 1, -1, 2.5, 7 / 6, 4 / 3];
    expected.forEach((v, i) => expect(out[i]).toBeCloseTo(v, 12));
    expect(mean[0]).toBeCloseTo(2, 12);
    expect(mean[1]).toBeCloseTo(5, 12);
    expect(rstd[0]).toBeCloseTo(1, 12);
    expect(rstd[1]).toBeCloseTo(1 / 3, 12);
  });

  it('returns the precision it is given, and eps defaults to PyTorch 1e-5', () => {
    // A constant row has var = 0, so rstd = 1/√eps = 1/√1e-5 and out = beta.
    const f32 = layerNormForward(
      new Float32Array([7, 7, 7, 7]),
      new Float32Array([1, 2, 3, 4]),
      new Float32Array([0.25, 0.5, 0.75, 1]),
      1,
      4,
    );
    expect(f32.out).toBeInstanceOf(Float32Array);
    expect(Array.from(f32.out)).toEqual([0.25, 0.5, 0.75, 1]);
    expect(f32.rstd[0]).toBeCloseTo(1 / Math.sqrt(1e-5), 2);
    const f64 = layerNormForward(
      new Float64Array([1, 3]),
      new Float64Array(2),
      new Float64Array(2),
      1,
      2,
    );
    expect(f64.out).toBeInstanceOf(Float64Array);
  });

  it('is exact for rows far from zero (two-pass variance)', () => {
    // x = 1e8 + [−1, 0, 1]: E[x²] − E[x]² would cancel 1e16-sized terms; two passes give var = 2/3.
    const { out } = layerNormForward(
      new Float64Array([1e8 - 1, 1e8, 1e8 + 1]),
      new Float64Array([1, 1, 1]),
      new Float64Array(3),
      1,
      3,
      1e-12,
    );
    const s = Math.sqrt(3 / 2);
    expect(out[0]).toBeCloseTo(-s, 9);
    expect(out[1]).toBeCloseTo(0, 9);
    expect(out[2]).toBeCloseTo(s, 9);
  });

  it('property: with gamma = 1, beta = 0 each row has mean 0 and variance var/(var + eps)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 2, max: 40 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        (rows, cols, seed) => {
          const x = randomF64(rows * cols, 3, seed);
          const { out } = layerNormForward(
            x,
            new Float64Array(cols).fill(1),
            new Float64Array(cols),
            rows,
            cols,
          );
          for (let r = 0; r < rows; r++) {
            const row = Array.from(out.subarray(r * cols, (r + 1) * cols));
            const m = row.reduce((a, b) => a + b, 0) / cols;
            const v = row.reduce((a, b) => a + (b - m) ** 2, 0) / cols;
            const xr = Array.from(x.subarray(r * cols, (r + 1) * cols));
            const xm = xr.reduce((a, b) => a + b, 0) / cols;
            const xv = xr.reduce((a, b) => a + (b - xm) ** 2, 0) / cols;
            expect(m).toBeCloseTo(0, 10);
            expect(v).toBeCloseTo(xv / (xv + 1e-5), 10);
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('layerNormBackward (CPU reference)', () => {
  const rows = 3;
  const cols = 5;
  const x = randomF64(rows * cols, 2, 1);
  const gamma = randomF64(cols, 1.5, 2);
  const beta = randomF64(cols, 1, 3);
  const w = probeWeights(rows * cols, 4);
  // L = Σ w · out, so ∂L/∂out = w.
  const loss = () => dot(w, layerNormForward(x, gamma, beta, rows, cols).out);
  const { mean, rstd } = layerNormForward(x, gamma, beta, rows, cols);
  const grads = layerNormBackward(w, x, gamma, mean, rstd, rows, cols);

  it.each([
    ['dx', x, () => grads.dx],
    ['dgamma', gamma, () => grads.dgamma],
    ['dbeta', beta, () => grads.dbeta],
  ] as const)('%s matches central differences in float64', (_name, param, analytic) => {
    const result = gradCheck(param, analytic(), loss);
    expect(result.maxRelError, JSON.stringify(result.worst)).toBeLessThan(1e-6);
  });

  it('dx of each row sums to 0 and is orthogonal to xhat', () => {
    // dx = rstd·(g − mean(g) − xhat·mean(g·xhat)): Σ dx = rstd·(Σg − Σg − mean(g·xhat)·Σxhat) = 0
    // (Σ xhat = 0), and Σ dx·xhat = rstd·(Σ g·xhat − 0 − mean(g·xhat)·Σ xhat²) = 0 when
    // Σ xhat² = C, i.e. when eps ≪ var (here var ≈ 1.3, eps = 1e-5: ~1e-5 relative).
    for (let r = 0; r < rows; r++) {
      let sum = 0;
      let dotXhat = 0;
      for (let c = 0; c < cols; c++) {
        const i = r * cols + c;
        sum += grads.dx[i]!;
        dotXhat += grads.dx[i]! * (x[i]! - mean[r]!) * rstd[r]!;
      }
      expect(Math.abs(sum)).toBeLessThan(1e-12);
      expect(Math.abs(dotXhat)).toBeLessThan(1e-3);
    }
  });

  it('dbeta is the column sum of dout, worked by hand', () => {
    // dout = [[1, 2], [3, 4]] → dbeta = [1 + 3, 2 + 4] = [4, 6].
    const d = layerNormBackward(
      new Float64Array([1, 2, 3, 4]),
      new Float64Array([0, 1, 5, 2]),
      new Float64Array([1, 1]),
      new Float64Array([0.5, 3.5]),
      new Float64Array([2, 2 / 3]),
      2,
      2,
    );
    expect(Array.from(d.dbeta)).toEqual([4, 6]);
    // xhat rows: [(0 − 0.5)·2, (1 − 0.5)·2] = [−1, 1]; [(5 − 3.5)·2/3, (2 − 3.5)·2/3] = [1, −1].
    // dgamma = Σ dout·xhat = [1·(−1) + 3·1, 2·1 + 4·(−1)] = [2, −2].
    expect(d.dgamma[0]).toBeCloseTo(2, 12);
    expect(d.dgamma[1]).toBeCloseTo(-2, 12);
  });
});

describe('layerNorm input checks', () => {
  const f = (n: number) => new Float32Array(n);
  it.each([
    ['rows', () => layerNormForward(f(4), f(2), f(2), 0, 2), /rows must be an integer in \[1, /],
    ['cols', () => layerNormForward(f(4), f(2), f(2), 2, 2.5), /cols must be an integer in \[1, /],
    [
      'x length',
      () => layerNormForward(f(5), f(2), f(2), 2, 2),
      /x must have rows × cols = 4 elements, got 5/,
    ],
    [
      'gamma length',
      () => layerNormForward(f(4), f(3), f(2), 2, 2),
      /gamma must have cols = 2 elements, got 3/,
    ],
    [
      'beta length',
      () => layerNormForward(f(4), f(2), f(1), 2, 2),
      /beta must have cols = 2 elements, got 1/,
    ],
    [
      'eps = 0',
      () => layerNormForward(f(4), f(2), f(2), 2, 2, 0),
      /eps must be in \(0, ∞\), got 0/,
    ],
    [
      'eps NaN',
      () => layerNormForward(f(4), f(2), f(2), 2, 2, NaN),
      /eps must be in \(0, ∞\), got NaN/,
    ],
    [
      'backward dout length',
      () => layerNormBackward(f(3), f(4), f(2), f(2), f(2), 2, 2),
      /layerNormBackward: dout must have rows × cols = 4 elements, got 3/,
    ],
    [
      'backward mean length',
      () => layerNormBackward(f(4), f(4), f(2), f(1), f(2), 2, 2),
      /mean must have rows = 2 elements, got 1/,
    ],
    [
      'backward rstd length',
      () => layerNormBackward(f(4), f(4), f(2), f(2), f(3), 2, 2),
      /rstd must have rows = 2 elements, got 3/,
    ],
  ])('rejects bad %s with an OpInputError naming it', (_name, call, pattern) => {
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(pattern);
  });
});
