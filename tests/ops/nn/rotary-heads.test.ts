import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../../src/ops/errors';
import { rotaryForward, rotaryTable } from '../../../src/ops/nn/rotary';
import { rotaryHeadsBackward, rotaryHeadsForward } from '../../../src/ops/nn/rotary-heads';
import { dot, randomF64 } from '../../support/gradcheck';

describe('rotaryHeadsForward (CPU reference)', () => {
  it('rotates a pair by hand: hs = 2, base irrelevant (one frequency, inv_freq = 1)', () => {
    // half = 1, so angle = p: the row at position 0 stays, the row at position 2 turns by 2 rad.
    const table = rotaryTable(3, 2, 10_000);
    const x = new Float64Array([3, 4, 3, 4]); // rows at positions 0 and 2, one head each
    const out = rotaryHeadsForward(x, new Int32Array([0, 2]), table, {
      rows: 2,
      heads: 1,
      headSize: 2,
    });
    expect(Array.from(out.slice(0, 2))).toEqual([3, 4]);
    expect(out[2]).toBeCloseTo(3 * Math.cos(2) - 4 * Math.sin(2), 14);
    expect(out[3]).toBeCloseTo(4 * Math.cos(2) + 3 * Math.sin(2), 14);
  });

  it('equals rotary.ts on q and k of a fused qkv at consecutive positions', () => {
    const B = 2;
    const T = 5;
    const NH = 3;
    const hs = 8;
    const C = NH * hs;
    const offset = 4;
    const table = rotaryTable(16, hs, 100_000);
    const qkv = randomF64(B * T * 3 * C, 2, 41);
    const fused = rotaryForward(qkv, table, { batch: B, seq: T, heads: NH, channels: C }, offset);
    const part = (x: Float64Array, which: number) => {
      const out = new Float64Array(B * T * C);
      for (let r = 0; r < B * T; r++) {
        out.set(x.subarray(r * 3 * C + which * C, r * 3 * C + (which + 1) * C), r * C);
      }
      return out;
    };
    const positions = Int32Array.from({ length: B * T }, (_, r) => offset + (r % T));
    for (const which of [0, 1]) {
      const mine = rotaryHeadsForward(part(qkv, which), positions, table, {
        rows: B * T,
        heads: NH,
        headSize: hs,
      });
      const theirs = part(fused, which);
      for (let i = 0; i < mine.length; i++) expect(mine[i]).toBe(theirs[i]);
    }
  });

  it('backward is the transpose: <R x, y> = <x, Rᵀ y>, and Rᵀ R x = x', () => {
    const shape = { rows: 4, heads: 2, headSize: 6 };
    const table = rotaryTable(40, 6, 10_000);
    const positions = new Int32Array([0, 7, 39, 3]);
    const x = randomF64(48, 1, 42);
    const y = randomF64(48, 1, 43);
    const rx = rotaryHeadsForward(x, positions, table, shape);
    const rty = rotaryHeadsBackward(y, positions, table, shape);
    expect(dot(rx, y)).toBeCloseTo(dot(x, rty), 13);
    const back = rotaryHeadsBackward(rx, positions, table, shape);
    for (let i = 0; i < x.length; i++) expect(back[i]).toBeCloseTo(x[i]!, 14);
  });

  it('keeps f32 in, f32 out', () => {
    const out = rotaryHeadsForward(
      new Float32Array(4),
      new Int32Array([1]),
      rotaryTable(2, 4, 1e4),
      {
        rows: 1,
        heads: 1,
        headSize: 4,
      },
    );
    expect(out).toBeInstanceOf(Float32Array);
  });
});

describe('rotaryHeads input checks', () => {
  const table = rotaryTable(8, 4, 10_000);
  const shape = { rows: 2, heads: 2, headSize: 4 };
  const x = new Float32Array(16);
  it.each([
    [
      'odd headSize',
      () =>
        rotaryHeadsForward(new Float32Array(6), new Int32Array(2), table, {
          ...shape,
          headSize: 3,
        }),
      /headSize must be even/,
    ],
    [
      'table of another head size',
      () =>
        rotaryHeadsForward(new Float32Array(32), new Int32Array(2), table, {
          ...shape,
          headSize: 8,
        }),
      /table.half must be headSize \/ 2 = 4, got 2/,
    ],
    [
      'x length',
      () => rotaryHeadsForward(new Float32Array(15), new Int32Array(2), table, shape),
      /rotaryHeadsForward: x must have rows × heads × headSize = 16 elements, got 15/,
    ],
    [
      'positions length',
      () => rotaryHeadsBackward(x, new Int32Array(3), table, shape),
      /rotaryHeadsBackward: positions must have rows = 2 elements, got 3/,
    ],
    [
      'a position past the table',
      () => rotaryHeadsForward(x, new Int32Array([0, 8]), table, shape),
      /positions must be integers in \[0, 7\] \(the table's positions\), but row 1 is 8/,
    ],
  ])('rejects %s with an OpInputError naming it', (_name, call, pattern) => {
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(pattern);
  });
});
