/**
 * The protobuf wire format, as far as ONNX files need it: a writer and a reader, no schema
 * compiler. (protobuf.dev/programming-guides/encoding.)
 *
 * A message is a sequence of fields; each starts with a tag varint (field_number << 3 | wire_type):
 *   wire 0  varint     7 bits per byte, least significant group first, high bit = "more follows";
 *                      int32/int64/uint64/enum/bool. A negative int64 (or int32) is its 64-bit
 *                      two's complement: always 10 bytes. At most 10 bytes in all.
 *   wire 1  fixed64    8 bytes little-endian (double) — read and skipped, ONNX models rarely use it
 *   wire 2  length-delimited: a varint byte count, then the bytes (string, bytes, sub-message,
 *                      packed repeated scalars)
 *   wire 5  fixed32    4 bytes little-endian (float)
 * Wire types 3 and 4 (groups) are long deprecated and refused.
 *
 * Worked example (the guide's own): field 1 = 150 → 0x08 0x96 0x01 (tag 1<<3|0 = 8; 150 =
 * 0b1_0010110 → low seven bits 0x16 | 0x80 = 0x96, then 150 >> 7 = 1).
 *
 * Varints are read into BigInt (exact for all 64 bits); callers turn them into numbers with
 * protoInt(), which refuses what a JS number cannot hold exactly.
 */
import { OnnxError } from './onnx-error';

export const WIRE_VARINT = 0;
export const WIRE_FIXED64 = 1;
export const WIRE_BYTES = 2;
export const WIRE_FIXED32 = 5;

/** Largest field number protobuf allows (2^29 − 1). */
export const MAX_FIELD_NUMBER = 0x1fffffff;
/** A 64-bit varint takes at most ⌈64 / 7⌉ = 10 bytes. */
const MAX_VARINT_BYTES = 10;

const LITTLE_ENDIAN = true;

// ---------------------------------------------------------------------------------------------
// Writer

/** Appends fields to a growing byte buffer; finish() returns the bytes written. */
export class ProtoWriter {
  private buf = new Uint8Array(64);
  private view = new DataView(this.buf.buffer);
  private length = 0;

  /** The message so far (a copy, exactly `length` bytes). */
  finish(): Uint8Array {
    return this.buf.slice(0, this.length);
  }

  /** A varint field (int32, int64, uint64, enum). Negative values as 64-bit two's complement. */
  varint(field: number, value: number | bigint): this {
    this.tag(field, WIRE_VARINT);
    this.rawVarint(value);
    return this;
  }

  bool(field: number, value: boolean): this {
    return this.varint(field, value ? 1 : 0);
  }

  /** A fixed32 field holding a float32 (wire 5). */
  float(field: number, value: number): this {
    this.tag(field, WIRE_FIXED32);
    this.reserve(4);
    this.view.setFloat32(this.length, value, LITTLE_ENDIAN);
    this.length += 4;
    return this;
  }

  /** A length-delimited field holding raw bytes. */
  bytes(field: number, data: Uint8Array): this {
    this.tag(field, WIRE_BYTES);
    this.rawVarint(data.length);
    this.rawBytes(data);
    return this;
  }

  /** A length-delimited field holding UTF-8 text. */
  string(field: number, text: string): this {
    return this.bytes(field, new TextEncoder().encode(text));
  }

  /** A sub-message: `write` fills a fresh writer, whose bytes become one length-delimited field. */
  message(field: number, write: (w: ProtoWriter) => void): this {
    const inner = new ProtoWriter();
    write(inner);
    return this.bytes(field, inner.finish());
  }

  /** Packed repeated varints: one length-delimited field holding the varints back to back. */
  packedVarints(field: number, values: ArrayLike<number | bigint>): this {
    const inner = new ProtoWriter();
    for (let i = 0; i < values.length; i++) inner.rawVarint(values[i]!);
    return this.bytes(field, inner.finish());
  }

  /** Packed repeated floats: one length-delimited field of 4-byte little-endian floats. */
  packedFloats(field: number, values: ArrayLike<number>): this {
    const data = new Uint8Array(values.length * 4);
    const view = new DataView(data.buffer);
    for (let i = 0; i < values.length; i++) view.setFloat32(i * 4, values[i]!, LITTLE_ENDIAN);
    return this.bytes(field, data);
  }

  /** The tag varint: field_number << 3 | wire_type. */
  tag(field: number, wire: number): this {
    if (!Number.isInteger(field) || field < 1 || field > MAX_FIELD_NUMBER) {
      throw new OnnxError(
        'input',
        'field number',
        `must be an integer in [1, ${MAX_FIELD_NUMBER}], got ${field}`,
      );
    }
    this.rawVarint(field * 8 + wire); // × 8, not << 3: field numbers reach 2^29, past int32
    return this;
  }

  /**
   * A bare varint. Numbers must be safe integers; negatives are written as the 64-bit two's
   * complement (int64 semantics: −1 → nine 0xFF bytes and 0x01).
   */
  rawVarint(value: number | bigint): void {
    if (typeof value === 'number') {
      if (!Number.isSafeInteger(value)) {
        throw new OnnxError('input', 'varint', `must be a safe integer or a bigint, got ${value}`);
      }
      if (value < 0) {
        this.rawVarint(BigInt.asUintN(64, BigInt(value)));
        return;
      }
      this.reserve(8); // 2^53 needs 8 bytes
      let v = value;
      while (v >= 0x80) {
        this.buf[this.length++] = (v % 0x80) | 0x80;
        v = Math.floor(v / 0x80);
      }
      this.buf[this.length++] = v;
      return;
    }
    if (value < -(1n << 63n) || value >= 1n << 64n) {
      throw new OnnxError('input', 'varint', `must fit in 64 bits, got ${value}`);
    }
    let v = BigInt.asUintN(64, value);
    this.reserve(MAX_VARINT_BYTES);
    while (v >= 0x80n) {
      this.buf[this.length++] = Number(v & 0x7fn) | 0x80;
      v >>= 7n;
    }
    this.buf[this.length++] = Number(v);
  }

  rawBytes(data: Uint8Array): void {
    this.reserve(data.length);
    this.buf.set(data, this.length);
    this.length += data.length;
  }

  private reserve(extra: number): void {
    const needed = this.length + extra;
    if (needed <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < needed) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.buf.subarray(0, this.length));
    this.buf = grown;
    this.view = new DataView(grown.buffer);
  }
}

// ---------------------------------------------------------------------------------------------
// Reader

/** One field as read from the wire. `offset` is the absolute byte offset of its tag. */
export type ProtoField =
  | { field: number; wire: typeof WIRE_VARINT; offset: number; value: bigint }
  | {
      field: number;
      wire: typeof WIRE_BYTES | typeof WIRE_FIXED32 | typeof WIRE_FIXED64;
      offset: number;
      /** The payload (a view, not a copy): 4 or 8 bytes for fixed, the data for wire 2. */
      bytes: Uint8Array;
      /** Absolute byte offset of the payload's first byte. */
      dataOffset: number;
    };

/**
 * Reads the fields of one message in order. Offsets in errors are absolute (the position in the
 * whole file), because nested readers are built with their payload's absolute offset as `base`.
 * `path` names the message in errors (e.g. 'ModelProto.graph.initializer[2]').
 */
export class ProtoReader {
  private pos = 0;

  constructor(
    private readonly bytes: Uint8Array,
    private readonly base = 0,
    readonly path = 'message',
  ) {}

  get done(): boolean {
    return this.pos >= this.bytes.length;
  }

  /** All fields of the message, in wire order. */
  readAll(): ProtoField[] {
    const fields: ProtoField[] = [];
    while (!this.done) fields.push(this.next());
    return fields;
  }

  next(): ProtoField {
    const offset = this.base + this.pos;
    const tag = this.varint('tag');
    if (tag > 0xffffffffn) {
      throw new OnnxError('malformed', this.path, `has a tag wider than 32 bits (${tag})`, offset);
    }
    const wire = Number(tag & 7n);
    const field = Number(tag >> 3n);
    if (field < 1 || field > MAX_FIELD_NUMBER) {
      throw new OnnxError(
        'malformed',
        this.path,
        `has field number ${field}, outside [1, ${MAX_FIELD_NUMBER}]`,
        offset,
      );
    }
    switch (wire) {
      case WIRE_VARINT:
        return { field, wire, offset, value: this.varint(`field ${field}`) };
      case WIRE_FIXED64:
      case WIRE_FIXED32: {
        const size = wire === WIRE_FIXED32 ? 4 : 8;
        const dataOffset = this.base + this.pos;
        return { field, wire, offset, bytes: this.take(size, `field ${field}`), dataOffset };
      }
      case WIRE_BYTES: {
        const lengthAt = this.base + this.pos;
        const length = this.varint(`field ${field} length`);
        const remaining = this.bytes.length - this.pos;
        if (length > BigInt(remaining)) {
          throw new OnnxError(
            'truncated',
            this.path,
            `field ${field} declares ${length} bytes, but only ${remaining} remain`,
            lengthAt,
          );
        }
        const dataOffset = this.base + this.pos;
        return {
          field,
          wire,
          offset,
          bytes: this.take(Number(length), `field ${field}`),
          dataOffset,
        };
      }
      default:
        throw new OnnxError(
          'malformed',
          this.path,
          `field ${field} has wire type ${wire}; only 0, 1, 2 and 5 are supported`,
          offset,
        );
    }
  }

  private varint(what: string): bigint {
    const { value, end } = decodeVarint(this.bytes, this.pos, this.base, this.path, what);
    this.pos = end;
    return value;
  }

  private take(size: number, what: string): Uint8Array {
    const remaining = this.bytes.length - this.pos;
    if (size > remaining) {
      throw new OnnxError(
        'truncated',
        this.path,
        `${what} needs ${size} bytes, but only ${remaining} remain`,
        this.base + this.pos,
      );
    }
    const out = this.bytes.subarray(this.pos, this.pos + size);
    this.pos += size;
    return out;
  }
}

/** A varint as a signed 64-bit integer (int64 / int32 fields), as a JS number; must be safe. */
export function protoInt(value: bigint, where: string, offset?: number): number {
  const signed = BigInt.asIntN(64, value);
  if (signed > BigInt(Number.MAX_SAFE_INTEGER) || signed < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new OnnxError('malformed', where, `is ${signed}, beyond 2^53 (not supported)`, offset);
  }
  return Number(signed);
}

/** The fields of a nested message (wire 2), read with absolute offsets. */
export function subReader(f: ProtoField, path: string): ProtoReader {
  return new ProtoReader(expectBytes(f, path), f.wire === WIRE_BYTES ? f.dataOffset : 0, path);
}

/** The payload of a wire-2 field; anything else is malformed. */
export function expectBytes(f: ProtoField, path: string): Uint8Array {
  if (f.wire !== WIRE_BYTES) {
    throw new OnnxError(
      'malformed',
      path,
      `must be length-delimited, has wire type ${f.wire}`,
      f.offset,
    );
  }
  return f.bytes;
}

/** A varint field's value; anything else is malformed. */
export function expectVarint(f: ProtoField, path: string): bigint {
  if (f.wire !== WIRE_VARINT) {
    throw new OnnxError('malformed', path, `must be a varint, has wire type ${f.wire}`, f.offset);
  }
  return f.value;
}

/** A UTF-8 string field (invalid UTF-8 is malformed, not silently replaced). */
export function readString(f: ProtoField, path: string): string {
  const bytes = expectBytes(f, path);
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new OnnxError('malformed', path, 'is not valid UTF-8', f.offset);
  }
}

/**
 * A repeated int64 field: packed (one wire-2 field holding varints) or not (one varint per
 * occurrence) — parsers must accept both. Appends to `out`.
 */
export function readRepeatedInts(f: ProtoField, path: string, out: number[]): void {
  if (f.wire === WIRE_VARINT) {
    out.push(protoInt(f.value, path, f.offset));
    return;
  }
  const bytes = expectBytes(f, path);
  const base = f.wire === WIRE_BYTES ? f.dataOffset : 0;
  for (let pos = 0; pos < bytes.length;) {
    const { value, end } = decodeVarint(bytes, pos, base, path, 'packed value');
    out.push(protoInt(value, path, base + pos));
    pos = end;
  }
}

/** A repeated float field: packed (wire 2, 4 bytes each) or not (one fixed32 each). */
export function readRepeatedFloats(f: ProtoField, path: string, out: number[]): void {
  if (f.wire === WIRE_FIXED32) {
    out.push(new DataView(f.bytes.buffer, f.bytes.byteOffset, 4).getFloat32(0, LITTLE_ENDIAN));
    return;
  }
  const bytes = expectBytes(f, path);
  if (bytes.length % 4 !== 0) {
    throw new OnnxError(
      'malformed',
      path,
      `packed floats take ${bytes.length} bytes, not a multiple of 4`,
      f.offset,
    );
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
  for (let i = 0; i < bytes.length; i += 4) out.push(view.getFloat32(i, LITTLE_ENDIAN));
}

/**
 * An unsigned varint of at most 10 bytes whose value fits in 64 bits, starting at bytes[pos].
 * Returns the value and the position after it. `base` makes error offsets absolute.
 */
function decodeVarint(
  bytes: Uint8Array,
  pos: number,
  base: number,
  path: string,
  what: string,
): { value: bigint; end: number } {
  let value = 0n;
  for (let i = 0; ; i++) {
    if (pos + i >= bytes.length) {
      throw new OnnxError('truncated', path, `${what}: varint runs past the end`, base + pos);
    }
    const byte = bytes[pos + i]!;
    // The tenth byte holds bit 63 only: a value above 1 there does not fit in 64 bits.
    if (i === MAX_VARINT_BYTES - 1 && byte > 1) {
      const why = byte >= 0x80 ? `is longer than ${MAX_VARINT_BYTES} bytes` : 'overflows 64 bits';
      throw new OnnxError('malformed', path, `${what}: varint ${why}`, base + pos);
    }
    value |= BigInt(byte & 0x7f) << BigInt(7 * i);
    if (byte < 0x80) return { value, end: pos + i + 1 };
  }
}
