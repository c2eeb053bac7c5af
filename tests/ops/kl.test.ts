import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../src/ops/errors';
import {
  type KlClamp,
  type KlEstimator,
  klEstimate,
  klLoss,
  klRewardPenalty,
  perTokenKl,
} from '../../src/ops/kl';
import { randomLogits, seededRandom } from '../support/random';

/** |actual − expected| ≤ 1e-6 + 1e-6·|expected| (f32 outputs of float64 math). */
function expectNear(actual: number, expected: number, what = ''): void {
  expect(Math.abs(actual - expected), `${what}: ${actual} vs ${expected}`).toBeLessThanOrEqual(
    1e-6 + 1e-6 * Math.abs(expected),
  );
}

/** One token, unmasked: logp = refLogp + delta. */
function single(delta: number, estimator: KlEstimator, clamp: KlClamp) {
  const { kl, gradLogp } = perTokenKl(
    new Float32Array([-1 + delta]),
    new Float32Array([-1]),
    new Float32Array([1]),
    1,
    1,
    { estimator, clamp },
  );
  return { value: kl[0]!, grad: gradLogp[0]! };
}

const e = Math.E;

// Every row worked by hand from the definitions (Δ = logp − refLogp, x = log r = −Δ):
//   k1 = Δ (∂ = 1), abs = |Δ| (∂ = sign Δ), k2 = ½Δ² (∂ = Δ), k3 = eˣ − x − 1 (∂/∂logp = 1 − eˣ).
// 'verl' clamps only k3: x to ±20, then the value to ±10; 'openrlhf' clamps every value to ±10;
// a clamp that is active zeroes the gradient.
const GOLDEN: [KlEstimator, KlClamp, number, number, number][] = [
  // Δ = 0.5: k3 = e^−0.5 + 0.5 − 1 = 0.6065306597 − 0.5 = 0.1065306597, ∂ = 1 − 0.6065306597.
  ['k1', 'verl', 0.5, 0.5, 1],
  ['abs', 'verl', 0.5, 0.5, 1],
  ['k2', 'verl', 0.5, 0.125, 0.5],
  ['k3', 'verl', 0.5, 0.1065306597, 0.3934693403],
  ['k3', 'none', 0.5, 0.1065306597, 0.3934693403],
  ['k3', 'openrlhf', 0.5, 0.1065306597, 0.3934693403],
  // Δ = −1: k1 = −1, abs = 1 (∂ −1), k2 = 0.5 (∂ −1), k3 = e − 1 − 1 = 0.7182818285, ∂ = 1 − e.
  ['k1', 'none', -1, -1, 1],
  ['abs', 'openrlhf', -1, 1, -1],
  ['k2', 'openrlhf', -1, 0.5, -1],
  ['k3', 'none', -1, e - 2, 1 - e],
  // Δ = −3: k3 = e³ − 3 − 1 = 20.0855369232 − 4 = 16.0855369232 > 10: the outer clamps bite.
  ['k3', 'none', -3, 16.0855369232, 1 - 20.0855369232],
  ['k3', 'verl', -3, 10, 0],
  ['k3', 'openrlhf', -3, 10, 0],
  // Δ = 12: x = −12, k3 = e^−12 + 12 − 1 = 11.0000061442 > 10, ∂ = 1 − e^−12 = 0.9999938558.
  ['k3', 'none', 12, 11.0000061442, 0.9999938558],
  ['k3', 'verl', 12, 10, 0],
  // Δ = −30: verl's inner clamp bites (x = 30 → 20: e^20 − 21 = 485165174.4), then the outer
  // clamp gives 10. Unclamped: e^30 − 31 = 10686474581493.5, ∂ = 1 − e^30 = −10686474581523.5.
  ['k3', 'verl', -30, 10, 0],
  ['k3', 'openrlhf', -30, 10, 0],
  ['k3', 'none', -30, 10686474581493.5, -10686474581523.5],
  // verl leaves k1 / abs / k2 alone; OpenRLHF clamps them to ±10.
  ['k1', 'verl', -30, -30, 1],
  ['k1', 'openrlhf', -30, -10, 0],
  ['abs', 'verl', -30, 30, -1],
  ['abs', 'openrlhf', -30, 10, 0],
  ['k2', 'verl', -30, 450, -30],
  ['k2', 'openrlhf', -30, 10, 0],
  ['k2', 'none', -30, 450, -30],
  // Δ = 0: every estimator is 0; abs has ∂ 0 there (torch's abs backward), k3 has ∂ 1 − e⁰ = 0.
  ['abs', 'none', 0, 0, 0],
  ['k3', 'verl', 0, 0, 0],
];

describe('perTokenKl (CPU reference)', () => {
  it.each(GOLDEN)('%s with %s clamp at Δ = %d gives %d (∂ %d)', (est, clamp, delta, v, g) => {
    const { value, grad } = single(delta, est, clamp);
    expectNear(value, v, 'value');
    expectNear(grad, g, 'grad');
  });

  it("verl's inner clamp keeps k3 finite where the unclamped f32 value overflows", () => {
    // Δ = −100: e^100 ≈ 2.7e43 > f32 max (3.4e38), so 'none' stores Infinity; verl gives 10.
    expect(single(-100, 'k3', 'none').value).toBe(Infinity);
    expect(single(-100, 'k3', 'verl')).toEqual({ value: 10, grad: 0 });
    expect(single(-100, 'k3', 'openrlhf')).toEqual({ value: 10, grad: 0 });
  });

  it('uses the flavor defaults: verl k3 + verl clamp, trl k3 unclamped, openrlhf k1 clamped', () => {
    const logp = new Float32Array([-31, -1.5]);
    const ref = new Float32Array([-1, -1]);
    const mask = new Float32Array([1, 1]);
    const run = (flavor: 'verl' | 'trl' | 'openrlhf') =>
      Array.from(perTokenKl(logp, ref, mask, 1, 2, { flavor }).kl);
    // Δ = −30 and −0.5. k3(−0.5) = e^0.5 − 0.5 − 1 = 0.1487212707.
    expect(run('verl')[0]).toBe(10);
    expectNear(run('verl')[1]!, 0.1487212707);
    expectNear(run('trl')[0]!, 10686474581493.5);
    expect(run('openrlhf')).toEqual([-10, -0.5]);
    // An explicit option wins over the flavor's default.
    expect(perTokenKl(logp, ref, mask, 1, 2, { flavor: 'openrlhf', clamp: 'none' }).kl[0]).toBe(
      -30,
    );
  });

  it('gives 0 value and gradient at masked positions, whatever the inputs there', () => {
    const { kl, gradLogp } = perTokenKl(
      new Float32Array([-0.5, -40, 3]),
      new Float32Array([-1, -1, -1]),
      new Float32Array([1, 0, 0]),
      1,
      3,
      { estimator: 'k3', clamp: 'none' },
    );
    expect(Array.from(kl.slice(1))).toEqual([0, 0]);
    expect(Array.from(gradLogp.slice(1))).toEqual([0, 0]);
  });

  it('property: k3 ≥ 0 for every clamp, and clamped values stay within ±10', () => {
    fc.assert(
      fc.property(
        fc.float({ min: -60, max: 0, noNaN: true }),
        fc.float({ min: -60, max: 0, noNaN: true }),
        fc.constantFrom<KlClamp>('verl', 'openrlhf', 'none'),
        (logp, ref, clamp) => {
          const { value } = klEstimate(logp - ref, 'k3', clamp);
          expect(value).toBeGreaterThanOrEqual(0);
          if (clamp !== 'none') expect(value).toBeLessThanOrEqual(10);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('property: the gradient matches a central finite difference away from clamp bounds', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -8, max: 8, noNaN: true }),
        fc.constantFrom<KlEstimator>('k1', 'k2', 'k3', 'abs'),
        fc.constantFrom<KlClamp>('verl', 'openrlhf', 'none'),
        (delta, estimator, clamp) => {
          const h = 1e-6;
          const lo = klEstimate(delta - h, estimator, clamp);
          const hi = klEstimate(delta + h, estimator, clamp);
          const mid = klEstimate(delta, estimator, clamp);
          // Skip kinks: abs at 0, and points where a clamp switches within ±h.
          if (lo.grad === 0 || hi.grad === 0 || mid.grad === 0 || Math.abs(delta) < 1e-3) return;
          const fd = (hi.value - lo.value) / (2 * h);
          expect(Math.abs(fd - mid.grad)).toBeLessThan(1e-5 * Math.max(1, Math.abs(mid.grad)));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('Monte Carlo: the mean of k1 and of k3 over tokens sampled from π estimates KL(π ‖ π_ref)', () => {
    // π = [0.5, 0.25, 0.15, 0.1], π_ref uniform over 4 tokens:
    // KL = 0.5 ln 2 + 0.25 ln 1 + 0.15 ln 0.6 + 0.1 ln 0.4
    //    = 0.3465735903 + 0 − 0.0766237774 − 0.0916290732 = 0.1783207397.
    const p = [0.5, 0.25, 0.15, 0.1];
    const q = [0.25, 0.25, 0.25, 0.25];
    const trueKl = 0.1783207397;
    const n = 100_000;
    const next = seededRandom(7);
    const logp = new Float32Array(n);
    const ref = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      let u = next();
      let k = 0;
      while (k < p.length - 1 && u >= p[k]!) u -= p[k++]!;
      logp[i] = Math.log(p[k]!);
      ref[i] = Math.log(q[k]!);
    }
    const mask = new Float32Array(n).fill(1);
    for (const estimator of ['k1', 'k3'] as const) {
      const { kl } = perTokenKl(logp, ref, mask, 1, n, { estimator, clamp: 'none' });
      let mean = 0;
      for (const v of kl) mean += v / n;
      let variance = 0;
      for (const v of kl) variance += (v - mean) ** 2 / (n - 1);
      // Tolerance: 4 standard errors of the sample mean (k1: sd ≈ 0.58, so ≈ 0.007).
      const tolerance = 4 * Math.sqrt(variance / n);
      expect(Math.abs(mean - trueKl), estimator).toBeLessThan(tolerance);
      expect(tolerance).toBeLessThan(0.01);
    }
  });

  it.each([
    ['rows', () => perTokenKl(new Float32Array(2), new Float32Array(2), new Float32Array(2), 0, 2)],
    [
      'refLogp',
      () => perTokenKl(new Float32Array(4), new Float32Array(3), new Float32Array(4), 2, 2),
    ],
    [
      'logp',
      () => perTokenKl(new Float32Array([0, NaN]), new Float32Array(2), new Float32Array(2), 1, 2),
    ],
    [
      'refLogp',
      () =>
        perTokenKl(
          new Float32Array(2),
          new Float32Array([-Infinity, 0]),
          new Float32Array(2),
          1,
          2,
        ),
    ],
    [
      'mask',
      () => perTokenKl(new Float32Array(2), new Float32Array(2), new Float32Array([1, 0.5]), 1, 2),
    ],
    [
      'estimator',
      () =>
        perTokenKl(new Float32Array(1), new Float32Array(1), new Float32Array(1), 1, 1, {
          estimator: 'k4' as KlEstimator,
        }),
    ],
    [
      'clamp',
      () =>
        perTokenKl(new Float32Array(1), new Float32Array(1), new Float32Array(1), 1, 1, {
          clamp: 'trl' as KlClamp,
        }),
    ],
  ])('rejects bad %s with an OpInputError naming it', (field, call) => {
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(new RegExp(`perTokenKl: ${field} `));
  });
});

describe('klLoss (CPU reference)', () => {
  // Δ = [[0.5, −1], [2, masked]] from logp = ref + Δ with ref = −2.
  const ref = new Float32Array([-2, -2, -2, -2]);
  const logp = new Float32Array([-1.5, -3, 0, -7]);
  const mask = new Float32Array([1, 1, 1, 0]);

  it('token-mean of k1: (0.5 − 1 + 2) / 3 = 0.5, gradient 1/3 per unmasked token', () => {
    const out = klLoss(logp, ref, mask, 2, 2, { estimator: 'k1', clamp: 'none' });
    expectNear(out.loss, 0.5);
    expect(Array.from(out.kl)).toEqual([0.5, -1, 2, 0]);
    for (const [i, g] of [1 / 3, 1 / 3, 1 / 3, 0].entries()) expectNear(out.gradLogp[i]!, g);
    expect(out.tokens).toBe(3);
    expect(out.emptyMask).toBe(false);
  });

  it('token-mean of k2: (0.125 + 0.5 + 2) / 3 = 0.875, gradient Δ/3', () => {
    const out = klLoss(logp, ref, mask, 2, 2, { estimator: 'k2', clamp: 'none' });
    expectNear(out.loss, 0.875);
    for (const [i, g] of [0.5 / 3, -1 / 3, 2 / 3, 0].entries()) expectNear(out.gradLogp[i]!, g);
  });

  it('seq-mean-token-mean of k1: rows −0.25 and 2 → 0.875; weights 1/4 and 1/2', () => {
    const out = klLoss(logp, ref, mask, 2, 2, {
      estimator: 'k1',
      clamp: 'none',
      aggregation: { mode: 'seq-mean-token-mean' },
    });
    expectNear(out.loss, 0.875);
    expect(Array.from(out.gradLogp)).toEqual([0.25, 0.25, 0.5, 0]);
  });

  it('an all-zero mask gives loss 0 and zero gradients, not NaN', () => {
    for (const mode of ['token-mean', 'seq-mean-token-mean', 'dr-grpo'] as const) {
      const out = klLoss(logp, ref, new Float32Array(4), 2, 2, { aggregation: { mode } });
      expect(out.loss).toBe(0);
      expect(out.emptyMask).toBe(true);
      expect(Array.from(out.gradLogp)).toEqual([0, 0, 0, 0]);
    }
  });

  it('property: masked positions never change the loss or the gradient', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.constantFrom('k1', 'k2', 'k3', 'abs'),
        fc.constantFrom('verl', 'openrlhf', 'none'),
        fc.constantFrom('token-mean', 'seq-mean-token-mean', 'seq-mean-token-sum'),
        (rows, cols, seed, estimator, clamp, mode) => {
          const n = rows * cols;
          const lp = randomLogits(n, 3, seed).map((v) => v - 3);
          const rl = randomLogits(n, 3, seed + 1).map((v) => v - 3);
          const next = seededRandom(seed + 2);
          const m = new Float32Array(n).map(() => (next() < 0.6 ? 1 : 0));
          const options = { estimator, clamp, aggregation: { mode } } as const;
          const a = klLoss(lp, rl, m, rows, cols, options);
          const lp2 = lp.map((v, i) => (m[i] ? v : v - 50 * next()));
          const rl2 = rl.map((v, i) => (m[i] ? v : v + 9));
          const b = klLoss(lp2, rl2, m, rows, cols, options);
          expect(b.loss).toBe(a.loss);
          expect(Array.from(b.gradLogp)).toEqual(Array.from(a.gradLogp));
          expect(Array.from(b.kl)).toEqual(Array.from(a.kl));
        },
      ),
      { numRuns: 150 },
    );
  });

  it('gradient check: ∂loss/∂logp matches central finite differences (k3, two modes)', () => {
    const rows = 3;
    const cols = 4;
    const lp = randomLogits(rows * cols, 1, 3).map((v) => v - 2);
    const rl = randomLogits(rows * cols, 1, 4).map((v) => v - 2);
    const m = new Float32Array([1, 1, 1, 1, 1, 1, 0, 0, 1, 0, 1, 1]);
    for (const mode of ['token-mean', 'seq-mean-token-mean'] as const) {
      for (const clamp of ['verl', 'none'] as const) {
        const options = { estimator: 'k3', clamp, aggregation: { mode } } as const;
        const { gradLogp } = klLoss(lp, rl, m, rows, cols, options);
        for (let i = 0; i < lp.length; i++) {
          const plus = lp.slice();
          const minus = lp.slice();
          plus[i] = lp[i]! + 1e-3;
          minus[i] = lp[i]! - 1e-3;
          // The step actually taken, after f32 rounding of the perturbed inputs.
          const step = plus[i]! - minus[i]!;
          const fd =
            (klLoss(plus, rl, m, rows, cols, options).loss -
              klLoss(minus, rl, m, rows, cols, options).loss) /
            step;
          expect(Math.abs(fd - gradLogp[i]!), `${mode} ${clamp} token ${i}`).toBeLessThan(2e-4);
        }
      }
    }
  });

  it('rejects a bad aggregation mode with an OpInputError', () => {
    const call = () =>
      klLoss(logp, ref, mask, 2, 2, { aggregation: { mode: 'mean' as 'token-mean' } });
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(/klLoss: mode must be one of/);
  });
});

describe('klRewardPenalty (CPU reference)', () => {
  it('subtracts β·kl at unmasked tokens and reports the mean sequence KL (by hand)', () => {
    // β = 0.1; row 0: [0, 0, 1] − 0.1·[0.5, −0.25, 1] = [−0.05, 0.025, 0.9];
    // row 1: [0, 2, 0] − 0.1·[0.1, 0.2, (masked)] = [−0.01, 1.98, 0].
    // Sequence KLs: (0.5 − 0.25 + 1)/3 = 0.4166667 and (0.1 + 0.2)/2 = 0.15 → mean 0.2833333.
    const { rewards, klMean } = klRewardPenalty(
      new Float32Array([0, 0, 1, 0, 2, 0]),
      new Float32Array([0.5, -0.25, 1, 0.1, 0.2, 9]),
      new Float32Array([1, 1, 1, 1, 1, 0]),
      2,
      3,
      0.1,
    );
    for (const [i, r] of [-0.05, 0.025, 0.9, -0.01, 1.98, 0].entries()) {
      expectNear(rewards[i]!, r, `reward ${i}`);
    }
    expectNear(klMean, 0.2833333333);
  });

  it('counts a sequence with an empty mask as KL 0 in the mean, and β = 0 changes nothing', () => {
    const { rewards, klMean } = klRewardPenalty(
      new Float32Array([1, 2, 3, 4]),
      new Float32Array([1, 1, 5, 5]),
      new Float32Array([1, 1, 0, 0]),
      2,
      2,
      0,
    );
    expect(Array.from(rewards)).toEqual([1, 2, 3, 4]);
    expect(klMean).toBe(0.5);
  });

  it.each([
    ['beta', -0.1, new Float32Array(2)],
    ['beta', NaN, new Float32Array(2)],
    ['kl', 0.1, new Float32Array([0, Infinity])],
  ])('rejects bad %s', (field, beta, kl) => {
    const call = () =>
      klRewardPenalty(new Float32Array(2), kl, new Float32Array([1, 1]), 1, 2, beta);
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(new RegExp(`klRewardPenalty: ${field} `));
  });
});
