/**
 * The protobuf wire format: golden bytes worked out by hand (shown next to each case), round trips
 * (fast-check), and refusals of truncated and overlong input naming the byte offset.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OnnxError } from '../../src/onnx/onnx-error';
import {
  ProtoReader,
  ProtoWriter,
  protoInt,
  readRepeatedFloats,
  readRepeatedInts,
  readString,
  subReader,
  type ProtoField,
} from '../../src/onnx/protobuf';

const bytes = (...b: number[]) => Uint8Array.from(b);
const write = (fill: (w: ProtoWriter) => void) => {
  const w = new ProtoWriter();
  fill(w);
  return [...w.finish()];
};

function thrown(fn: () => unknown): OnnxError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(OnnxError);
    return error as OnnxError;
  }
  throw new Error('expected an OnnxError, nothing was thrown');
}

describe('protobuf writer: golden bytes', () => {
  it('bare varints', () => {
    // 300 = 0b10_0101100: low 7 bits 0101100 = 0x2C, | 0x80 (more follows) = 0xAC; 300 >> 7 = 2.
    expect(write((w) => w.rawVarint(300))).toEqual([0xac, 0x02]);
    // 0 and 127 fit one byte; 128 = 0b1_0000000 → 0x80 0x01.
    expect(write((w) => w.rawVarint(0))).toEqual([0x00]);
    expect(write((w) => w.rawVarint(127))).toEqual([0x7f]);
    expect(write((w) => w.rawVarint(128))).toEqual([0x80, 0x01]);
    // 2^32: bit 32 sits in the fifth 7-bit group (bits 28–34) at position 4 → 0x10.
    expect(write((w) => w.rawVarint(2 ** 32))).toEqual([0x80, 0x80, 0x80, 0x80, 0x10]);
    expect(write((w) => w.rawVarint(2n ** 32n))).toEqual([0x80, 0x80, 0x80, 0x80, 0x10]);
    // 2^64 − 1: 64 one-bits = nine groups of seven ones (0xFF with the continuation bit) + 1.
    const allOnes = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01];
    expect(write((w) => w.rawVarint(2n ** 64n - 1n))).toEqual(allOnes);
    // int64 −1 is the same 64-bit pattern (two's complement).
    expect(write((w) => w.rawVarint(-1))).toEqual(allOnes);
    expect(write((w) => w.rawVarint(-1n))).toEqual(allOnes);
  });

  it('tagged fields', () => {
    // field 1, varint 150: tag 1 << 3 | 0 = 0x08; 150 = 0x16 | 0x80, then 1.
    expect(write((w) => w.varint(1, 150))).toEqual([0x08, 0x96, 0x01]);
    // field 2, string "testing": tag 2 << 3 | 2 = 0x12, length 7, ASCII.
    expect(write((w) => w.string(2, 'testing'))).toEqual([
      0x12, 0x07, 0x74, 0x65, 0x73, 0x74, 0x69, 0x6e, 0x67,
    ]);
    // field 3, float 1.0: tag 3 << 3 | 5 = 0x1D; 1.0f = 0x3F800000, little-endian.
    expect(write((w) => w.float(3, 1))).toEqual([0x1d, 0x00, 0x00, 0x80, 0x3f]);
    // field 3, sub-message { field 1 = 150 }: tag 0x1A, length 3, then its bytes.
    expect(write((w) => w.message(3, (m) => m.varint(1, 150)))).toEqual([
      0x1a, 0x03, 0x08, 0x96, 0x01,
    ]);
    // field 4, packed [3, 270, 86942]: tag 0x22, length 6; 270 → 0x8E 0x02;
    // 86942 = 5·128² + 39·128 + 30 → 0x9E (30 | 0x80), 0xA7 (39 | 0x80), 0x05.
    expect(write((w) => w.packedVarints(4, [3, 270, 86942]))).toEqual([
      0x22, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05,
    ]);
    // field 5, bool true → tag 0x28, 0x01. Field 16 needs a two-byte tag: 16 << 3 = 128 → 0x80 0x01.
    expect(write((w) => w.bool(5, true))).toEqual([0x28, 0x01]);
    expect(write((w) => w.varint(16, 1))).toEqual([0x80, 0x01, 0x01]);
    // The largest field number, 2^29 − 1, wire 0: tag 2^32 − 8 = 0xFFFFFFF8 → F8 FF FF FF 0F.
    expect(write((w) => w.varint(2 ** 29 - 1, 0))).toEqual([0xf8, 0xff, 0xff, 0xff, 0x0f, 0x00]);
  });

  it('refuses what it cannot encode', () => {
    expect(thrown(() => new ProtoWriter().varint(0, 1)).message).toMatch(/field number/);
    expect(thrown(() => new ProtoWriter().varint(2 ** 29, 1)).message).toMatch(/field number/);
    expect(thrown(() => new ProtoWriter().rawVarint(1.5)).message).toMatch(/safe integer/);
    expect(thrown(() => new ProtoWriter().rawVarint(2 ** 53)).message).toMatch(/safe integer/);
    expect(thrown(() => new ProtoWriter().rawVarint(2n ** 64n)).message).toMatch(/64 bits/);
  });
});

describe('protobuf reader', () => {
  it('reads the golden messages back, with absolute offsets', () => {
    const message = bytes(
      ...[0x08, 0x96, 0x01], // field 1 = 150            (offset 0)
      ...[0x12, 0x01, 0x61], // field 2 = "a"            (offset 3, data at 5)
      ...[0x1d, 0x00, 0x00, 0x80, 0x3f], // field 3 = 1.0f (offset 6)
    );
    const fields = new ProtoReader(message).readAll();
    expect(fields).toHaveLength(3);
    expect(fields[0]).toEqual({ field: 1, wire: 0, offset: 0, value: 150n });
    expect(fields[1]).toMatchObject({ field: 2, wire: 2, offset: 3, dataOffset: 5 });
    expect(readString(fields[1]!, 's')).toBe('a');
    const floats: number[] = [];
    readRepeatedFloats(fields[2]!, 'f', floats);
    expect(floats).toEqual([1]);
  });

  it('reads −1 and 2^64 − 1 exactly; protoInt gives −1 and refuses past 2^53', () => {
    const [f] = new ProtoReader(bytes(0x08, ...Array(9).fill(0xff), 0x01)).readAll();
    expect(f).toMatchObject({ value: 2n ** 64n - 1n });
    expect(protoInt((f as { value: bigint }).value, 'x')).toBe(-1);
    expect(thrown(() => protoInt(2n ** 60n, 'dims')).message).toMatch(/dims is .* beyond 2\^53/);
  });

  it('accepts repeated ints packed and unpacked alike', () => {
    const packed = new ProtoReader(bytes(0x22, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05)).readAll();
    const unpacked = new ProtoReader(
      bytes(0x20, 0x03, 0x20, 0x8e, 0x02, 0x20, 0x9e, 0xa7, 0x05),
    ).readAll();
    const a: number[] = [];
    const b: number[] = [];
    for (const f of packed) readRepeatedInts(f, 'p', a);
    for (const f of unpacked) readRepeatedInts(f, 'u', b);
    expect(a).toEqual([3, 270, 86942]);
    expect(b).toEqual([3, 270, 86942]);
  });

  // Each bad input → reason, the byte offset where reading stopped, and words from the message.
  const bad: { name: string; input: number[]; reason: string; offset: number; says: RegExp }[] = [
    {
      name: 'empty tag varint cut',
      input: [0x80],
      reason: 'truncated',
      offset: 0,
      says: /tag: varint runs past the end/,
    },
    {
      name: 'value varint cut',
      input: [0x08, 0x96],
      reason: 'truncated',
      offset: 1,
      says: /field 1: varint runs past/,
    },
    {
      name: 'varint missing entirely',
      input: [0x08],
      reason: 'truncated',
      offset: 1,
      says: /varint runs past/,
    },
    {
      name: 'length beyond the end',
      input: [0x12, 0x07, 0x74],
      reason: 'truncated',
      offset: 1,
      says: /declares 7 bytes, but only 1 remain/,
    },
    {
      name: 'fixed32 cut',
      input: [0x1d, 0x00, 0x00],
      reason: 'truncated',
      offset: 1,
      says: /needs 4 bytes, but only 2 remain/,
    },
    {
      name: 'fixed64 cut',
      input: [0x09, 1, 2, 3],
      reason: 'truncated',
      offset: 1,
      says: /needs 8 bytes/,
    },
    {
      name: '11-byte varint',
      input: [0x08, ...Array(10).fill(0xff), 0x01],
      reason: 'malformed',
      offset: 1,
      says: /longer than 10 bytes/,
    },
    {
      name: '10-byte varint over 64 bits',
      input: [0x08, ...Array(9).fill(0xff), 0x02],
      reason: 'malformed',
      offset: 1,
      says: /overflows 64 bits/,
    },
    {
      name: 'field number 0',
      input: [0x00, 0x00],
      reason: 'malformed',
      offset: 0,
      says: /field number 0/,
    },
    {
      name: 'group wire type 3',
      input: [0x0b],
      reason: 'malformed',
      offset: 0,
      says: /wire type 3/,
    },
    { name: 'wire type 7', input: [0x0f], reason: 'malformed', offset: 0, says: /wire type 7/ },
    {
      name: 'tag over 32 bits',
      input: [0xff, 0xff, 0xff, 0xff, 0x7f],
      reason: 'malformed',
      offset: 0,
      says: /tag wider than 32 bits/,
    },
  ];
  it.each(bad)('refuses $name', ({ input, reason, offset, says }) => {
    const error = thrown(() => new ProtoReader(Uint8Array.from(input), 0, 'Msg').readAll());
    expect(error.reason).toBe(reason);
    expect(error.offset).toBe(offset);
    expect(error.field).toBe('Msg');
    expect(error.message).toMatch(says);
    expect(error.message).toContain(`at byte ${offset}`);
  });

  it('gives offsets in the whole file for errors inside nested messages', () => {
    // Bytes 0–1: field 3, length 2; bytes 2–3: the sub-message "08 96", its varint cut at byte 3.
    const [outer] = new ProtoReader(bytes(0x1a, 0x02, 0x08, 0x96)).readAll();
    const error = thrown(() => subReader(outer!, 'Outer.inner').readAll());
    expect(error).toMatchObject({ reason: 'truncated', offset: 3, field: 'Outer.inner' });
  });

  it('refuses invalid UTF-8 and a varint where bytes belong', () => {
    const [f] = new ProtoReader(bytes(0x12, 0x01, 0xff)).readAll();
    expect(thrown(() => readString(f!, 'name')).message).toMatch(/name is not valid UTF-8/);
    const [g] = new ProtoReader(bytes(0x10, 0x01)).readAll();
    expect(thrown(() => readString(g!, 'name')).message).toMatch(/must be length-delimited/);
  });
});

type Written =
  | { kind: 'varint'; field: number; value: bigint }
  | { kind: 'bytes'; field: number; data: Uint8Array }
  | { kind: 'float'; field: number; value: number };

const writtenField: fc.Arbitrary<Written> = fc.oneof(
  fc.record({
    kind: fc.constant('varint' as const),
    field: fc.integer({ min: 1, max: 2 ** 29 - 1 }),
    value: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
  }),
  fc.record({
    kind: fc.constant('bytes' as const),
    field: fc.integer({ min: 1, max: 5000 }),
    data: fc.uint8Array({ maxLength: 300 }),
  }),
  fc.record({
    kind: fc.constant('float' as const),
    field: fc.integer({ min: 1, max: 5000 }),
    value: fc.float({ noNaN: true }),
  }),
);

function encode(fields: Written[]): Uint8Array {
  const w = new ProtoWriter();
  for (const f of fields) {
    if (f.kind === 'varint') w.varint(f.field, f.value);
    else if (f.kind === 'bytes') w.bytes(f.field, f.data);
    else w.float(f.field, f.value);
  }
  return w.finish();
}

function same(read: ProtoField, f: Written): boolean {
  if (read.field !== f.field) return false;
  if (f.kind === 'varint') return read.wire === 0 && read.value === f.value;
  if (read.wire === 0) return false;
  if (f.kind === 'bytes') return read.wire === 2 && [...read.bytes].join() === [...f.data].join();
  const floats: number[] = [];
  readRepeatedFloats(read, 'f', floats);
  return read.wire === 5 && Object.is(floats[0], Math.fround(f.value));
}

describe('protobuf properties', () => {
  it('reads back exactly the fields written', () => {
    fc.assert(
      fc.property(fc.array(writtenField, { maxLength: 12 }), (fields) => {
        const read = new ProtoReader(encode(fields)).readAll();
        return read.length === fields.length && read.every((r, i) => same(r, fields[i]!));
      }),
    );
  });

  it('a cut message is either a shorter valid prefix or a truncation error', () => {
    fc.assert(
      fc.property(
        fc.array(writtenField, { minLength: 1, maxLength: 8 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (fields, where) => {
          const full = encode(fields);
          const cut = full.subarray(0, Math.floor(where * full.length));
          try {
            const read = new ProtoReader(cut).readAll();
            return read.length < fields.length && read.every((r, i) => same(r, fields[i]!));
          } catch (error) {
            return error instanceof OnnxError && error.reason === 'truncated';
          }
        },
      ),
    );
  });

  it('arbitrary bytes never throw anything but OnnxError', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (data) => {
        try {
          new ProtoReader(data).readAll();
        } catch (error) {
          return error instanceof OnnxError;
        }
        return true;
      }),
    );
  });
});
