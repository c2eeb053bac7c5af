import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openFileSource } from '../../../src/cli/file-source';
import { blobSource, bytesSource } from '../../../src/models/hf/random-access-source';
import {
  readSafetensorsHeader,
  readTensorF16,
  readTensorF32,
  tensorNamed,
  tensorToF32,
} from '../../../src/models/hf/safetensors';
import { writeSafetensors } from '../../../src/models/hf/safetensors-writer';

/** A file written byte by byte from the format's description, not by the writer. */
function handWritten(header: string, data: number[]): Uint8Array<ArrayBuffer> {
  const json = [...header].map((c) => c.charCodeAt(0));
  const n = json.length;
  const length = [n & 255, (n >> 8) & 255, 0, 0, 0, 0, 0, 0]; // u64 little-endian
  return new Uint8Array([...length, ...json, ...data]);
}

const HAND_HEADER =
  '{"__metadata__":{"format":"pt"},' +
  '"b":{"dtype":"F16","shape":[1,3],"data_offsets":[4,10]},' +
  '"a":{"dtype":"BF16","shape":[2],"data_offsets":[0,4]},' +
  '"c":{"dtype":"F32","shape":[],"data_offsets":[10,14]}}';
// a: bf16 0x3f80 (1), 0xc040 (-3); b: f16 0x3c00 (1), 0x0001 (2^-24), 0xfbff (-65504);
// c: f32 0x40490fdb (π rounded to f32), little-endian, at an odd data offset (10).
const HAND_DATA = [
  0x80, 0x3f, 0x40, 0xc0, 0x00, 0x3c, 0x01, 0x00, 0xff, 0xfb, 0xdb, 0x0f, 0x49, 0x40,
];

describe('safetensors reader', () => {
  it('reads a hand-written file: metadata, tensors in data order, exact values', async () => {
    const header = await readSafetensorsHeader(bytesSource(handWritten(HAND_HEADER, HAND_DATA)));
    expect(header.metadata).toEqual({ format: 'pt' });
    expect(header.tensors.map((t) => t.name)).toEqual(['a', 'b', 'c']);
    expect(tensorNamed(header, 'b').shape).toEqual([1, 3]);
    expect(tensorNamed(header, 'c').shape).toEqual([]);
    expect([...(await tensorToF32(header, 'a'))]).toEqual([1, -3]);
    expect([...(await tensorToF32(header, 'b'))]).toEqual([1, 2 ** -24, -65504]);
    expect((await tensorToF32(header, 'c'))[0]).toBe(Math.fround(Math.PI));
  });

  it('reads f16 halves: F16 copied, BF16 and F32 rounded, overflow counted', async () => {
    const bytes = writeSafetensors([
      { name: 'h', dtype: 'F16', shape: [2], data: new Uint16Array([0x3555, 0x8001]) },
      // bf16 0x4780 = 65536 overflows f16; 0x3eab = 0.333984375 is f16 0x3558 exactly.
      { name: 'b', dtype: 'BF16', shape: [3], data: new Uint16Array([0x3eab, 0x4780, 0xc780]) },
      { name: 'f', dtype: 'F32', shape: [3], data: [1 + 2 ** -11, 1 + 3 * 2 ** -11, 70000] },
    ]);
    const header = await readSafetensorsHeader(bytesSource(bytes));
    const out = new Uint16Array(3);
    await readTensorF16(header, tensorNamed(header, 'h'), out);
    expect([...out.subarray(0, 2)]).toEqual([0x3555, 0x8001]);
    expect(await readTensorF16(header, tensorNamed(header, 'b'), out)).toEqual({ overflowed: 2 });
    expect([...out]).toEqual([0x3558, 0x7c00, 0xfc00]);
    // 1 + 2^-11 is a tie between 1 (0x3c00, even) and 1 + 2^-10; 1 + 3·2^-11 ties up to 0x3c02.
    expect(await readTensorF16(header, tensorNamed(header, 'f'), out)).toEqual({ overflowed: 1 });
    expect([...out]).toEqual([0x3c00, 0x3c02, 0x7c00]);
  });

  it('round-trips the writer, header padded to 8 bytes with spaces', async () => {
    const values = Float32Array.from({ length: 30 }, (_, i) => Math.sin(i) * 10);
    const bytes = writeSafetensors(
      [
        { name: 'x', dtype: 'F32', shape: [5, 6], data: values },
        { name: 'y', dtype: 'F16', shape: [3], data: [0.5, -2, 1024] },
      ],
      { note: 'test' },
    );
    const n = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    expect(n % 8).toBe(0);
    expect(bytes[8 + n - 1] === 0x20 || bytes[8 + n - 1] === 0x7d).toBe(true);
    const header = await readSafetensorsHeader(bytesSource(bytes));
    expect(header.dataStart).toBe(8 + n);
    expect(header.metadata).toEqual({ note: 'test' });
    expect([...(await tensorToF32(header, 'x'))]).toEqual([...values]);
    expect([...(await tensorToF32(header, 'y'))]).toEqual([0.5, -2, 1024]);
  });

  it('reads through a Blob and a Node file the same bytes', async () => {
    const bytes = handWritten(HAND_HEADER, HAND_DATA);
    const fromBlob = await readSafetensorsHeader(blobSource(new Blob([bytes]), 'x.safetensors'));
    expect([...(await tensorToF32(fromBlob, 'b'))]).toEqual([1, 2 ** -24, -65504]);
    const dir = mkdtempSync(join(tmpdir(), 'st-'));
    try {
      writeFileSync(join(dir, 'm.safetensors'), bytes);
      const file = await openFileSource(join(dir, 'm.safetensors'));
      const header = await readSafetensorsHeader(file);
      const target = new Float32Array(4);
      await readTensorF32(header, tensorNamed(header, 'a'), target.subarray(1, 3));
      expect([...target]).toEqual([0, 1, -3, 0]);
      await file.close();
    } finally {
      rmSync(dir, { recursive: true });
    }
  });

  describe('refuses malformed files, naming the problem', () => {
    const refuse = async (bytes: Uint8Array, message: RegExp) =>
      expect(readSafetensorsHeader(bytesSource(bytes, 'bad.safetensors'))).rejects.toThrow(message);
    const entry = (dtype: string, shape: number[], offsets: number[]) =>
      JSON.stringify({ dtype, shape, data_offsets: offsets });

    it('a header length past the bound or the file', async () => {
      const big = new Uint8Array(16);
      new DataView(big.buffer).setBigUint64(0, 100_000_001n, true);
      await refuse(big, /exceeds the 100000000-byte bound/);
      new DataView(big.buffer).setBigUint64(0, 9n, true);
      await refuse(big, /runs past the end/);
      await refuse(new Uint8Array(5), /too short/);
    });

    it('a header that is not a JSON object', async () => {
      await refuse(handWritten('[1,2]   ', []), /JSON object/);
      await refuse(handWritten('{"a":1,}', []), /not valid JSON/);
    });

    it('another dtype, naming the tensor', async () => {
      await refuse(
        handWritten(`{"w":${entry('I64', [1], [0, 8])}}`, Array(8).fill(0)),
        /tensor "w" has dtype "I64"; the lab reads F32, F16, BF16/,
      );
      await refuse(
        handWritten(`{"w":${entry('Q4', [1], [0, 1])}}`, [0]),
        /not a safetensors dtype/,
      );
    });

    it('a size that does not match the shape', async () => {
      await refuse(
        handWritten(`{"w":${entry('F32', [2, 2], [0, 12])}}`, Array(12).fill(0)),
        /span 12 bytes but shape \[2, 2\] of F32 needs 16/,
      );
    });

    it('gaps, overlaps and trailing bytes', async () => {
      const two = (b: number[]) => `{"p":${entry('F16', [2], [0, 4])},"q":${entry('F16', [2], b)}}`;
      await refuse(
        handWritten(two([6, 10]), Array(10).fill(0)),
        /"q" starts at data offset 6, expected 4 \(a gap/,
      );
      await refuse(handWritten(two([2, 6]), Array(6).fill(0)), /expected 4 \(it overlaps/);
      await refuse(
        handWritten(two([4, 8]), Array(9).fill(0)),
        /cover 8 bytes of data but the file holds 9/,
      );
      await refuse(
        handWritten(`{"p":${entry('F16', [2], [0, 4])}}`, [0, 0]),
        /cover 4 bytes of data but the file holds 2/,
      );
    });

    it('bad offsets and metadata', async () => {
      await refuse(handWritten(`{"p":${entry('F16', [1], [2, 0])}}`, []), /data_offsets must be/);
      await refuse(
        handWritten(`{"__metadata__":{"a":1}}`, []),
        /"__metadata__"."a" must be a string/,
      );
    });
  });
});
