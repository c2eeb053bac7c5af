import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../../src/ops/errors';
import {
  ACTIVATIONS,
  type Activation,
  activationBackward,
  activationForward,
} from '../../../src/ops/nn/activation';
import { dot, gradCheck, probeWeights, randomF64 } from '../../support/gradcheck';

describe('activationForward (CPU reference)', () => {
  it('GELU (tanh approximation) at 0, 1, −1, worked by hand', () => {
    // gelu(x) = 0.5·x·(1 + tanh(u)), u = √(2/π)·(x + 0.044715·x³), √(2/π) = 0.7978845608.
    // x = 0: 0.5·0·(…) = 0.
    // x = 1: u = 0.7978845608 · 1.044715 = 0.7978845608 + 0.0356774 = 0.8335620;
    //        tanh(u) = (e^{2u} − 1)/(e^{2u} + 1), e^{1.667124} = 4.953032 · e^{0.067124}
    //        = 4.953032 · 1.069428 = 5.296912 → tanh = 4.296912 / 6.296912 = 0.682383;
    //        gelu(1) = 0.5 · 1.682383 = 0.841192.
    // x = −1: u = −0.8335620 (odd), tanh = −0.682383; gelu(−1) = 0.5·(−1)·0.317617 = −0.158808.
    const y = activationForward(new Float64Array([0, 1, -1]), 'gelu');
    expect(y[0]).toBe(0);
    expect(y[1]).toBeCloseTo(0.841192, 5);
    expect(y[2]).toBeCloseTo(-0.158808, 5);
  });

  it('tanh and relu, worked by hand', () => {
    // tanh(0) = 0, tanh(ln 2) = (4 − 1)/(4 + 1) = 0.6; relu: max(0, x).
    const t = activationForward(new Float64Array([0, Math.log(2), -Math.log(2)]), 'tanh');
    expect(Array.from(t).map((v) => +v.toFixed(12))).toEqual([0, 0.6, -0.6]);
    const r = activationForward(new Float32Array([-2, 0, 0.5, 3]), 'relu');
    expect(r).toBeInstanceOf(Float32Array);
    expect(Array.from(r)).toEqual([0, 0, 0.5, 3]);
  });

  it('GELU tends to x for large x and to 0 for very negative x, with no NaN', () => {
    const y = activationForward(new Float32Array([30, -30, 1e6, -1e6]), 'gelu');
    expect(Array.from(y)).toEqual([30, -0, 1e6, -0]);
  });

  it('derivatives at hand-worked points', () => {
    // gelu′(0) = 0.5·(1 + 0) + 0 = 0.5. tanh′(ln 2) = 1 − 0.36 = 0.64.
    // relu′: 0 at x = 0 and below, 1 above (PyTorch's convention at the kink).
    expect(activationBackward(new Float64Array([1]), new Float64Array([0]), 'gelu')[0]).toBe(0.5);
    expect(
      activationBackward(new Float64Array([2]), new Float64Array([Math.log(2)]), 'tanh')[0],
    ).toBeCloseTo(1.28, 12);
    const dr = activationBackward(
      new Float64Array([5, 5, 5]),
      new Float64Array([-1, 0, 1]),
      'relu',
    );
    expect(Array.from(dr)).toEqual([0, 0, 5]);
  });

  it.each(ACTIVATIONS)('%s backward matches central differences in float64', (kind: Activation) => {
    // Values kept ≥ 0.05 away from 0 so that relu's kink is never inside x ± h.
    const x = randomF64(40, 3, 7).map((v) => (Math.abs(v) < 0.05 ? v + 0.1 : v));
    const w = probeWeights(x.length, 8);
    const dx = activationBackward(w, x, kind);
    const result = gradCheck(x, dx, () => dot(w, activationForward(x, kind)));
    expect(result.maxRelError, JSON.stringify(result.worst)).toBeLessThan(1e-6);
  });

  it.each([
    [
      'kind',
      () => activationForward(new Float32Array(2), 'swish' as Activation),
      /kind must be one of 'gelu', 'tanh', 'relu', got 'swish'/,
    ],
    [
      'empty x',
      () => activationForward(new Float32Array(0), 'relu'),
      /x must have at least 1 element/,
    ],
    [
      'dy length',
      () => activationBackward(new Float32Array(3), new Float32Array(2), 'tanh'),
      /activationBackward: dy must have x.length = 2 elements, got 3/,
    ],
    [
      'backward kind',
      () => activationBackward(new Float32Array(2), new Float32Array(2), 'GELU' as Activation),
      /activationBackward: kind must be one of/,
    ],
  ])('rejects bad %s with an OpInputError naming it', (_name, call, pattern) => {
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(pattern);
  });
});
