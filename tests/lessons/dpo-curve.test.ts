/**
 * The DPO lesson's curve: one pair's loss and gradient weight against the log-ratio gap z, from
 * the real dpoLoss op. Golden values are worked out by hand in the comments, with
 * m = β·z, σ(x) = 1/(1 + e^−x), and the weight w = −(∂ℓ/∂z)/β.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_CDPO_EPSILON,
  dpoCurve,
  dpoPoint,
  lossMinimumGap,
} from '../../src/lessons/dpo-curve';

const LN2 = Math.log(2);
const LN3 = Math.log(3);

describe('the sigmoid (DPO) loss of one pair', () => {
  // ℓ = −log σ(m), w = σ(−m).
  //   m = 0:     ℓ = −log ½ = ln 2 = 0.693147;       w = σ(0) = 0.5
  //   m = ln 3:  σ(ln 3) = 3/(3 + 1) = 3/4, ℓ = ln(4/3) = 0.287682;  w = σ(−ln 3) = 1/4
  //   m = −ln 3: σ(−ln 3) = 1/4, ℓ = ln 4 = 1.386294;  w = 3/4
  //   m = 2 (β = 0.5, z = 4): σ(2) = 0.880797, ℓ = −ln 0.880797 = 0.126928;  w = 0.119203
  it.each([
    [0.1, 0, 0, LN2, 0.5],
    [1, LN3, LN3, Math.log(4 / 3), 0.25],
    [1, -LN3, -LN3, Math.log(4), 0.75],
    [0.5, 2 * LN3, LN3, Math.log(4 / 3), 0.25], // the same margin from a larger gap, smaller β
    [0.5, 4, 2, 0.126928, 0.119203],
  ] as const)('β = %f, z = %f: m = %f, ℓ = %f, w = %f', (beta, z, m, loss, weight) => {
    const p = dpoPoint(z, { beta, loss: 'sigmoid' });
    expect(p.margin).toBeCloseTo(m, 6);
    expect(p.loss).toBeCloseTo(loss, 6);
    expect(p.weight).toBeCloseTo(weight, 6);
    // ∂ℓ/∂z = −β·σ(−m).
    expect(p.grad).toBeCloseTo(-beta * weight, 6);
  });

  it('β stretches the curve along z: the loss depends on β·z only', () => {
    // z = 10 at β = 0.1 and z = 1 at β = 1 both have m = 1: ℓ = ln(1 + e^−1) = 0.313262.
    expect(dpoPoint(10, { beta: 0.1, loss: 'sigmoid' }).loss).toBeCloseTo(0.313262, 6);
    expect(dpoPoint(1, { beta: 1, loss: 'sigmoid' }).loss).toBeCloseTo(0.313262, 6);
  });

  it('is positive and decreasing in the margin', () => {
    // Margins up to 5 · 100 = 500: beyond about 745 the float64 loss log(1 + e^−m) underflows to
    // exactly 0 (a property run once drew β 7.45 at z 100, a margin of 745).
    fc.assert(
      fc.property(
        fc.double({ min: 0.01, max: 5, noNaN: true }),
        fc.double({ min: -50, max: 50, noNaN: true }),
        fc.double({ min: 0.01, max: 50, noNaN: true }),
        (beta, z, step) => {
          const a = dpoPoint(z, { beta, loss: 'sigmoid' });
          const b = dpoPoint(z + step, { beta, loss: 'sigmoid' });
          expect(a.loss).toBeGreaterThan(0);
          expect(b.loss).toBeGreaterThan(0);
          if (b.margin > a.margin) expect(b.loss).toBeLessThan(a.loss);
        },
      ),
    );
  });

  it('has a gradient weight in (0, 1) that decreases as the margin grows', () => {
    // Margins within ±8: beyond about ±16 the float32 gradient rounds σ(−m) to exactly 0 or 1.
    fc.assert(
      fc.property(
        fc.double({ min: 0.05, max: 4, noNaN: true }),
        fc.double({ min: -8, max: 8, noNaN: true }),
        fc.double({ min: 0.05, max: 8, noNaN: true }),
        (beta, m, step) => {
          const a = dpoPoint(m / beta, { beta, loss: 'sigmoid' });
          const b = dpoPoint((m + step) / beta, { beta, loss: 'sigmoid' });
          for (const p of [a, b]) {
            expect(p.weight).toBeGreaterThan(0);
            expect(p.weight).toBeLessThan(1);
          }
          expect(b.weight).toBeLessThan(a.weight);
        },
      ),
    );
  });

  it('weights a pair by σ(−m): w(m) + w(−m) = 1', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.05, max: 4, noNaN: true }),
        fc.double({ min: -8, max: 8, noNaN: true }),
        (beta, m) => {
          const up = dpoPoint(m / beta, { beta, loss: 'sigmoid' });
          const down = dpoPoint(-m / beta, { beta, loss: 'sigmoid' });
          expect(up.weight + down.weight).toBeCloseTo(1, 5);
        },
      ),
    );
  });
});

describe('cDPO (label smoothing ε)', () => {
  // ℓ = −(1 − ε)·log σ(m) − ε·log σ(−m), w = (1 − ε) − σ(m). ε = 0.1:
  //   m = 0:     ℓ = 0.9·ln 2 + 0.1·ln 2 = ln 2;  w = 0.9 − 0.5 = 0.4
  //   m = ln 3:  ℓ = 0.9·ln(4/3) + 0.1·ln 4 = 0.258914 + 0.138629 = 0.397543;  w = 0.9 − 0.75 = 0.15
  //   m = ln 9:  σ = 9/10: ℓ = −0.9·ln 0.9 − 0.1·ln 0.1 = 0.094825 + 0.230259 = 0.325083 (the binary
  //              entropy of 0.1, the least it can be);  w = 0.9 − 0.9 = 0
  //   m = ln 19: σ = 19/20: w = 0.9 − 0.95 = −0.05 (pushes the margin back down)
  it.each([
    [0, LN2, 0.4],
    [LN3, 0.397543, 0.15],
    [Math.log(9), 0.325083, 0],
    [Math.log(19), 0.1 * Math.log(20) + 0.9 * Math.log(20 / 19), -0.05],
  ] as const)('β = 1, ε = 0.1, z = %f: ℓ = %f, w = %f', (z, loss, weight) => {
    const p = dpoPoint(z, { beta: 1, loss: 'cdpo', labelSmoothing: 0.1 });
    expect(p.loss).toBeCloseTo(loss, 6);
    expect(p.weight).toBeCloseTo(weight, 6);
  });

  it('defaults to ε = 0.1 and puts its minimum at σ(m) = 1 − ε', () => {
    expect(DEFAULT_CDPO_EPSILON).toBe(0.1);
    // β = 0.5: m* = ln 9, z* = 2·ln 9 = 4.394449.
    const z = lossMinimumGap({ beta: 0.5, loss: 'cdpo' })!;
    expect(z).toBeCloseTo(4.394449, 5);
    expect(dpoPoint(z, { beta: 0.5, loss: 'cdpo' }).grad).toBeCloseTo(0, 6);
    expect(lossMinimumGap({ beta: 0.5, loss: 'cdpo', labelSmoothing: 0 })).toBeNull();
    expect(lossMinimumGap({ beta: 0.5, loss: 'sigmoid' })).toBeNull();
  });

  it('with ε = 0 is exactly the sigmoid loss', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.05, max: 4, noNaN: true }),
        fc.double({ min: -20, max: 20, noNaN: true }),
        (beta, z) => {
          const a = dpoPoint(z, { beta, loss: 'cdpo', labelSmoothing: 0 });
          const b = dpoPoint(z, { beta, loss: 'sigmoid' });
          expect(a.loss).toBe(b.loss);
          expect(a.weight).toBe(b.weight);
        },
      ),
    );
  });
});

describe('IPO', () => {
  // ℓ = (z − 1/(2β))², ∂ℓ/∂z = 2·(z − 1/(2β)), w = −(∂ℓ/∂z)/β.
  //   β = 0.1: target z* = 5.  z = 5: ℓ = 0, w = 0.  z = 0: ℓ = 25, ∂ℓ/∂z = −10, w = 100.
  //            z = 7: ℓ = 4, ∂ℓ/∂z = 4, w = −40 (past the target: pulled back).
  //   β = 0.5: z* = 1.  z = 0: ℓ = 1, ∂ℓ/∂z = −2, w = 4.  z = 3: ℓ = 4, ∂ℓ/∂z = 4, w = −8.
  it.each([
    [0.1, 5, 0, 0],
    [0.1, 0, 25, 100],
    [0.1, 7, 4, -40],
    [0.5, 0, 1, 4],
    [0.5, 3, 4, -8],
  ] as const)('β = %f, z = %f: ℓ = %f, w = %f', (beta, z, loss, weight) => {
    const p = dpoPoint(z, { beta, loss: 'ipo' });
    expect(p.loss).toBeCloseTo(loss, 5);
    expect(p.weight).toBeCloseTo(weight, 4);
  });

  it('has its minimum, loss 0, at the gap 1/(2β) the op targets (margin m = 1/2 for every β)', () => {
    fc.assert(
      fc.property(fc.double({ min: 0.05, max: 10, noNaN: true }), (beta) => {
        const z = lossMinimumGap({ beta, loss: 'ipo' })!;
        expect(z).toBeCloseTo(1 / (2 * beta), 12);
        const at = dpoPoint(z, { beta, loss: 'ipo' });
        expect(at.margin).toBeCloseTo(0.5, 5);
        expect(at.loss).toBeCloseTo(0, 5);
        expect(dpoPoint(z - 0.5, { beta, loss: 'ipo' }).loss).toBeGreaterThan(at.loss);
        expect(dpoPoint(z + 0.5, { beta, loss: 'ipo' }).loss).toBeGreaterThan(at.loss);
      }),
    );
  });

  it('ignores ε: the op applies label smoothing to the sigmoid loss only', () => {
    const a = dpoPoint(2, { beta: 0.5, loss: 'ipo', labelSmoothing: 0.3 });
    expect(a.loss).toBeCloseTo(1, 6); // (2 − 1)²
  });
});

describe('the curve', () => {
  it('samples evenly spaced gaps, ends included', () => {
    const curve = dpoCurve({ beta: 0.1, loss: 'sigmoid' }, { zMin: -10, zMax: 10, points: 5 });
    expect(curve.map((p) => p.gap)).toEqual([-10, -5, 0, 5, 10]);
    // z = −10, β = 0.1: m = −1, ℓ = ln(1 + e) = 1.313262; z = 0: ln 2.
    expect(curve[0]!.loss).toBeCloseTo(1.313262, 6);
    expect(curve[2]!.loss).toBeCloseTo(LN2, 6);
    expect(dpoCurve({ beta: 1, loss: 'ipo' })).toHaveLength(161);
  });
});

describe('bad input', () => {
  it.each([
    [() => dpoPoint(0, { beta: 0, loss: 'sigmoid' }), /dpoLoss: beta must be in \(0, ∞\), got 0/],
    [
      () => dpoPoint(0, { beta: Number.NaN, loss: 'ipo' }),
      /dpoLoss: beta must be in \(0, ∞\), got NaN/,
    ],
    [
      () => dpoPoint(0, { beta: 0.1, loss: 'cdpo', labelSmoothing: 0.5 }),
      /dpoLoss: labelSmoothing must be in \[0, 0\.5\), got 0\.5/,
    ],
    [
      () => dpoPoint(0, { beta: 0.1, loss: 'cdpo', labelSmoothing: -0.1 }),
      /labelSmoothing must be in \[0, 0\.5\), got -0\.1/,
    ],
    [
      () => dpoPoint(0, { beta: 0.1, loss: 'hinge' as never }),
      /dpoPoint: loss must be one of 'sigmoid', 'cdpo', 'ipo', got 'hinge'/,
    ],
    [
      () => dpoPoint(Number.POSITIVE_INFINITY, { beta: 0.1, loss: 'sigmoid' }),
      /dpoPoint: gap must be a finite number in \[-1e6, 1e6\], got Infinity/,
    ],
    [
      () => dpoPoint(1e40, { beta: 0.1, loss: 'sigmoid' }),
      /gap must be a finite number in \[-1e6, 1e6\], got 1e\+40/,
    ],
    [
      () => dpoCurve({ beta: 0.1, loss: 'sigmoid' }, { zMin: 1, zMax: 1 }),
      /dpoCurve: zMin and zMax must be finite with zMin < zMax, got 1 and 1/,
    ],
    [
      () => dpoCurve({ beta: 0.1, loss: 'sigmoid' }, { points: 1 }),
      /dpoCurve: points must be an integer in \[2, 2000\], got 1/,
    ],
    [
      () => dpoCurve({ beta: 0.1, loss: 'sigmoid' }, { points: 2.5 }),
      /points must be an integer in \[2, 2000\], got 2\.5/,
    ],
    [() => lossMinimumGap({ beta: -1, loss: 'ipo' }), /dpoLoss: beta must be in \(0, ∞\), got -1/],
  ] as const)('%#: %s', (call, message) => {
    expect(call).toThrow(message);
  });
});
