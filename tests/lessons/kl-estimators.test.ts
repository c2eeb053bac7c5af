/**
 * The KL lesson's curves and sampling experiment, from the real estimator op (src/ops/kl.ts).
 * Golden values are worked out by hand in the comments.
 *
 * Sign convention: the op takes Δ = logp − refLogp = log(π_θ/π_ref) of the sampled token; the
 * lesson plots against x = log r = log(π_ref/π_θ) = −Δ, Schulman's r. So k1 = Δ = −x,
 * k2 = ½Δ² = ½x², k3 = eˣ − 1 − x.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  exactKl,
  exactMoments,
  klAt,
  klCurve,
  LESSON_ESTIMATORS,
  LESSON_REF,
  sampleKl,
  tiltedPolicy,
} from '../../src/lessons/kl-estimators';

const LN2 = Math.log(2);

describe('one token: the estimators against the log-ratio x = log(π_ref/π_θ)', () => {
  // x = ln 2 (the reference finds the token twice as likely as the policy does):
  //   k1 = −ln 2 = −0.693147; k2 = (ln 2)²/2 = 0.480453/2 = 0.240227;
  //   k3 = e^{ln 2} − 1 − ln 2 = 2 − 1 − 0.693147 = 0.306853.
  // x = −ln 2: k1 = +0.693147; k2 = 0.240227; k3 = ½ − 1 + ln 2 = 0.193147.
  // x = 0: every estimator is 0.
  it.each([
    [LN2, -0.693147, 0.240227, 0.306853],
    [-LN2, 0.693147, 0.240227, 0.193147],
    [0, 0, 0, 0],
    // x = 1: k1 = −1, k2 = ½, k3 = e − 2 = 0.718282.
    [1, -1, 0.5, 0.718282],
  ])('x = %f: k1 %f, k2 %f, k3 %f', (x, k1, k2, k3) => {
    expect(klAt(x, 'k1')).toBeCloseTo(k1, 6);
    expect(klAt(x, 'k2')).toBeCloseTo(k2, 6);
    expect(klAt(x, 'k3')).toBeCloseTo(k3, 6);
  });

  it("applies the clamps the trainer's frameworks apply", () => {
    // k3 at x = 3: e³ − 4 = 20.085537 − 4 = 16.085537; verl clamps the value to 10.
    expect(klAt(3, 'k3', 'none')).toBeCloseTo(16.085537, 5);
    expect(klAt(3, 'k3', 'verl')).toBe(10);
    expect(klAt(3, 'k3')).toBe(10); // verl is the default, as in the trainer
    // verl leaves k1 and k2 unclamped; OpenRLHF clamps every value to ±10.
    expect(klAt(-12, 'k1', 'verl')).toBe(12);
    expect(klAt(-12, 'k1', 'openrlhf')).toBe(10);
    expect(klAt(5, 'k2', 'verl')).toBe(12.5);
    expect(klAt(5, 'k2', 'openrlhf')).toBe(10);
  });

  it('klCurve is klAt on an even grid from xMin to xMax', () => {
    const curve = klCurve('k3', { xMin: -1, xMax: 1, points: 5 });
    expect(curve.map((p) => p.x)).toEqual([-1, -0.5, 0, 0.5, 1]);
    // k3(−1) = e⁻¹ − 1 + 1 = 0.367879; k3(0.5) = e^½ − 1.5 = 0.148721.
    expect(curve[0]!.value).toBeCloseTo(0.367879, 6);
    expect(curve[2]!.value).toBe(0);
    expect(curve[3]!.value).toBeCloseTo(0.148721, 6);
    expect(klCurve('k1').length).toBe(161);
  });

  it('k2 and k3 are never negative; k1 is negative exactly where x > 0', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -30, max: 30, noNaN: true }),
        fc.constantFrom('verl', 'openrlhf', 'none'),
        (x, clamp) => {
          expect(klAt(x, 'k2', clamp)).toBeGreaterThanOrEqual(0);
          expect(klAt(x, 'k3', clamp)).toBeGreaterThanOrEqual(0);
          expect(klAt(x, 'k1', clamp) < 0).toBe(x > 0);
        },
      ),
    );
  });

  it('near x = 0, k2 and k3 agree to second order (both ≈ x²/2)', () => {
    fc.assert(
      fc.property(fc.double({ min: -0.05, max: 0.05, noNaN: true }), (x) => {
        // k3 − k2 = x³/6 + x⁴/24 + … ≤ |x|³/6 · (1 + |x|/4 + …) < |x|³/6 · 1.02 for |x| ≤ 0.05.
        expect(Math.abs(klAt(x, 'k3') - klAt(x, 'k2'))).toBeLessThanOrEqual(
          (1.02 * Math.abs(x) ** 3) / 6 + 1e-15,
        );
      }),
    );
  });
});

describe('two hand-worked distributions: π_θ = (½, ½), π_ref = (¼, ¾)', () => {
  // KL(π_θ ‖ π_ref) = ½ ln(½/¼) + ½ ln(½/¾) = ½ ln 2 + ½ ln(2/3) = ½ ln(4/3) = 0.143841.
  // Per outcome, Δ = log(π_θ/π_ref): Δ₀ = ln 2 = 0.693147, Δ₁ = ln(2/3) = −0.405465.
  //   k1: mean ½(0.693147 − 0.405465) = 0.143841 (= KL); std ½|Δ₀ − Δ₁| = 0.549306.
  //   k3 = r − 1 − ln r with r = π_ref/π_θ = e^{−Δ}: r₀ = ½ → ½ − 1 + 0.693147 = 0.193147;
  //        r₁ = 3/2 → 0.5 − 0.405465 = 0.094535; mean 0.143841 (= KL); std ½·0.098612 = 0.049306.
  //   k2 = ½Δ²: 0.240227 and 0.082201; mean 0.161214 (≠ KL: biased up by 0.017373);
  //        std ½·0.158026 = 0.079013.
  const policy = [0.5, 0.5];
  const ref = [0.25, 0.75];

  it('exact KL', () => {
    expect(exactKl(policy, ref)).toBeCloseTo(0.143841, 6);
    expect(exactKl(ref, ref)).toBe(0);
  });

  it('exact moments: k1 and k3 have mean KL, k2 does not; k3 has the smallest spread', () => {
    const m = exactMoments(policy, ref);
    expect(m.k1.mean).toBeCloseTo(0.143841, 6);
    expect(m.k1.std).toBeCloseTo(0.549306, 6);
    expect(m.k3.mean).toBeCloseTo(0.143841, 6);
    expect(m.k3.std).toBeCloseTo(0.049306, 6);
    expect(m.k2.mean).toBeCloseTo(0.161214, 6);
    expect(m.k2.std).toBeCloseTo(0.079013, 6);
  });

  it('sampled: the op scores each sampled outcome with exactly these values', () => {
    const { samples, estimates, exact } = sampleKl(policy, ref, 400, 7);
    expect(exact).toBeCloseTo(0.143841, 6);
    const want = { k1: [0.693147, -0.405465], k2: [0.240227, 0.082201], k3: [0.193147, 0.094535] };
    for (const e of LESSON_ESTIMATORS) {
      samples.forEach((a, t) => expect(estimates[e].values[t]).toBeCloseTo(want[e][a]!, 5));
    }
    // Both outcomes drawn, about half each (400 fair draws: 200 ± 3·10).
    const zeros = samples.filter((a) => a === 0).length;
    expect(zeros).toBeGreaterThan(170);
    expect(zeros).toBeLessThan(230);
  });

  it('tiltedPolicy: (½, ½) tilted by s = ln 3 along (0, 1) is (¼, ¾)', () => {
    // π_θ ∝ (½, ½·3) = (¼, ¾) after normalising; KL((¼, ¾) ‖ (½, ½)) = ¼ ln ½ + ¾ ln (3/2)
    //   = −0.173287 + 0.304099 = 0.130812.
    const p = tiltedPolicy(Math.log(3), [0.5, 0.5], [0, 1]);
    expect(p[0]).toBeCloseTo(0.25, 12);
    expect(p[1]).toBeCloseTo(0.75, 12);
    expect(exactKl(p, [0.5, 0.5])).toBeCloseTo(0.130812, 6);
    expect(tiltedPolicy(0)).toEqual([...LESSON_REF].map((q) => expect.closeTo(q, 15)));
  });
});

/** 2–6 outcomes with weights in [0.05, 1], normalised: bounded ratios keep k1's tails tame. */
const distribution = (n: number) =>
  fc
    .array(fc.double({ min: 0.05, max: 1, noNaN: true }), { minLength: n, maxLength: n })
    .map((w) => {
      const total = w.reduce((a, b) => a + b, 0);
      return w.map((x) => x / total);
    });
const pair = fc
  .integer({ min: 2, max: 6 })
  .chain((n) => fc.tuple(distribution(n), distribution(n)));

describe('bias and variance, by sampling', () => {
  it('k1 and k3 are unbiased: their sample means approach the exact KL', () => {
    fc.assert(
      fc.property(pair, fc.nat(1000), ([policy, ref], seed) => {
        const n = 4000;
        const { exact, estimates } = sampleKl(policy, ref, n, seed, 'none');
        for (const e of ['k1', 'k3'] as const) {
          // Five standard errors of the sample mean (std / √n), plus float32 rounding.
          const tol = (5 * estimates[e].std) / Math.sqrt(n) + 1e-5;
          expect(Math.abs(estimates[e].mean - exact)).toBeLessThanOrEqual(tol);
        }
      }),
      { numRuns: 40 },
    );
  });

  it("the sample mean of every estimator approaches its exact mean, k2's included", () => {
    fc.assert(
      fc.property(pair, fc.nat(1000), ([policy, ref], seed) => {
        const n = 4000;
        const { estimates } = sampleKl(policy, ref, n, seed, 'none');
        const exact = exactMoments(policy, ref);
        for (const e of LESSON_ESTIMATORS) {
          const tol = (5 * estimates[e].std) / Math.sqrt(n) + 1e-5;
          expect(Math.abs(estimates[e].mean - exact[e].mean)).toBeLessThanOrEqual(tol);
        }
      }),
      { numRuns: 30 },
    );
  });

  it('for nearby distributions k1 spreads more than k3 (exact and sampled)', () => {
    fc.assert(
      fc.property(
        distribution(6),
        fc.array(fc.double({ min: -1, max: 1, noNaN: true }), { minLength: 6, maxLength: 6 }),
        fc.double({ min: 0.05, max: 0.3, noNaN: true }),
        fc.nat(1000),
        (ref, direction, shift, seed) => {
          fc.pre(Math.max(...direction) - Math.min(...direction) > 0.2);
          const policy = tiltedPolicy(shift, ref, direction);
          const exact = exactMoments(policy, ref);
          expect(exact.k1.std).toBeGreaterThan(exact.k3.std);
          const { estimates } = sampleKl(policy, ref, 2000, seed, 'none');
          expect(estimates.k1.std).toBeGreaterThan(estimates.k3.std);
        },
      ),
      { numRuns: 50 },
    );
  });

  it('on the lesson distributions: k2 is biased away from the KL as π_θ moves away', () => {
    // At s = 0 the policy is the reference: every estimate of every token is 0.
    const same = sampleKl(tiltedPolicy(0), [...LESSON_REF], 256, 1);
    for (const e of LESSON_ESTIMATORS) {
      expect(same.estimates[e].mean).toBe(0);
      expect(same.estimates[e].std).toBe(0);
    }
    expect(same.exact).toBeCloseTo(0, 12);
    // Far away, k2's exact mean differs from the KL by far more than rounding; k1, k3 do not.
    const far = tiltedPolicy(2);
    const m = exactMoments(far, [...LESSON_REF]);
    const kl = exactKl(far, [...LESSON_REF]);
    expect(Math.abs(m.k1.mean - kl)).toBeLessThan(1e-12);
    expect(Math.abs(m.k3.mean - kl)).toBeLessThan(1e-12);
    expect(Math.abs(m.k2.mean - kl)).toBeGreaterThan(0.05);
  });

  it('is deterministic: the same seed gives the same samples', () => {
    const a = sampleKl(tiltedPolicy(1), [...LESSON_REF], 100, 42);
    const b = sampleKl(tiltedPolicy(1), [...LESSON_REF], 100, 42);
    expect(a.samples).toEqual(b.samples);
    expect(a.estimates.k3.mean).toBe(b.estimates.k3.mean);
  });
});

describe('bad input', () => {
  const ok = [0.5, 0.5];
  it.each([
    [() => klAt(Number.NaN, 'k1'), /klAt: x must be finite, got NaN/],
    [() => klAt(1, 'abs' as never), /klAt: estimator must be one of k1, k2, k3, got 'abs'/],
    [
      () => klAt(1, 'k3', 'torch' as never),
      /klAt: clamp must be one of verl, openrlhf, none, got 'torch'/,
    ],
    [() => klCurve('k1', { xMin: 1, xMax: -1 }), /klCurve: xMin < xMax must both be finite/],
    [() => klCurve('k1', { points: 1 }), /points must be an integer in \[2, 2001\], got 1/],
    [() => exactKl([1], [1]), /exactKl: policy must hold 2 to 64 probabilities, got 1/],
    [() => exactKl([0.5, 0.6], ok), /policy must sum to 1 \(within 1e-6\), got 1\.1/],
    [() => exactKl([1.5, -0.5], ok), /policy\[0\] must be a probability in \[0, 1\], got 1\.5/],
    [() => exactKl(ok, [0.5, Number.NaN]), /ref\[1\] must be a probability in \[0, 1\], got NaN/],
    [() => exactKl(ok, [1 / 3, 1 / 3, 1 / 3]), /same length, got 2 and 3/],
    [() => exactKl(ok, [1, 0]), /ref\[1\] must be > 0 where policy\[1\] > 0 .*infinite/],
    [() => exactMoments(ok, [0, 1]), /exactMoments: ref\[0\] must be > 0 where policy\[0\]/],
    [() => sampleKl(ok, ok, 1, 0), /sampleKl: n must be an integer in \[2, 100000\], got 1/],
    [() => sampleKl(ok, ok, 10.5, 0), /n must be an integer in \[2, 100000\], got 10\.5/],
    [() => sampleKl(ok, ok, 10, -1), /seed must be an integer in \[0, 2\^32 − 1\], got -1/],
    [() => tiltedPolicy(2.5), /tiltedPolicy: shift must be in \[0, 2\], got 2\.5/],
    [() => tiltedPolicy(1, ok, [0]), /direction must have ref's length 2, got 1/],
    [() => tiltedPolicy(1, ok, [0, Infinity]), /direction\[1\] must be in \[−10, 10\]/],
  ] as const)('%#: %s', (call, message) => {
    expect(call).toThrow(message);
  });

  it('does not touch its inputs', () => {
    const policy = [0.25, 0.75];
    const ref = [0.5, 0.5];
    sampleKl(policy, ref, 50, 3);
    exactMoments(policy, ref);
    expect(policy).toEqual([0.25, 0.75]);
    expect(ref).toEqual([0.5, 0.5]);
  });

  it('never samples an outcome π_θ gives probability 0', () => {
    const { samples } = sampleKl([0.5, 0, 0.5, 0], [0.25, 0.25, 0.25, 0.25], 500, 9);
    expect(samples.every((a) => a === 0 || a === 2)).toBe(true);
  });
});
