import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../../src/ops/errors';
import { rmsNormBackward, rmsNormForward } from '../../../src/ops/nn/rms-norm';
import { dot, gradCheck, probeWeights, randomF64 } from '../../support/gradcheck';

describe('rmsNormForward (CPU reference)', () => {
  it('matches a 2 × 2 example worked by hand', () => {
    // eps = 3.5 makes mean(x²) + eps a perfect square in both rows.
    // Row 0: x = [3, 4]: mean(x²) = (9 + 16)/2 = 12.5, + 3.5 = 16 → rstd = 1/4, xhat = [0.75, 1].
    // Row 1: x = [1, 8]: mean(x²) = (1 + 64)/2 = 32.5, + 3.5 = 36 → rstd = 1/6, xhat = [1/6, 4/3].
    // w = [2, −1]: out row 0 = [1.5, −1], row 1 = [1/3, −4/3]. No mean is subtracted.
    const { out, rstd } = rmsNormForward(
      new Float64Array([3, 4, 1, 8]),
      new Float64Array([2, -1]),
      2,
      2,
      3.5,
    );
    [1.5, -1, 1 / 3, -4 / 3].forEach((v, i) => expect(out[i]).toBeCloseTo(v, 12));
    expect(rstd[0]).toBeCloseTo(1 / 4, 12);
    expect(rstd[1]).toBeCloseTo(1 / 6, 12);
  });

  it('returns the precision it is given; a zero row stays zero', () => {
    const f32 = rmsNormForward(
      new Float32Array([0, 0, 0]),
      new Float32Array([1, 2, 3]),
      1,
      3,
      1e-6,
    );
    expect(f32.out).toBeInstanceOf(Float32Array);
    expect(Array.from(f32.out)).toEqual([0, 0, 0]);
    expect(f32.rstd[0]).toBeCloseTo(1000, 2); // 1/√1e-6
    const f64 = rmsNormForward(new Float64Array([1, 3]), new Float64Array(2), 1, 2, 1e-6);
    expect(f64.out).toBeInstanceOf(Float64Array);
  });

  it('per head (Qwen3 q/k norm): rows = B·T·heads normalise each head on its own', () => {
    // One token, 2 heads of size 2: head 0 = [3, 4], head 1 = [30, 40]. Scaling a head by 10
    // leaves its normalised values unchanged (up to eps), so both heads give the same output;
    // one norm over all 4 channels would leave head 1 ten times head 0.
    const { out } = rmsNormForward(
      new Float64Array([3, 4, 30, 40]),
      new Float64Array([1, 1]),
      2,
      2,
      1e-12,
    );
    const s = 1 / Math.sqrt(12.5);
    [3 * s, 4 * s, 3 * s, 4 * s].forEach((v, i) => expect(out[i]).toBeCloseTo(v, 9));
  });

  it('property: with w = 1 each row has mean square ms/(ms + eps)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        (rows, cols, seed) => {
          const x = randomF64(rows * cols, 3, seed);
          const eps = 1e-3;
          const { out } = rmsNormForward(x, new Float64Array(cols).fill(1), rows, cols, eps);
          for (let r = 0; r < rows; r++) {
            let ms = 0;
            let msOut = 0;
            for (let c = 0; c < cols; c++) {
              ms += x[r * cols + c]! ** 2 / cols;
              msOut += out[r * cols + c]! ** 2 / cols;
            }
            expect(msOut).toBeCloseTo(ms / (ms + eps), 10);
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('rmsNormBackward (CPU reference)', () => {
  const rows = 4;
  const cols = 6;
  const eps = 1e-5;
  const x = randomF64(rows * cols, 2, 11);
  const w = randomF64(cols, 1.5, 12);
  const probe = probeWeights(rows * cols, 13);
  // L = Σ probe · out, so ∂L/∂out = probe.
  const loss = () => dot(probe, rmsNormForward(x, w, rows, cols, eps).out);
  const { rstd } = rmsNormForward(x, w, rows, cols, eps);
  const grads = rmsNormBackward(probe, x, w, rstd, rows, cols);

  it.each([
    ['dx', x, () => grads.dx],
    ['dw', w, () => grads.dw],
  ] as const)('%s matches central differences in float64', (_name, param, analytic) => {
    const result = gradCheck(param, analytic(), loss);
    expect(result.maxRelError, JSON.stringify(result.worst)).toBeLessThan(1e-6);
  });

  it('dw and dx of a 1 × 2 example worked by hand', () => {
    // x = [3, 4], eps = 3.5: rstd = 1/4, xhat = [0.75, 1]; w = [2, −1]; dout = [1, 1].
    // dw = dout·xhat = [0.75, 1].
    // g = dout·w = [2, −1]; mean(g·xhat) = (1.5 − 1)/2 = 0.25;
    // dx = rstd·(g − xhat·0.25) = 0.25·[2 − 0.1875, −1 − 0.25] = [0.453125, −0.3125].
    const d = rmsNormBackward(
      new Float64Array([1, 1]),
      new Float64Array([3, 4]),
      new Float64Array([2, -1]),
      new Float64Array([0.25]),
      1,
      2,
    );
    expect(d.dw[0]).toBeCloseTo(0.75, 12);
    expect(d.dw[1]).toBeCloseTo(1, 12);
    expect(d.dx[0]).toBeCloseTo(0.453125, 12);
    expect(d.dx[1]).toBeCloseTo(-0.3125, 12);
  });
});

describe('rmsNorm input checks', () => {
  const f = (n: number) => new Float32Array(n);
  it.each([
    ['rows', () => rmsNormForward(f(4), f(2), 0, 2, 1e-6), /rows must be an integer in \[1, /],
    ['cols', () => rmsNormForward(f(4), f(2), 2, 2.5, 1e-6), /cols must be an integer in \[1, /],
    [
      'x length',
      () => rmsNormForward(f(5), f(2), 2, 2, 1e-6),
      /rmsNormForward: x must have rows × cols = 4 elements, got 5/,
    ],
    [
      'w length',
      () => rmsNormForward(f(4), f(3), 2, 2, 1e-6),
      /w must have cols = 2 elements, got 3/,
    ],
    ['eps = 0', () => rmsNormForward(f(4), f(2), 2, 2, 0), /eps must be in \(0, ∞\), got 0/],
    [
      'backward dout length',
      () => rmsNormBackward(f(3), f(4), f(2), f(2), 2, 2),
      /rmsNormBackward: dout must have rows × cols = 4 elements, got 3/,
    ],
    [
      'backward rstd length',
      () => rmsNormBackward(f(4), f(4), f(2), f(3), 2, 2),
      /rstd must have rows = 2 elements, got 3/,
    ],
  ])('rejects bad %s with an OpInputError naming it', (_name, call, pattern) => {
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(pattern);
  });
});
