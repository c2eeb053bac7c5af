import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../../src/ops/errors';
import {
  checkRotaryInput,
  rotaryBackward,
  rotaryForward,
  rotaryTable,
  type RotaryShape,
} from '../../../src/ops/nn/rotary';
import { dot, randomF64 } from '../../support/gradcheck';

/** The (q | k | v) part `part` of head h at row r, hs channels: a copy. */
function headOf(
  qkv: Float64Array,
  shape: RotaryShape,
  r: number,
  part: 0 | 1 | 2,
  h: number,
): Float64Array {
  const hs = shape.channels / shape.heads;
  const lo = r * 3 * shape.channels + part * shape.channels + h * hs;
  return qkv.slice(lo, lo + hs);
}

/**
 * RoPE written out independently of the op: for every row, part, head and pair it recomputes the
 * angle from the Hugging Face formula inv_freq = 1 / base^(2i / hs) and rotates the pair.
 */
function directRope(
  qkv: Float64Array,
  shape: RotaryShape,
  base: number,
  posOffset: number,
): Float64Array {
  const { batch, seq, heads, channels } = shape;
  const hs = channels / heads;
  const half = hs / 2;
  const out = qkv.slice();
  for (let b = 0; b < batch; b++) {
    for (let t = 0; t < seq; t++) {
      const p = posOffset + t;
      const row = (b * seq + t) * 3 * channels;
      for (const part of [0, channels]) {
        for (let h = 0; h < heads; h++) {
          for (let i = 0; i < half; i++) {
            const angle = p / base ** ((2 * i) / hs);
            const x = qkv[row + part + h * hs + i]!;
            const y = qkv[row + part + h * hs + i + half]!;
            out[row + part + h * hs + i] = x * Math.cos(angle) - y * Math.sin(angle);
            out[row + part + h * hs + i + half] = y * Math.cos(angle) + x * Math.sin(angle);
          }
        }
      }
    }
  }
  return out;
}

function maxAbs(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

describe('rotaryTable', () => {
  it('holds cos and sin of p / base^(2i / hs) (SmolLM2-like heads: hs 64, base 100,000)', () => {
    const table = rotaryTable(40, 64, 100_000);
    expect(table.half).toBe(32);
    expect(table.cos.length).toBe(40 * 32);
    let worst = 0;
    for (const p of [0, 1, 17, 39]) {
      for (const i of [0, 1, 15, 31]) {
        const angle = p / 100_000 ** ((2 * i) / 64);
        worst = Math.max(
          worst,
          Math.abs(table.cos[p * 32 + i]! - Math.cos(angle)),
          Math.abs(table.sin[p * 32 + i]! - Math.sin(angle)),
        );
      }
    }
    // base^(−2i/hs) and 1 / base^(2i/hs) may differ in the last bit; times p ≤ 39 that is ≲ 1e-14.
    expect(worst).toBeLessThan(1e-13);
    // Frequency 0 turns one radian per position; the last one barely turns: at p = 39 its angle
    // is x = 39 / 100,000^(62/64) = 5.6e-4 and sin x = x − x³/6 + … = x − 2.9e-11.
    expect(table.cos[3 * 32]).toBe(Math.cos(3));
    expect(table.sin[39 * 32 + 31]).toBeCloseTo(39 / 100_000 ** (62 / 64), 10);
    expect(table.sin[39 * 32 + 31]).not.toBeCloseTo(39 / 100_000 ** (62 / 64), 12);
  });
});

describe('rotaryForward (CPU reference)', () => {
  it('rotates a 2-channel head by p radians at position p (hand-worked)', () => {
    // hs = 2: one pair, inv_freq = base^0 = 1 whatever the base. q = k = (1, 0) at positions 0–3
    // lands on (cos p, sin p); v = (5, 6) stays.
    const shape: RotaryShape = { batch: 1, seq: 4, heads: 1, channels: 2 };
    const qkv = new Float64Array([1, 0, 1, 0, 5, 6].concat(...Array(3).fill([1, 0, 1, 0, 5, 6])));
    const out = rotaryForward(qkv, rotaryTable(4, 2, 10_000), shape);
    // cos 1 = 0.5403023058681398, sin 1 = 0.8414709848078965; cos 3 = −0.9899924966004454,
    // sin 3 = 0.1411200080598672 (tables of the circular functions).
    expect(Array.from(out.subarray(0, 6))).toEqual([1, 0, 1, 0, 5, 6]);
    [0.5403023058681398, 0.8414709848078965].forEach((e, i) => {
      expect(out[6 + i]).toBeCloseTo(e, 15);
      expect(out[8 + i]).toBeCloseTo(e, 15);
    });
    expect(out[18]).toBeCloseTo(-0.9899924966004454, 15);
    expect(out[19]).toBeCloseTo(0.1411200080598672, 15);
    expect(Array.from(out.subarray(22, 24))).toEqual([5, 6]);
  });

  it('turns the second pair by 90° when base^(−1/2)·p = π/2 (hand-worked)', () => {
    // hs = 4, half = 2, p = 2, base = (4/π)²: inv_freq = [1, π/4], angles [2 rad, π/2].
    // Pairs are (x0, x2) and (x1, x3) (rotate_half). q = (1, 2, 3, 4):
    //   pair (x1, x3) by 90°: (2, 4) → (−4, 2)
    //   pair (x0, x2) by 2 rad: x0' = cos 2 − 3 sin 2 = −0.41614683654714 − 2.72789228047705
    //                               = −3.14403911702419
    //                           x2' = 3 cos 2 + sin 2 = −1.24844050964143 + 0.90929742682568
    //                               = −0.33914308281575
    // k = (0, 1, 0, 0), a unit vector in the 90° plane, goes to (0, 0, 0, 1).
    const shape: RotaryShape = { batch: 1, seq: 1, heads: 1, channels: 4 };
    const table = rotaryTable(3, 4, (4 / Math.PI) ** 2);
    const qkv = new Float64Array([1, 2, 3, 4, 0, 1, 0, 0, 9, 8, 7, 6]);
    const out = rotaryForward(qkv, table, shape, 2);
    const expected = [-3.14403911702419, -4, -0.33914308281575, 2, 0, 0, 0, 1, 9, 8, 7, 6];
    expected.forEach((e, i) => expect(out[i]).toBeCloseTo(e, 13));
  });

  it('matches the formula written out directly on several heads, batches and offsets', () => {
    const cases: [RotaryShape, number, number][] = [
      [{ batch: 2, seq: 3, heads: 2, channels: 8 }, 10_000, 0],
      [{ batch: 3, seq: 5, heads: 4, channels: 64 }, 100_000, 7],
      [{ batch: 1, seq: 9, heads: 3, channels: 6 }, 1_000_000, 20],
    ];
    for (const [shape, base, posOffset] of cases) {
      const qkv = randomF64(shape.batch * shape.seq * 3 * shape.channels, 1, shape.channels);
      const table = rotaryTable(posOffset + shape.seq + 2, shape.channels / shape.heads, base);
      const out = rotaryForward(qkv, table, shape, posOffset);
      expect(maxAbs(out, directRope(qkv, shape, base, posOffset))).toBeLessThan(1e-14);
    }
  });

  it('makes q·k depend only on the distance between positions', () => {
    // A q at p1 and a k at p2 (one row each, taken from two calls at different offsets): their
    // per-head dot product is the same after shifting both by s.
    const shape: RotaryShape = { batch: 1, seq: 1, heads: 2, channels: 16 };
    const table = rotaryTable(300, 8, 10_000);
    const qkv = randomF64(3 * 16, 1, 11);
    const scores = (p1: number, p2: number): number[] => {
      const atP1 = rotaryForward(qkv, table, shape, p1);
      const atP2 = rotaryForward(qkv, table, shape, p2);
      return [0, 1].map((h) => dot(headOf(atP1, shape, 0, 0, h), headOf(atP2, shape, 0, 1, h)));
    };
    for (const [p1, p2] of [
      [5, 2],
      [0, 9],
      [13, 13],
    ] as const) {
      const ref = scores(p1, p2);
      for (const s of [1, 7, 100, 280]) {
        const shifted = scores(p1 + s, p2 + s);
        ref.forEach((r, h) => expect(Math.abs(shifted[h]! - r)).toBeLessThan(1e-12));
      }
    }
    // …and does change with the distance (the property is not vacuous).
    expect(Math.abs(scores(5, 2)[0]! - scores(5, 3)[0]!)).toBeGreaterThan(1e-3);
  });

  it('leaves v untouched, is the identity at position 0 and does not modify its input', () => {
    const shape: RotaryShape = { batch: 2, seq: 3, heads: 2, channels: 8 };
    const table = rotaryTable(10, 4, 10_000);
    const qkv = randomF64(2 * 3 * 24, 1, 3);
    const before = qkv.slice();
    const out = rotaryForward(qkv, table, shape, 4);
    expect(qkv).toEqual(before);
    for (let r = 0; r < 6; r++) {
      for (let h = 0; h < 2; h++)
        expect(headOf(out, shape, r, 2, h)).toEqual(headOf(qkv, shape, r, 2, h));
    }
    // Rows at t = 0 with posOffset 0 are position 0: cos 0 = 1, sin 0 = 0, exactly the input.
    const atZero = rotaryForward(qkv, table, shape, 0);
    for (const b of [0, 1]) {
      const row = b * 3 * 24;
      expect(atZero.subarray(row, row + 24)).toEqual(qkv.subarray(row, row + 24));
    }
    // …while the rotated rows differ from the input (q of t = 1 at position 5).
    expect(maxAbs(headOf(out, shape, 1, 0, 0), headOf(qkv, shape, 1, 0, 0))).toBeGreaterThan(0.01);
  });

  it('with posOffset rotates like the later rows of a longer sequence', () => {
    // T = 7 from position 0 vs T = 4 from position 3: rows t = 3…6 of the long one must equal the
    // short one bit for bit (same table entries, same arithmetic).
    const long: RotaryShape = { batch: 2, seq: 7, heads: 2, channels: 12 };
    const short: RotaryShape = { ...long, seq: 4 };
    const table = rotaryTable(16, 6, 10_000);
    const width = 3 * 12;
    const qkvLong = randomF64(2 * 7 * width, 1, 5);
    const qkvShort = new Float64Array(2 * 4 * width);
    for (const b of [0, 1]) {
      qkvShort.set(qkvLong.subarray((b * 7 + 3) * width, (b * 7 + 7) * width), b * 4 * width);
    }
    const outLong = rotaryForward(qkvLong, table, long);
    const outShort = rotaryForward(qkvShort, table, short, 3);
    for (const b of [0, 1]) {
      expect(outShort.subarray(b * 4 * width, (b + 1) * 4 * width)).toEqual(
        outLong.subarray((b * 7 + 3) * width, (b * 7 + 7) * width),
      );
    }
  });

  it('returns Float32Array for Float32Array input: the float64 result rounded once', () => {
    const shape: RotaryShape = { batch: 2, seq: 5, heads: 4, channels: 32 };
    const table = rotaryTable(8, 8, 10_000);
    const x64 = randomF64(2 * 5 * 96, 1, 9);
    const x32 = new Float32Array(x64);
    const out32 = rotaryForward(x32, table, shape, 3);
    expect(out32).toBeInstanceOf(Float32Array);
    expect(out32).toEqual(new Float32Array(rotaryForward(new Float64Array(x32), table, shape, 3)));
    expect(rotaryBackward(x32, table, shape, 3)).toBeInstanceOf(Float32Array);
  });
});

describe('rotaryBackward (CPU reference)', () => {
  const shape: RotaryShape = { batch: 2, seq: 3, heads: 4, channels: 32 };
  const table = rotaryTable(12, 8, 10_000);
  const n = 2 * 3 * 96;

  it('is the adjoint of the forward: <forward(x), y> = <x, backward(y)>', () => {
    for (const [seed, posOffset] of [
      [1, 0],
      [2, 5],
      [3, 9],
    ] as const) {
      const x = randomF64(n, 1, seed);
      const y = randomF64(n, 1, seed + 100);
      const lhs = dot(rotaryForward(x, table, shape, posOffset), y);
      const rhs = dot(x, rotaryBackward(y, table, shape, posOffset));
      expect(Math.abs(lhs - rhs)).toBeLessThan(1e-12);
    }
  });

  it('undoes the forward: backward(forward(x)) = x, and leaves dv as it is', () => {
    const x = randomF64(n, 1, 4);
    expect(
      maxAbs(rotaryBackward(rotaryForward(x, table, shape, 6), table, shape, 6), x),
    ).toBeLessThan(1e-15);
    expect(
      maxAbs(rotaryForward(rotaryBackward(x, table, shape, 6), table, shape, 6), x),
    ).toBeLessThan(1e-15);
    const dx = rotaryBackward(x, table, shape, 6);
    for (let r = 0; r < 6; r++) {
      for (let h = 0; h < 4; h++)
        expect(headOf(dx, shape, r, 2, h)).toEqual(headOf(x, shape, r, 2, h));
    }
    // The backward is not the forward (sin flips sign).
    expect(maxAbs(dx, rotaryForward(x, table, shape, 6))).toBeGreaterThan(0.01);
  });
});

describe('rotary input checks', () => {
  const shape: RotaryShape = { batch: 2, seq: 3, heads: 2, channels: 8 };
  const table = rotaryTable(5, 4, 10_000);
  const qkv = new Float64Array(2 * 3 * 24);

  it.each<[string, () => unknown, string]>([
    ['odd head size', () => rotaryTable(5, 3, 10_000), 'rotaryTable: headSize must be even'],
    ['head size 0', () => rotaryTable(5, 0, 10_000), 'headSize must be an integer in [2, 1024]'],
    [
      'too many positions',
      () => rotaryTable(2 ** 16 + 1, 4, 10_000),
      'positions must be an integer in [1, 65536], got 65537',
    ],
    ['base 1', () => rotaryTable(5, 4, 1), 'rotaryTable: base must be in (1, ∞), got 1'],
    ['base 0.5', () => rotaryTable(5, 4, 0.5), 'base must be in (1, ∞), got 0.5'],
    ['base NaN', () => rotaryTable(5, 4, NaN), 'base must be in (1, ∞), got NaN'],
    [
      'odd head size in the shape',
      () => rotaryForward(new Float64Array(2 * 3 * 18), table, { ...shape, channels: 6 }),
      'rotaryForward: channels / heads (head size) must be even (rotation pairs i, i + hs/2), got 3',
    ],
    [
      'channels not a multiple of heads',
      () => rotaryForward(new Float64Array(2 * 3 * 27), table, { ...shape, channels: 9 }),
      'channels must be a multiple of heads (2), got 9',
    ],
    [
      'a table for another head size',
      () => rotaryForward(new Float64Array(2 * 3 * 48), table, { ...shape, channels: 16 }),
      'table.half must be head size / 2 = 16 / 2 / 2 = 4, got 2',
    ],
    [
      'posOffset + seq past the table',
      () => rotaryForward(qkv, table, shape, 3),
      'posOffset must be an integer in [0, 2] (posOffset + seq 3 ≤ table.positions 5), got 3',
    ],
    [
      'negative posOffset',
      () => rotaryBackward(qkv, table, shape, -1),
      'rotaryBackward: posOffset',
    ],
    [
      'seq longer than the table',
      () => rotaryForward(new Float64Array(6 * 3 * 24), table, { ...shape, seq: 6 }),
      'seq must be an integer in [1, 5], got 6',
    ],
    [
      'fractional batch',
      () => rotaryForward(qkv, table, { ...shape, batch: 1.5 }),
      'batch must be',
    ],
    ['zero heads', () => rotaryForward(qkv, table, { ...shape, heads: 0 }), 'heads must be'],
    [
      'wrong length',
      () => rotaryForward(new Float64Array(143), table, shape),
      'qkv must have B·T·3C = 2·3·24 = 144 elements, got 143',
    ],
    [
      'a truncated table',
      () => checkRotaryInput('op', 144, { ...table, sin: table.sin.subarray(1) }, shape, 0),
      'op: table.sin must have positions × half = 5 × 2 = 10 elements, got 9',
    ],
  ])('rejects %s', (_, run, message) => {
    expect(run).toThrow(OpInputError);
    expect(run).toThrow(message);
  });
});
