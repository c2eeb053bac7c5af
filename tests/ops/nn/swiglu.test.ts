import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../../src/ops/errors';
import { swigluBackward, swigluForward } from '../../../src/ops/nn/swiglu';
import { dot, gradCheck, probeWeights, randomF64 } from '../../support/gradcheck';

describe('swigluForward (CPU reference)', () => {
  it('matches values worked by hand', () => {
    // silu(0) = 0; silu(ln 3) = ln 3 · σ(ln 3) = ln 3 · 3/4; silu(−ln 3) = −ln 3 · 1/4.
    // h = silu(g)·u with u = [5, 2, −4]: [0, 1.5·ln 3, ln 3].
    const h = swigluForward(
      new Float64Array([0, Math.log(3), -Math.log(3)]),
      new Float64Array([5, 2, -4]),
    );
    expect(h[0]).toBe(0);
    expect(h[1]).toBeCloseTo(1.5 * Math.log(3), 12);
    expect(h[2]).toBeCloseTo(Math.log(3), 12);
  });

  it('stays finite far out: silu(g) → g for large g and → 0 for very negative g', () => {
    const h = swigluForward(new Float32Array([1000, -1000]), new Float32Array([2, 2]));
    expect(h).toBeInstanceOf(Float32Array);
    expect(Array.from(h)).toEqual([2000, -0]);
  });
});

describe('swigluBackward (CPU reference)', () => {
  const n = 24;
  const g = randomF64(n, 4, 21);
  const u = randomF64(n, 2, 22);
  const probe = probeWeights(n, 23);
  const loss = () => dot(probe, swigluForward(g, u));
  const grads = swigluBackward(probe, g, u);

  it.each([
    ['dg', g, () => grads.dg],
    ['du', u, () => grads.du],
  ] as const)('%s matches central differences in float64', (_name, param, analytic) => {
    const result = gradCheck(param, analytic(), loss);
    expect(result.maxRelError, JSON.stringify(result.worst)).toBeLessThan(1e-6);
  });

  it('at g = 0: dg = dh·u/2 (silu′(0) = σ(0) = 1/2) and du = 0', () => {
    const d = swigluBackward(new Float64Array([3]), new Float64Array([0]), new Float64Array([5]));
    expect(d.dg[0]).toBeCloseTo(7.5, 12);
    expect(d.du[0]).toBe(0);
  });
});

describe('swiglu input checks', () => {
  const f = (n: number) => new Float32Array(n);
  it.each([
    ['empty g', () => swigluForward(f(0), f(0)), /swigluForward: g must have at least 1 element/],
    ['u length', () => swigluForward(f(3), f(2)), /u must have g.length = 3 elements, got 2/],
    [
      'backward dh length',
      () => swigluBackward(f(2), f(3), f(3)),
      /swigluBackward: dh must have g.length = 3 elements, got 2/,
    ],
  ])('rejects bad %s with an OpInputError naming it', (_name, call, pattern) => {
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(pattern);
  });
});
