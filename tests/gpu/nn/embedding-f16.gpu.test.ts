/**
 * Parity of kernels/nn/embedding_f16.wgsl with its CPU twin: the halves widened by unpackF16 and
 * gathered by embeddingForward (no position table). Widening is exact, so the rows must match
 * bit for bit. Runs in Node (Dawn) and Chromium.
 */
import { describe, expect, it } from 'vitest';
import { embeddingF16Gpu } from '../../../src/gpu/kernels/nn/embedding-f16';
import { embeddingForward } from '../../../src/ops/nn/embedding';
import { packF16, unpackF16 } from '../../../src/ops/nn/unpack-f16';
import { testGpu } from '../../support/gpu';
import { randomLogits as uniform, seededRandom } from '../../support/random';

const gpu = await testGpu();

function cpuRows(tokens: Int32Array, packed: Uint32Array, vocab: number, channels: number) {
  const wte = unpackF16(packed, vocab * channels);
  const shape = { batch: 1, seq: tokens.length, maxSeq: tokens.length, channels, vocab };
  return embeddingForward(tokens, wte, undefined, shape);
}

describe.skipIf(!gpu)('embedding_f16 kernel vs CPU twin', () => {
  const device = gpu!;

  it.each([
    [1, 2, 1],
    [7, 64, 400],
    [33, 576, 1000],
  ])('gathers %i rows of width %i from a vocabulary of %i exactly', async (rows, C, V) => {
    const { packed } = packF16(uniform(V * C, 2, rows * 31 + C));
    const random = seededRandom(rows + V);
    const tokens = Int32Array.from({ length: rows }, () => Math.floor(random() * V));
    tokens[0] = V - 1; // the last row of the table
    const shape = { rows, channels: C, vocab: V };
    const actual = await embeddingF16Gpu(device, tokens, packed, shape);
    expect(Array.from(actual)).toEqual(Array.from(cpuRows(tokens, packed, V, C)));
  });

  it('refuses an odd width, a wrong table size and an id out of range, naming them', async () => {
    const packed = new Uint32Array(6);
    const ids = Int32Array.of(0, 1);
    await expect(
      embeddingF16Gpu(device, ids, packed, { rows: 2, channels: 3, vocab: 4 }),
    ).rejects.toThrow(/channels must be even/);
    await expect(
      embeddingF16Gpu(device, ids, packed, { rows: 2, channels: 4, vocab: 4 }),
    ).rejects.toThrow(/wte must have V·C\/2 = 8 words, got 6/);
    await expect(
      embeddingF16Gpu(device, Int32Array.of(0, 3), packed, { rows: 2, channels: 4, vocab: 3 }),
    ).rejects.toThrow(/tokens must be ids in \[0, 3\).*index 1/);
  });
});
