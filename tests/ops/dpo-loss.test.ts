import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dpoLoss, type DpoLossOptions } from '../../src/ops/dpo-loss';
import { OpInputError } from '../../src/ops/errors';
import { gradCheck } from '../support/gradcheck';
import { seededRandom } from '../support/random';

const f32 = (values: number[]) => Float32Array.from(values);

const close = (actual: Float32Array, expected: number[], digits = 6) => {
  expect(actual.length).toBe(expected.length);
  expected.forEach((v, i) => expect(actual[i]!, `index ${i}`).toBeCloseTo(v, digits));
};

describe('dpoLoss (CPU reference)', () => {
  it('matches a hand-worked sigmoid (DPO) pair', () => {
    // β = 0.1. Chosen: log π = −1, log π_ref = −2 → ratio +1; rejected: −3 vs −2 → ratio −1.
    // z = 1 − (−1) = 2, β·z = 0.2.
    // loss = −log σ(0.2) = log(1 + e^−0.2) = log(1.8187307531) = 0.5981388694.
    // σ(0.2) = 1 / 1.8187307531 = 0.5498339973; ∂ℓ/∂z = 0.1·(0.5498339973 − 1) = −0.0450166003.
    // rewards: chosen 0.1·1 = 0.1, rejected 0.1·(−1) = −0.1 → accuracy 1, margin 0.2.
    const r = dpoLoss(f32([-1]), f32([-3]), f32([-2]), f32([-2]), { beta: 0.1 });
    expect(r.loss).toBeCloseTo(0.5981388694, 9);
    close(r.gradChosen, [-0.0450166003], 8);
    close(r.gradRejected, [0.0450166003], 8);
    close(r.rewardsChosen, [0.1]);
    close(r.rewardsRejected, [-0.1]);
    expect(r.accuracy).toBe(1);
    expect(r.margin).toBeCloseTo(0.2, 7);
  });

  it('matches hand-worked cDPO values (label smoothing), averaged over two pairs', () => {
    // β = 0.5, ε = 0.1; ℓ = 0.9·softplus(−βz) + 0.1·softplus(βz), ∂ℓ/∂z = β·(σ(βz) − 0.9).
    // Pair A: policy = reference everywhere → z = 0: ℓ = 0.9·ln 2 + 0.1·ln 2 = 0.6931471806,
    //   ∂ℓ/∂z = 0.5·(0.5 − 0.9) = −0.2.
    // Pair B: chosen ratio −2 − (−2) = 0, rejected ratio −1 − (−3) = 2 → z = −2, βz = −1:
    //   softplus(1) = ln(1 + e) = 1.3132616875, softplus(−1) = 0.3132616875,
    //   ℓ = 0.9·1.3132616875 + 0.1·0.3132616875 = 1.2132616875;
    //   σ(−1) = 0.2689414214, ∂ℓ/∂z = 0.5·(0.2689414214 − 0.9) = −0.3155292893.
    // loss = (0.6931471806 + 1.2132616875) / 2 = 0.9532044340; gradients are ∂ℓ/∂z / 2 = −0.1,
    //   −0.1577646447 (chosen), and their negatives (rejected).
    // rewards: chosen [0, 0], rejected [0, 0.5·2 = 1]; accuracy: 0 > 0 no, 0 > 1 no → 0;
    //   margin ((0 − 0) + (0 − 1)) / 2 = −0.5.
    const r = dpoLoss(f32([-1.5, -2]), f32([-1.5, -1]), f32([-1.5, -2]), f32([-1.5, -3]), {
      beta: 0.5,
      labelSmoothing: 0.1,
    });
    expect(r.loss).toBeCloseTo(0.953204434, 9);
    close(r.gradChosen, [-0.1, -0.1577646447], 8);
    close(r.gradRejected, [0.1, 0.1577646447], 8);
    close(r.rewardsChosen, [0, 0]);
    close(r.rewardsRejected, [0, 1]);
    expect(r.accuracy).toBe(0);
    expect(r.margin).toBeCloseTo(-0.5, 7);
  });

  it('matches hand-worked IPO values (label smoothing does not enter)', () => {
    // β = 0.25 → target 1/(2β) = 2. Pair 1: z = (0 − (−3)) − 0 = 3: ℓ = (3 − 2)² = 1, ∂ℓ/∂z = 2.
    // Pair 2: z = 0: ℓ = (0 − 2)² = 4, ∂ℓ/∂z = −4. loss = 5/2; gradients ∂ℓ/∂z / 2 = [1, −2].
    const args = [f32([0, -1]), f32([-2, -1]), f32([-3, -1]), f32([-2, -1])] as const;
    for (const labelSmoothing of [0, 0.2]) {
      const r = dpoLoss(...args, { beta: 0.25, lossType: 'ipo', labelSmoothing });
      expect(r.loss).toBeCloseTo(2.5, 9);
      close(r.gradChosen, [1, -2]);
      close(r.gradRejected, [-1, 2]);
      close(r.rewardsChosen, [0.75, 0]); // 0.25·3
      expect(r.accuracy).toBe(0.5);
    }
  });

  it('uses TRL’s defaults (β = 0.1, sigmoid, no smoothing) when options are left out', () => {
    const args = [f32([-1]), f32([-3]), f32([-2]), f32([-2])] as const;
    expect(dpoLoss(...args).loss).toBe(dpoLoss(...args, { beta: 0.1 }).loss);
    expect(dpoLoss(...args, { beta: undefined }).loss).toBe(dpoLoss(...args).loss);
  });

  it('stays finite and exact far into the tails', () => {
    // β = 1. z = −1000: ℓ = softplus(1000) = 1000 + log1p(e^−1000) = 1000, ∂ℓ/∂z = σ(−1000) − 1 = −1.
    // z = +1000: ℓ = log1p(e^−1000) = 0 (e^−1000 underflows), ∂ℓ/∂z = σ(1000) − 1 = 0.
    const r = dpoLoss(f32([-1000, 0]), f32([0, -1000]), f32([0, 0]), f32([0, 0]), { beta: 1 });
    expect(r.loss).toBe(500);
    expect(Array.from(r.gradChosen)).toEqual([-0.5, 0]);
    expect(Array.from(r.gradRejected)).toEqual([0.5, -0]);
  });

  it('gives gradients that match central differences', () => {
    // Inputs on a 2^−10 grid and steps of h = 2^−7 are exact in float32, so the loss (float64
    // from there on) sees exactly the perturbed values; the O(h²) error is ~1e−5 relative.
    const next = seededRandom(11);
    const P = 6;
    const grid = () => Math.round((next() * 8 - 6) * 1024) / 1024;
    const cases: DpoLossOptions[] = [
      { beta: 0.1 },
      { beta: 2, labelSmoothing: 0.3 },
      { beta: 0.5, lossType: 'ipo' },
    ];
    for (const options of cases) {
      const x = Float64Array.from({ length: 4 * P }, grid); // [πc | πr | refc | refr]
      const parts = () =>
        [0, 1, 2, 3].map((k) => Float32Array.from(x.subarray(k * P, (k + 1) * P))) as [
          Float32Array,
          Float32Array,
          Float32Array,
          Float32Array,
        ];
      const r = dpoLoss(...parts(), options);
      // ∂/∂ref is the negative of ∂/∂policy for the same completion.
      const analytic = [
        ...r.gradChosen,
        ...r.gradRejected,
        ...r.gradChosen.map((g) => -g),
        ...r.gradRejected.map((g) => -g),
      ];
      const check = gradCheck(x, analytic, () => dpoLoss(...parts(), options).loss, {
        h: 2 ** -7,
        maxEntries: 4 * P,
      });
      expect(check.maxRelError, JSON.stringify({ options, worst: check.worst })).toBeLessThan(1e-3);
    }
  });

  it('property: raising a chosen log-prob never raises the sigmoid loss', () => {
    const logp = fc.double({ min: -40, max: 0, noNaN: true }).map(Math.fround);
    fc.assert(
      fc.property(
        fc.array(fc.tuple(logp, logp, logp, logp), { minLength: 1, maxLength: 8 }),
        fc.nat(7),
        fc.double({ min: 0.05, max: 5, noNaN: true }),
        fc.double({ min: 0.01, max: 2, noNaN: true }),
        (rows, pick, delta, beta) => {
          const col = (k: number) => Float32Array.from(rows, (r) => r[k]!);
          const [pc, pr, rc, rr] = [col(0), col(1), col(2), col(3)];
          const i = pick % rows.length;
          const before = dpoLoss(pc, pr, rc, rr, { beta });
          const raised = pc.slice();
          raised[i] = Math.fround(raised[i]! + delta);
          const after = dpoLoss(raised, pr, rc, rr, { beta });
          expect(after.loss).toBeLessThanOrEqual(before.loss);
          // The gradient says the same: chosen up and rejected down both lower the loss.
          expect(before.gradChosen[i]!).toBeLessThanOrEqual(0);
          expect(before.gradRejected[i]!).toBeGreaterThanOrEqual(0);
          const z = pc[i]! - rc[i]! - (pr[i]! - rr[i]!);
          if (beta * z < 10) expect(after.loss).toBeLessThan(before.loss); // not saturated
          expect(before.accuracy).toBeGreaterThanOrEqual(0);
          expect(before.accuracy).toBeLessThanOrEqual(1);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('property: with label smoothing the chosen gradient changes sign where σ(βz) = 1 − ε', () => {
    fc.assert(
      fc.property(
        fc.double({ min: -20, max: 20, noNaN: true }),
        fc.double({ min: 0.01, max: 0.49, noNaN: true }),
        (z, eps) => {
          const zf = Math.fround(z);
          const r = dpoLoss(f32([zf]), f32([0]), f32([0]), f32([0]), {
            beta: 1,
            labelSmoothing: eps,
          });
          const s = 1 / (1 + Math.exp(-zf));
          // cDPO's minimum sits at finite z: past it, the loss pulls the margin back down.
          if (s < 1 - eps - 1e-6) expect(r.gradChosen[0]!).toBeLessThan(0);
          if (s > 1 - eps + 1e-6) expect(r.gradChosen[0]!).toBeGreaterThan(0);
          expect(r.gradRejected[0]).toBe(-r.gradChosen[0]!);
        },
      ),
      { numRuns: 200 },
    );
  });

  const ok = f32([-1, -2]);
  const BAD: [string, () => unknown, RegExp][] = [
    ['no pairs', () => dpoLoss(f32([]), f32([]), f32([]), f32([])), /policyChosen.*at least 1/],
    [
      'rejected shorter',
      () => dpoLoss(ok, f32([-1]), ok, ok),
      /policyRejected must have .* = 2 elements, got 1/,
    ],
    ['ref longer', () => dpoLoss(ok, ok, f32([1, 2, 3]), ok), /refChosen .* got 3/],
    ['NaN', () => dpoLoss(ok, ok, ok, f32([-1, NaN])), /refRejected must be finite.*index 1/],
    ['Infinity', () => dpoLoss(f32([-Infinity, 0]), ok, ok, ok), /policyChosen.*index 0/],
    ['beta 0', () => dpoLoss(ok, ok, ok, ok, { beta: 0 }), /beta must be in \(0, ∞\), got 0/],
    ['beta < 0', () => dpoLoss(ok, ok, ok, ok, { beta: -0.1 }), /beta .*\(0, ∞\)/],
    ['beta ∞', () => dpoLoss(ok, ok, ok, ok, { beta: Infinity }), /beta .*\(0, ∞\)/],
    [
      'smoothing 0.5',
      () => dpoLoss(ok, ok, ok, ok, { labelSmoothing: 0.5 }),
      /labelSmoothing must be in \[0, 0.5\), got 0.5/,
    ],
    ['smoothing < 0', () => dpoLoss(ok, ok, ok, ok, { labelSmoothing: -0.1 }), /labelSmoothing/],
    [
      'unknown loss',
      () => dpoLoss(ok, ok, ok, ok, { lossType: 'hinge' as 'ipo' }),
      /lossType must be one of 'sigmoid', 'ipo', got 'hinge'/,
    ],
  ];

  it.each(BAD)('rejects bad input: %s', (_, call, message) => {
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(message);
  });
});
