/**
 * Parity of kernels/nn/rotary.wgsl with rotaryForward / rotaryBackward; runs in Node (Dawn) and
 * in Chromium.
 */
import { describe, expect, it } from 'vitest';
import {
  encodeRotary,
  rotaryBackwardGpu,
  rotaryForwardGpu,
  rotaryTableF32,
} from '../../../src/gpu/kernels/nn/rotary';
import { OpInputError } from '../../../src/ops/errors';
import {
  rotaryBackward,
  rotaryForward,
  rotaryTable,
  type RotaryShape,
} from '../../../src/ops/nn/rotary';
import { testGpu } from '../../support/gpu';
import { maxAbsDiff, randomLogits } from '../../support/random';
import { PackedSlices } from './packed-slices';

const gpu = await testGpu();

// Inputs a, b are uniform in [−1, 1); the exact output is e = a·c − b·s (or b·c + a·s). The
// kernel's cos and sin are the table rounded to f32 (relative error ≤ u = 2^-24 each), and its two
// products and one sum round once each: |gpu − e| ≤ 2u(|a·c| + |b·s|) + u|e|. The CPU twin rounds
// its float64 result once: |cpu − e| ≤ u|e|. With |a·c| + |b·s| ≤ √(a² + b²) ≤ √2 and |e| ≤ √2,
// |gpu − cpu| ≤ 4√2·u = 3.4e-7 (a fused multiply-add only lowers it). A wrong angle, sign or
// index moves some output by far more (the lowest frequency turns 1 rad per position).
const TOLERANCE = 4e-7;

// [B, T, NH, C, positions, posOffset]: odd B·T, one head and many, head sizes 6–64 (half = 3 is
// not a power of two), positions up to 256 and offsets > 0.
const SHAPES: [number, number, number, number, number, number][] = [
  [1, 1, 1, 64, 1, 0],
  [3, 5, 1, 64, 8, 3],
  [5, 9, 2, 12, 20, 11],
  [1, 7, 4, 64, 16, 9],
  [3, 17, 8, 256, 64, 40],
  [2, 128, 4, 256, 256, 100],
  [1, 255, 8, 64, 256, 1],
];

describe.skipIf(!gpu)('rotary kernel vs CPU reference', () => {
  const device = gpu!;

  it.each(SHAPES)(
    'forward and backward match on B=%i T=%i NH=%i C=%i positions=%i posOffset=%i',
    async (...s) => {
      const [batch, seq, heads, channels, positions, posOffset] = s;
      const shape: RotaryShape = { batch, seq, heads, channels };
      const table = rotaryTable(positions, channels / heads, 10_000);
      const qkv = randomLogits(batch * seq * 3 * channels, 1, seq * 7 + channels);
      const forward = await rotaryForwardGpu(device, qkv, table, shape, posOffset);
      expect(maxAbsDiff(forward, rotaryForward(qkv, table, shape, posOffset))).toBeLessThan(
        TOLERANCE,
      );
      const backward = await rotaryBackwardGpu(device, qkv, table, shape, posOffset);
      expect(maxAbsDiff(backward, rotaryBackward(qkv, table, shape, posOffset))).toBeLessThan(
        TOLERANCE,
      );
    },
  );

  it('rotates in place on a slice at a 256-byte offset and writes nothing outside it', async () => {
    const shape: RotaryShape = { batch: 3, seq: 11, heads: 4, channels: 32 };
    const table = rotaryTable(20, 8, 10_000);
    const { cos, sin } = rotaryTableF32(table);
    const qkv = randomLogits(3 * 11 * 96, 1, 21);
    const dqkv = randomLogits(3 * 11 * 96, 1, 22);
    // qkv and dqkv in one buffer (both written), the tables in another (read-only bindings).
    const acts = new PackedSlices(device, { qkv, dqkv });
    const tables = new PackedSlices(device, { cos, sin });
    try {
      const batch = device.beginBatch('rotary slices');
      const tableShape = { ...shape, half: 4, positions: 20 };
      const tableRefs = { cos: tables.ref('cos'), sin: tables.ref('sin') };
      await encodeRotary(device, batch, { qkv: acts.ref('qkv'), ...tableRefs }, tableShape, {
        posOffset: 6,
      });
      await encodeRotary(device, batch, { qkv: acts.ref('dqkv'), ...tableRefs }, tableShape, {
        posOffset: 6,
        inverse: true,
      });
      batch.submit();
      const { slices, gapsIntact } = await acts.read();
      expect(gapsIntact).toBe(true);
      expect(maxAbsDiff(slices.qkv, rotaryForward(qkv, table, shape, 6))).toBeLessThan(TOLERANCE);
      expect(maxAbsDiff(slices.dqkv, rotaryBackward(dqkv, table, shape, 6))).toBeLessThan(
        TOLERANCE,
      );
      // v (channels 64…95 of each row) is not touched: the same bits.
      for (let r = 0; r < 33; r++) {
        const v = [r * 96 + 64, r * 96 + 96] as const;
        expect(slices.qkv.subarray(...v)).toEqual(qkv.subarray(...v));
      }
      expect((await tables.read()).gapsIntact).toBe(true);
    } finally {
      acts.release();
      tables.release();
    }
  });

  it('rejects the same bad input as the CPU reference, before any dispatch', async () => {
    const shape: RotaryShape = { batch: 2, seq: 3, heads: 2, channels: 8 };
    const table = rotaryTable(5, 4, 10_000);
    const created = device.pool.stats().created;
    await expect(rotaryForwardGpu(device, new Float32Array(143), table, shape)).rejects.toThrow(
      'rotaryForward: qkv must have B·T·3C = 2·3·24 = 144 elements, got 143',
    );
    await expect(rotaryBackwardGpu(device, new Float32Array(144), table, shape, 3)).rejects.toThrow(
      /rotaryBackward: posOffset must be an integer in \[0, 2\]/,
    );
    await expect(
      rotaryForwardGpu(device, new Float32Array(2 * 3 * 18), table, { ...shape, channels: 6 }),
    ).rejects.toThrow(OpInputError);
    expect(device.pool.stats().created).toBe(created);
  });

  it('encode rejects bad shapes and bindings that are too small, naming the field', async () => {
    const shape = { batch: 2, seq: 3, heads: 2, channels: 8, half: 2, positions: 5 };
    const slices = new PackedSlices(device, { qkv: 143, cos: 10, sin: 9, big: 144 });
    try {
      const batch = device.beginBatch('rotary bad shapes');
      const refs = { cos: slices.ref('cos'), sin: slices.ref('cos') };
      const cases: [Parameters<typeof encodeRotary>[2], typeof shape, object, RegExp][] = [
        [
          { ...refs, qkv: slices.ref('qkv') },
          shape,
          {},
          /rotaryForward: qkv binding must hold 144/,
        ],
        [
          { qkv: slices.ref('big'), cos: slices.ref('cos'), sin: slices.ref('sin') },
          shape,
          { inverse: true },
          /rotaryBackward: sin binding must hold 10 f32/,
        ],
        [{ ...refs, qkv: slices.ref('big') }, { ...shape, half: 4 }, {}, /table\.half must be/],
        [{ ...refs, qkv: slices.ref('big') }, { ...shape, heads: 3 }, {}, /channels must be a/],
        [{ ...refs, qkv: slices.ref('big') }, { ...shape, positions: 2 }, {}, /seq must be/],
        [
          { ...refs, qkv: slices.ref('big') },
          shape,
          { posOffset: 3 },
          /posOffset must be an integer in \[0, 2\]/,
        ],
      ];
      for (const [buffers, badShape, options, message] of cases) {
        const run = encodeRotary(device, batch, buffers, badShape, options);
        await expect(run).rejects.toThrow(OpInputError);
        await expect(run).rejects.toThrow(message);
      }
    } finally {
      slices.release();
    }
  });
});
