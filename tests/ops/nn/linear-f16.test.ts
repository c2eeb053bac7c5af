import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../../src/ops/errors';
import { linearF16BackwardInput, linearF16Forward } from '../../../src/ops/nn/linear-f16';
import { packF16 } from '../../../src/ops/nn/unpack-f16';
import { f16ToF32 } from '../../../src/util/half-float';
import { randomLogits } from '../../support/random';

// Hand-worked layer: rows 2, inDim 2, outDim 3, every weight exact in f16.
//   W = [[1, −2],    as halves 0x3C00, 0xC000 | 0x3800, 0x4200 | 0x0000, 0xBC00
//        [0.5, 3],   (two per word, the lower index in the low 16 bits)
//        [0, −1]]
//   x = [[1, 2], [−1, 4]]   b = [0.25, 0, 1]
//   y = x·Wᵀ + b: row 0: [1 − 4, 0.5 + 6, −2] + b = [−2.75, 6.5, −1]
//                 row 1: [−1 − 8, −0.5 + 12, −4] + b = [−8.75, 11.5, −3]
//   dy = [[1, 0, 2], [0, −1, 1]] → dx = dy·W: row 0 = [1, −2] + 2·[0, −1] = [1, −4]
//                                           row 1 = −[0.5, 3] + [0, −1] = [−0.5, −4]
const SHAPE = { rows: 2, inDim: 2, outDim: 3 };
const W = Uint32Array.from([0xc0003c00, 0x42003800, 0xbc000000]);
const X = Float32Array.from([1, 2, -1, 4]);
const B = Float32Array.from([0.25, 0, 1]);
const DY = Float32Array.from([1, 0, 2, 0, -1, 1]);

/** y[r, o] = Σ_i x[r, i]·W[o, i] read half by half from the words, in float64. */
function naiveForward(
  x: Float32Array,
  w: Uint32Array,
  rows: number,
  inDim: number,
  outDim: number,
) {
  const half = (i: number) => f16ToF32(i & 1 ? w[i >>> 1]! >>> 16 : w[i >>> 1]! & 0xffff);
  const y = new Float32Array(rows * outDim);
  for (let r = 0; r < rows; r++) {
    for (let o = 0; o < outDim; o++) {
      let sum = 0;
      for (let i = 0; i < inDim; i++) sum += x[r * inDim + i]! * half(o * inDim + i);
      y[r * outDim + o] = sum;
    }
  }
  return y;
}

describe('linear layer on f16 weights (CPU reference)', () => {
  it('forward matches the hand-worked values, with and without bias', () => {
    expect(Array.from(linearF16Forward(X, W, B, SHAPE))).toEqual([-2.75, 6.5, -1, -8.75, 11.5, -3]);
    expect(Array.from(linearF16Forward(X, W, undefined, SHAPE))).toEqual([
      -3, 6.5, -2, -9, 11.5, -4,
    ]);
  });

  it('dx = dy·W matches the hand-worked values, and adds into accumulate without changing it', () => {
    expect(Array.from(linearF16BackwardInput(DY, W, SHAPE))).toEqual([1, -4, -0.5, -4]);
    const accumulate = Float32Array.from([10, 20, 30, 40]);
    expect(Array.from(linearF16BackwardInput(DY, W, SHAPE, accumulate))).toEqual([
      11, 16, 29.5, 36,
    ]);
    expect(Array.from(accumulate)).toEqual([10, 20, 30, 40]);
  });

  it('forward on rounded random weights equals a half-by-half float64 loop', () => {
    const [rows, inDim, outDim] = [3, 10, 7];
    const { packed } = packF16(randomLogits(outDim * inDim, 0.5, 1));
    const x = randomLogits(rows * inDim, 1, 2);
    expect(linearF16Forward(x, packed, undefined, { rows, inDim, outDim })).toEqual(
      naiveForward(x, packed, rows, inDim, outDim),
    );
  });

  it('refuses an odd inDim, naming the field and why', () => {
    const shape = { rows: 1, inDim: 3, outDim: 2 };
    expect(() =>
      linearF16Forward(new Float32Array(3), new Uint32Array(3), undefined, shape),
    ).toThrow(
      'linearF16Forward: inDim must be even for f16 weights (each row of W is read as whole u32 pairs of halves), got 3',
    );
    expect(() => linearF16BackwardInput(new Float32Array(2), new Uint32Array(3), shape)).toThrow(
      /linearF16BackwardInput: inDim must be even/,
    );
  });

  it('refuses wrong lengths and types, naming the field and the size', () => {
    expect(() => linearF16Forward(X, new Uint32Array(4), B, SHAPE)).toThrow(
      'linearF16Forward: w must have outDim × inDim / 2 words = 3 elements, got 4',
    );
    expect(() =>
      linearF16Forward(X, new Float32Array(3) as unknown as Uint32Array, B, SHAPE),
    ).toThrow('linearF16Forward: w must be a Uint32Array of f16 pairs (packF16)');
    expect(() => linearF16Forward(new Float32Array(3), W, B, SHAPE)).toThrow(
      'linearF16Forward: x must have rows × inDim = 4 elements, got 3',
    );
    expect(() => linearF16Forward(X, W, new Float32Array(2), SHAPE)).toThrow(
      'linearF16Forward: b must have outDim = 3 elements, got 2',
    );
    expect(() => linearF16BackwardInput(new Float32Array(5), W, SHAPE)).toThrow(
      'linearF16BackwardInput: dy must have rows × outDim = 6 elements, got 5',
    );
    expect(() => linearF16BackwardInput(DY, W, SHAPE, new Float32Array(3))).toThrow(
      'linearF16BackwardInput: accumulate must have rows × inDim = 4 elements, got 3',
    );
    expect(() => linearF16Forward(X, W, B, { ...SHAPE, rows: 0 })).toThrow(OpInputError);
  });
});
