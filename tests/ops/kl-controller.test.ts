import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../src/ops/errors';
import { AdaptiveKlController, FixedKlController } from '../../src/ops/kl-controller';

describe('AdaptiveKlController', () => {
  it('follows a sequence worked by hand', () => {
    // β₀ = 0.1, target 1, horizon 100; each step: err = clip(kl/1 − 1, ±0.2), β *= 1 + err·n/100.
    const ctl = new AdaptiveKlController({ coef: 0.1, target: 1, horizon: 100 });
    const steps: [number, number, number][] = [
      // kl 1.1: err 0.1 → ×(1 + 0.1·10/100) = ×1.01 → 0.101
      [1.1, 10, 0.101],
      // kl 2.0: err 1.0 clipped to 0.2 → ×1.02 → 0.10302
      [2.0, 10, 0.10302],
      // kl 0.5: err −0.5 clipped to −0.2 → ×(1 − 0.2·50/100) = ×0.9 → 0.092718
      [0.5, 50, 0.092718],
      // kl on target: err 0 → unchanged
      [1.0, 20, 0.092718],
      // kl 0: err −1 → −0.2 → ×0.8 → 0.0741744
      [0, 100, 0.0741744],
      // no steps since the last update: unchanged
      [5, 0, 0.0741744],
    ];
    for (const [kl, n, expected] of steps) {
      ctl.update(kl, n);
      expect(ctl.value).toBeCloseTo(expected, 12);
    }
  });

  it("matches one verl step at verl's defaults (target_kl 0.1, horizon 10000, kl_coef 0.001)", () => {
    // current_kl 0.15: err = 0.5 → 0.2; n_steps = batch size 256: ×(1 + 0.2·256/10000) = ×1.00512.
    const ctl = new AdaptiveKlController({ coef: 0.001, target: 0.1, horizon: 10000 });
    ctl.update(0.15, 256);
    expect(ctl.value).toBeCloseTo(0.00100512, 15);
  });

  it('property: β moves towards the target by at most ±20 % per horizon, and stays ≥ 0', () => {
    fc.assert(
      fc.property(
        // Coefficients from 1e-6: a subnormal β would underflow to 0 and make ratios meaningless.
        fc.double({ min: 1e-6, max: 1, noNaN: true }),
        fc.double({ min: 1e-3, max: 10, noNaN: true }),
        fc.array(
          fc.tuple(fc.double({ min: -5, max: 50, noNaN: true }), fc.integer({ min: 0, max: 500 })),
          { maxLength: 20 },
        ),
        (coef, target, updates) => {
          const ctl = new AdaptiveKlController({ coef, target, horizon: 100 });
          for (const [kl, n] of updates) {
            const before = ctl.value;
            ctl.update(kl, n);
            const ratio = before > 0 ? ctl.value / before : 1;
            expect(ratio).toBeGreaterThanOrEqual(1 - (0.2 * n) / 100 - 1e-12);
            expect(ratio).toBeLessThanOrEqual(1 + (0.2 * n) / 100 + 1e-12);
            if (kl > target) expect(ctl.value).toBeGreaterThanOrEqual(before);
            if (kl < target) expect(ctl.value).toBeLessThanOrEqual(before);
            expect(ctl.value).toBeGreaterThanOrEqual(0);
          }
        },
      ),
    );
  });

  it.each([
    ['target', { coef: 0.1, target: 0, horizon: 10 }, /target must be in \(0, ∞\)/],
    ['horizon', { coef: 0.1, target: 1, horizon: -1 }, /horizon must be in \(0, ∞\)/],
    ['coef', { coef: -0.1, target: 1, horizon: 10 }, /coef must be in \[0, ∞\)/],
    ['coef', { coef: NaN, target: 1, horizon: 10 }, /coef must be in \[0, ∞\)/],
  ])('rejects a bad %s', (_field, options, pattern) => {
    const call = () => new AdaptiveKlController(options);
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(pattern);
  });

  it.each([
    ['currentKl', NaN, 1, /currentKl must be finite/],
    ['currentKl', Infinity, 1, /currentKl must be finite/],
    ['nSteps', 0.1, 1.5, /nSteps must be an integer/],
    ['nSteps', 0.1, -1, /nSteps must be an integer/],
    // horizon 10: more than 10 / 0.2 = 50 steps could make the multiplier negative.
    ['nSteps', 0.1, 51, /nSteps must be ≤ horizon \/ 0.2 = 50/],
  ])('rejects a bad update %s', (_field, kl, n, pattern) => {
    const ctl = new AdaptiveKlController({ coef: 0.1, target: 1, horizon: 10 });
    expect(() => ctl.update(kl, n)).toThrow(OpInputError);
    expect(() => ctl.update(kl, n)).toThrow(pattern);
    expect(ctl.value).toBe(0.1);
  });
});

describe('FixedKlController', () => {
  it('keeps its coefficient whatever the KL', () => {
    const ctl = new FixedKlController(0.05);
    ctl.update(100, 1000);
    ctl.update(0, 1);
    expect(ctl.value).toBe(0.05);
  });

  it('rejects a negative coefficient', () => {
    expect(() => new FixedKlController(-1)).toThrow(OpInputError);
  });
});
