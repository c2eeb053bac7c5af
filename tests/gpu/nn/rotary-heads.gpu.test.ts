/**
 * Parity of kernels/nn/rotary_heads.wgsl with rotaryHeadsForward / rotaryHeadsBackward
 * (src/ops/nn/rotary-heads.ts); runs in Node (Dawn) and in Chromium.
 */
import { describe, expect, it } from 'vitest';
import { rotaryTableF32 } from '../../../src/gpu/kernels/nn/rotary';
import {
  encodeRotaryHeads,
  rotaryHeadsBackwardGpu,
  rotaryHeadsForwardGpu,
} from '../../../src/gpu/kernels/nn/rotary-heads';
import { OpInputError } from '../../../src/ops/errors';
import { rotaryTable } from '../../../src/ops/nn/rotary';
import {
  rotaryHeadsBackward,
  rotaryHeadsForward,
  type RotaryHeadsShape,
} from '../../../src/ops/nn/rotary-heads';
import { testGpu } from '../../support/gpu';
import { maxAbsDiff, randomLogits, seededRandom } from '../../support/random';
import { PackedSlices } from './packed-slices';

const gpu = await testGpu();

// As tests/gpu/nn/rotary.gpu.test.ts: inputs in [−1, 1), cos and sin rounded to f32 and two
// products and a sum in f32 against a float64 result rounded once: |gpu − cpu| ≤ 4√2·2^-24 =
// 3.4e-7. A wrong position, angle, sign or pair moves some output by far more.
const TOLERANCE = 4e-7;

/** Positions in [0, tablePositions), in no order: rows of a batch at different steps. */
function randomPositions(rows: number, tablePositions: number, seed: number): Int32Array {
  const random = seededRandom(seed);
  return Int32Array.from({ length: rows }, () => Math.floor(random() * tablePositions));
}

// [rows, heads, headSize, table positions, rope base]: one row, q heads (NH) and k heads (NKV = 1),
// hs = 2, 6 (half = 3), 64 and 128, SmolLM2's and Qwen2.5's bases.
const SHAPES: [number, number, number, number, number][] = [
  [1, 1, 2, 1, 10_000],
  [7, 3, 6, 9, 10_000],
  [33, 9, 64, 200, 100_000],
  [5, 1, 64, 2048, 100_000],
  [12, 14, 128, 64, 1_000_000],
];

describe.skipIf(!gpu)('rotary_heads kernel vs CPU reference', () => {
  const device = gpu!;

  it.each(SHAPES)(
    'forward and backward match on rows=%i heads=%i hs=%i table=%i base=%i',
    async (rows, heads, headSize, positions, base) => {
      const shape: RotaryHeadsShape = { rows, heads, headSize };
      const table = rotaryTable(positions, headSize, base);
      const x = randomLogits(rows * heads * headSize, 1, rows * 13 + headSize);
      const pos = randomPositions(rows, positions, rows + heads);
      const forward = await rotaryHeadsForwardGpu(device, x, pos, table, shape);
      expect(maxAbsDiff(forward, rotaryHeadsForward(x, pos, table, shape))).toBeLessThan(TOLERANCE);
      const backward = await rotaryHeadsBackwardGpu(device, x, pos, table, shape);
      expect(maxAbsDiff(backward, rotaryHeadsBackward(x, pos, table, shape))).toBeLessThan(
        TOLERANCE,
      );
    },
  );

  it('rotates in place and into a separate out on slices, writing nothing outside them', async () => {
    const shape: RotaryHeadsShape = { rows: 10, heads: 4, headSize: 16 };
    const table = rotaryTable(30, 16, 10_000);
    const { cos, sin } = rotaryTableF32(table);
    const x = randomLogits(10 * 4 * 16, 1, 5);
    const dx = randomLogits(10 * 4 * 16, 1, 6);
    const pos = randomPositions(10, 30, 7);
    // x is bound read-only when out is separate, so out lives in another buffer (WebGPU rejects
    // one buffer bound read-only and writable in a dispatch, even at disjoint ranges).
    const acts = new PackedSlices(device, { x, dx });
    const outs = new PackedSlices(device, { out: x.length });
    const inputs = new PackedSlices(device, { cos, sin });
    const positions = device.upload(Uint32Array.from(pos), 'positions');
    try {
      const batch = device.beginBatch('rotary heads slices');
      const common = { positions, cos: inputs.ref('cos'), sin: inputs.ref('sin') };
      const tableShape = { ...shape, tablePositions: 30 };
      // x → out (forward, separate), then dx in place (backward).
      await encodeRotaryHeads(
        device,
        batch,
        { x: acts.ref('x'), out: outs.ref('out'), ...common },
        tableShape,
      );
      await encodeRotaryHeads(device, batch, { x: acts.ref('dx'), ...common }, tableShape, {
        inverse: true,
      });
      batch.submit();
      const { slices, gapsIntact } = await acts.read();
      expect(gapsIntact).toBe(true);
      expect(slices.x).toEqual(x); // a separate out leaves x as it was
      const written = await outs.read();
      expect(written.gapsIntact).toBe(true);
      expect(maxAbsDiff(written.slices.out, rotaryHeadsForward(x, pos, table, shape))).toBeLessThan(
        TOLERANCE,
      );
      expect(maxAbsDiff(slices.dx, rotaryHeadsBackward(dx, pos, table, shape))).toBeLessThan(
        TOLERANCE,
      );
    } finally {
      acts.release();
      outs.release();
      inputs.release();
      device.pool.release(positions);
    }
  });

  it('a position past the table makes its row NaN on the encode path, no other row', async () => {
    const shape = { rows: 3, heads: 2, headSize: 4, tablePositions: 5 };
    const table = rotaryTable(5, 4, 10_000);
    const { cos, sin } = rotaryTableF32(table);
    const x = randomLogits(3 * 2 * 4, 1, 8);
    const held = [
      device.upload(x, 'x'),
      device.upload(new Uint32Array([1, 5, 4]), 'positions'),
      device.upload(cos, 'cos'),
      device.upload(sin, 'sin'),
    ] as const;
    try {
      const batch = device.beginBatch('rotary heads bad position');
      const [xb, positions, cosb, sinb] = held;
      await encodeRotaryHeads(device, batch, { x: xb, positions, cos: cosb, sin: sinb }, shape);
      batch.submit();
      const out = await device.readF32(xb, x.length);
      expect(out.subarray(8, 16).every(Number.isNaN)).toBe(true);
      const good = rotaryHeadsForward(x, new Int32Array([1, 0, 4]), table, shape);
      expect(maxAbsDiff(out.subarray(0, 8), good.subarray(0, 8))).toBeLessThan(TOLERANCE);
      expect(maxAbsDiff(out.subarray(16), good.subarray(16))).toBeLessThan(TOLERANCE);
    } finally {
      for (const buffer of held) device.pool.release(buffer);
    }
  });

  it('rejects bad input naming the field, before any dispatch', async () => {
    const shape: RotaryHeadsShape = { rows: 2, heads: 2, headSize: 4 };
    const table = rotaryTable(5, 4, 10_000);
    const pos = new Int32Array([0, 4]);
    const created = device.pool.stats().created;
    await expect(
      rotaryHeadsForwardGpu(device, new Float32Array(15), pos, table, shape),
    ).rejects.toThrow(
      'rotaryHeadsForward: x must have rows × heads × headSize = 16 elements, got 15',
    );
    await expect(
      rotaryHeadsBackwardGpu(device, new Float32Array(16), new Int32Array([0, 5]), table, shape),
    ).rejects.toThrow(/rotaryHeadsBackward: positions must be integers in \[0, 4\]/);
    await expect(
      rotaryHeadsForwardGpu(device, new Float32Array(12), pos, table, { ...shape, headSize: 3 }),
    ).rejects.toThrow(OpInputError);
    expect(device.pool.stats().created).toBe(created);
    const slices = new PackedSlices(device, { x: 15, table: 10 });
    const positions = device.upload(new Uint32Array(2), 'positions');
    try {
      const batch = device.beginBatch('unused');
      const refs = { positions, cos: slices.ref('table'), sin: slices.ref('table') };
      await expect(
        encodeRotaryHeads(
          device,
          batch,
          { x: slices.ref('x'), ...refs },
          { ...shape, tablePositions: 5 },
        ),
      ).rejects.toThrow(/rotaryHeadsForward: x binding must hold|x must bind at least 16 f32/);
      await expect(
        encodeRotaryHeads(
          device,
          batch,
          { x: slices.ref('x'), ...refs },
          { ...shape, tablePositions: 0 },
        ),
      ).rejects.toThrow(/tablePositions/);
    } finally {
      slices.release();
      device.pool.release(positions);
    }
  });
});
