import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../../src/ops/errors';
import { adamwStep, checkAdamWOptions, type AdamWOptions } from '../../../src/ops/nn/adamw';

const f64 = (...values: number[]) => new Float64Array(values);

/** One AdamW step on a single parameter; returns [p, m, v] after it. */
function stepOne(
  p: number,
  g: number,
  m: number,
  v: number,
  t: number,
  options: AdamWOptions,
  gradScale?: number,
): [number, number, number] {
  const params = f64(p);
  const mm = f64(m);
  const vv = f64(v);
  adamwStep(params, f64(g), mm, vv, t, options, gradScale);
  return [params[0]!, mm[0]!, vv[0]!];
}

describe('adamwStep (CPU reference, torch.optim.AdamW semantics)', () => {
  it('matches a hand-worked first step: g = 0.5, lr = 0.1, wd = 0.01, p = 1', () => {
    // Defaults β1 = 0.9, β2 = 0.999, eps = 1e-8; m = v = 0, t = 1.
    //   decay:  p = 1 − 0.1·0.01·1 = 0.999
    //   m = 0.1·0.5 = 0.05;  v = 0.001·0.25 = 0.00025
    //   step size = lr / (1 − 0.9) = 1;  √v / √(1 − 0.999) = 0.0158114 / 0.0316228 = 0.5
    //   update = 1 · 0.05 / (0.5 + 1e-8) = 0.1 · (1 − 2e-8)   (≈ lr · sign(g) at t = 1)
    //   p = 0.999 − 0.099999998 = 0.899000002
    const [p, m, v] = stepOne(1, 0.5, 0, 0, 1, { lr: 0.1, weightDecay: 0.01 });
    expect(m).toBeCloseTo(0.05, 15);
    expect(v).toBeCloseTo(0.00025, 15);
    expect(p).toBeCloseTo(0.899000002, 12);
  });

  it('applies the bias corrections of t = 2: 1 − 0.9² = 0.19 and 1 − 0.999² = 0.001999', () => {
    // Constant g = 0.5, wd = 0: after step 1 m = 0.05, v = 0.00025. Step 2:
    //   m = 0.9·0.05 + 0.1·0.5 = 0.095;  v = 0.999·0.00025 + 0.001·0.25 = 0.00049975
    //   m̂ = 0.095 / 0.19 = 0.5;  v̂ = 0.00049975 / 0.001999 = 0.25, √v̂ = 0.5
    //   update = 0.1 · 0.5 / (0.5 + 1e-8) = 0.1·(1 − 2e-8): the corrections make it exactly lr again.
    const [p, m, v] = stepOne(0.9, 0.5, 0.05, 0.00025, 2, { lr: 0.1, weightDecay: 0 });
    expect(m).toBeCloseTo(0.095, 15);
    expect(v).toBeCloseTo(0.00049975, 15);
    expect(p).toBeCloseTo(0.8 + 2e-9, 12);

    // Same moments, g = 0 at t = 2: m = 0.045, v = 0.00024975
    //   m̂ = 0.045 / 0.19 = 0.2368421;  v̂ = 0.00024975 / 0.001999 = 0.1249375, √v̂ = 0.3534649
    //   update = 0.1 · 0.2368421 / 0.3534649 = 0.0670058
    const [p2] = stepOne(0.9, 0, 0.05, 0.00025, 2, { lr: 0.1, weightDecay: 0 });
    expect(0.9 - p2).toBeCloseTo(0.0670058, 6);
  });

  it('decays the weights only when weightDecay > 0 (decoupled: no gradient needed)', () => {
    // g = 0, m = v = 0: the Adam term is 0 / (0 + eps) = 0, so only p·(1 − lr·wd) remains.
    expect(stepOne(2, 0, 0, 0, 1, { lr: 0.1, weightDecay: 0 })[0]).toBe(2);
    expect(stepOne(2, 0, 0, 0, 1, { lr: 0.1, weightDecay: 0.01 })[0]).toBeCloseTo(2 * 0.999, 14);
    // Default weightDecay is PyTorch AdamW's 0.01.
    expect(stepOne(2, 0, 0, 0, 1, { lr: 0.1 })[0]).toBeCloseTo(2 * 0.999, 14);
  });

  it('scales the gradient by gradScale (the clip coefficient) before the moments', () => {
    const [, m, v] = stepOne(1, 0.5, 0, 0, 1, { lr: 0.1 }, 0.5);
    // g = 0.25: m = 0.1·0.25 = 0.025; v = 0.001·0.0625 = 0.0000625
    expect(m).toBeCloseTo(0.025, 15);
    expect(v).toBeCloseTo(0.0000625, 15);
  });

  it('updates every element independently, in place, in both precisions', () => {
    const options = { lr: 0.01, beta1: 0.8, beta2: 0.99, eps: 1e-6, weightDecay: 0.1 };
    const p32 = new Float32Array([1, -2, 3]);
    const g32 = new Float32Array([0.1, -0.2, 0]);
    const m32 = new Float32Array(3);
    const v32 = new Float32Array(3);
    adamwStep(p32, g32, m32, v32, 1, options);
    for (let i = 0; i < 3; i++) {
      const [p, m, v] = stepOne([1, -2, 3][i]!, [0.1, -0.2, 0][i]!, 0, 0, 1, options);
      expect(p32[i]).toBeCloseTo(p, 6);
      expect(m32[i]).toBeCloseTo(m, 7);
      expect(v32[i]).toBeCloseTo(v, 7);
    }
    expect(Array.from(g32)).toEqual([0.1, -0.2, 0].map(Math.fround)); // grads only read
  });

  it('property: at t = 1 the step is lr·g / (|g| + eps), so |Δp| < lr whatever the scale of g', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -1e3, max: 1e3, noNaN: true }),
        fc.double({ min: 1e-3, max: 1e3, noNaN: true }),
        (g, lr) => {
          const [p] = stepOne(0, g, 0, 0, 1, { lr, weightDecay: 0 });
          // m̂ = m / (1 − β1) = g and √v̂ = √(v / (1 − β2)) = |g| at t = 1.
          expect(p).toBeCloseTo((-lr * g) / (Math.abs(g) + 1e-8), 9);
          expect(Math.abs(p)).toBeLessThan(lr);
        },
      ),
    );
  });

  it('property: scaling g and m by c and v by c² leaves the step unchanged (eps → 0)', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -10, max: 10, noNaN: true }),
        fc.double({ min: -1, max: 1, noNaN: true }),
        fc.double({ min: 1e-2, max: 1, noNaN: true }),
        fc.double({ min: 1e-2, max: 1e2, noNaN: true }),
        fc.integer({ min: 1, max: 1000 }),
        (g, m, v, c, t) => {
          const options = { lr: 0.01, weightDecay: 0, eps: 1e-300 };
          const [a] = stepOne(0, g, m, v, t, options);
          const [b] = stepOne(0, c * g, c * m, c * c * v, t, options);
          expect(Math.abs(a - b)).toBeLessThan(1e-12);
        },
      ),
    );
  });

  it.each<[string, AdamWOptions, RegExp]>([
    ['lr = 0', { lr: 0 }, /lr must be in \(0, ∞\), got 0/],
    ['lr = NaN', { lr: NaN }, /lr must be in/],
    ['beta1 = 1', { lr: 1, beta1: 1 }, /beta1 must be in \[0, 1\), got 1/],
    ['beta2 < 0', { lr: 1, beta2: -0.1 }, /beta2 must be in \[0, 1\)/],
    ['eps = 0', { lr: 1, eps: 0 }, /eps must be in \(0, ∞\)/],
    ['weightDecay < 0', { lr: 1, weightDecay: -1 }, /weightDecay must be in \[0, ∞\)/],
  ])('rejects options: %s', (_, options, message) => {
    expect(() => checkAdamWOptions(options)).toThrow(OpInputError);
    expect(() => checkAdamWOptions(options)).toThrow(message);
  });

  it('fills in the PyTorch defaults', () => {
    expect(checkAdamWOptions({ lr: 3e-4 })).toEqual({
      lr: 3e-4,
      beta1: 0.9,
      beta2: 0.999,
      eps: 1e-8,
      weightDecay: 0.01,
    });
  });

  it.each<[string, () => void, RegExp]>([
    [
      'grads length',
      () => adamwStep(f64(1, 2), f64(1), f64(0, 0), f64(0, 0), 1, { lr: 1 }),
      /grads/,
    ],
    ['m length', () => adamwStep(f64(1), f64(1), f64(0, 0), f64(0), 1, { lr: 1 }), /m must have/],
    ['v length', () => adamwStep(f64(1), f64(1), f64(0), f64(), 1, { lr: 1 }), /v must have/],
    [
      'empty',
      () => adamwStep(f64(), f64(), f64(), f64(), 1, { lr: 1 }),
      /params must not be empty/,
    ],
    ['step 0', () => adamwStep(f64(1), f64(1), f64(0), f64(0), 0, { lr: 1 }), /step must be/],
    ['step 1.5', () => adamwStep(f64(1), f64(1), f64(0), f64(0), 1.5, { lr: 1 }), /step must be/],
    [
      'gradScale NaN',
      () => adamwStep(f64(1), f64(1), f64(0), f64(0), 1, { lr: 1 }, NaN),
      /gradScale must be in \[0, ∞\)/,
    ],
  ])('rejects bad input before any work: %s', (_, run, message) => {
    expect(run).toThrow(OpInputError);
    expect(run).toThrow(message);
  });

  it('leaves the arrays untouched when it rejects the input', () => {
    const params = f64(1, 2);
    const m = f64(0.5, 0.5);
    expect(() => adamwStep(params, f64(1, 1), m, f64(0), 1, { lr: 1 })).toThrow(OpInputError);
    expect(Array.from(params)).toEqual([1, 2]);
    expect(Array.from(m)).toEqual([0.5, 0.5]);
  });
});
