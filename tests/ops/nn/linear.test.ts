import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../../src/ops/errors';
import {
  linearBackward,
  linearForward,
  linearInputGrad,
  type LinearShape,
} from '../../../src/ops/nn/linear';
import { dot, gradCheck, probeWeights, randomF64 } from '../../support/gradcheck';

// Hand-worked layer: rows 2, inDim 2, outDim 3.
//   x = [[1, 2],   W = [[1, 0],   b = [0.5, 0, −1]
//        [3, 4]]        [0, 1],
//                       [1, 1]]
//   y = x·Wᵀ + b: row 0: [1, 2, 1 + 2] + b = [1.5, 2, 2]; row 1: [3, 4, 7] + b = [3.5, 4, 6].
// Backward with dy = [[1, 0, 1], [0, 1, −1]]:
//   dx = dy·W: row 0 = 1·[1, 0] + 1·[1, 1] = [2, 1]; row 1 = [0, 1] − [1, 1] = [−1, 0].
//   dW[o, :] = Σ_r dy[r, o]·x[r, :]: o=0: [1, 2]; o=1: [3, 4]; o=2: [1, 2] − [3, 4] = [−2, −2].
//   db = Σ_r dy[r, :] = [1, 1, 0].
const SHAPE: LinearShape = { rows: 2, inDim: 2, outDim: 3 };
const X = new Float64Array([1, 2, 3, 4]);
const W = new Float64Array([1, 0, 0, 1, 1, 1]);
const BIAS = new Float64Array([0.5, 0, -1]);
const DY = new Float64Array([1, 0, 1, 0, 1, -1]);

describe('linear layer (CPU reference)', () => {
  it('forward matches the hand-worked values, with and without bias', () => {
    expect(Array.from(linearForward(X, W, BIAS, SHAPE))).toEqual([1.5, 2, 2, 3.5, 4, 6]);
    expect(Array.from(linearForward(X, W, undefined, SHAPE))).toEqual([1, 2, 3, 3, 4, 7]);
    const y32 = linearForward(new Float32Array(X), new Float32Array(W), undefined, SHAPE);
    expect(y32).toBeInstanceOf(Float32Array);
  });

  it('backward matches the hand-worked values', () => {
    const { dx, dw, db } = linearBackward(DY, X, W, SHAPE);
    expect(Array.from(dx)).toEqual([2, 1, -1, 0]);
    expect(Array.from(dw)).toEqual([1, 2, 3, 4, -2, -2]);
    expect(Array.from(db!)).toEqual([1, 1, 0]);
  });

  it('linearInputGrad is the backward dx alone (a frozen layer)', () => {
    expect(Array.from(linearInputGrad(DY, W, SHAPE))).toEqual([2, 1, -1, 0]);
    expect(() => linearInputGrad(DY, W, { ...SHAPE, inDim: 3 })).toThrow(
      /linearInputGrad: w must have outDim × inDim = 9 elements, got 6/,
    );
  });

  it('backward skips db without a bias and adds dW into accumulateDw', () => {
    const accumulateDw = new Float64Array([10, 10, 10, 10, 10, 10]);
    const { dw, db } = linearBackward(DY, X, W, SHAPE, { hasBias: false, accumulateDw });
    expect(db).toBeUndefined();
    expect(Array.from(dw)).toEqual([11, 12, 13, 14, 8, 8]);
    expect(Array.from(accumulateDw)).toEqual([10, 10, 10, 10, 10, 10]); // not modified
  });

  it('gradients match central differences (float64, L = Σ probe·y)', () => {
    const shape: LinearShape = { rows: 5, inDim: 7, outDim: 4 };
    const x = randomF64(5 * 7, 1, 1);
    const w = randomF64(4 * 7, 0.5, 2);
    const b = randomF64(4, 0.5, 3);
    const probe = probeWeights(5 * 4, 4);
    const loss = () => dot(probe, linearForward(x, w, b, shape));
    const grads = linearBackward(probe, x, w, shape);
    for (const [name, param, grad] of [
      ['dx', x, grads.dx],
      ['dW', w, grads.dw],
      ['db', b, grads.db!],
    ] as const) {
      const result = gradCheck(param, grad, loss);
      expect(result.maxRelError, `${name}: ${JSON.stringify(result.worst)}`).toBeLessThan(1e-7);
    }
  });

  const f = (n: number) => new Float32Array(n);
  it.each([
    [
      'rows = 0',
      () => linearForward(f(0), f(6), undefined, { rows: 0, inDim: 2, outDim: 3 }),
      /linearForward: rows must be an integer in \[1, 1048576\], got 0/,
    ],
    [
      'x length',
      () => linearForward(f(5), f(6), undefined, SHAPE),
      /x must have rows × inDim = 4 elements, got 5/,
    ],
    [
      'w length',
      () => linearForward(f(4), f(5), undefined, SHAPE),
      /w must have outDim × inDim = 6 elements, got 5/,
    ],
    [
      'b length',
      () => linearForward(f(4), f(6), f(2), SHAPE),
      /b must have outDim = 3 elements, got 2/,
    ],
    [
      'dy length',
      () => linearBackward(f(5), f(4), f(6), SHAPE),
      /linearBackward: dy must have rows × outDim = 6 elements, got 5/,
    ],
    [
      'accumulateDw length',
      () => linearBackward(f(6), f(4), f(6), SHAPE, { accumulateDw: f(3) }),
      /accumulateDw must have outDim × inDim = 6 elements, got 3/,
    ],
    [
      'hasBias not a boolean',
      () => linearBackward(f(6), f(4), f(6), SHAPE, { hasBias: 'no' as unknown as boolean }),
      /hasBias must be one of undefined, false, true, got 'no'/,
    ],
  ])('rejects bad input: %s', (_, call, message) => {
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(message);
  });
});
