/**
 * Reading safetensors files, from the format's specification: an 8-byte little-endian u64 N, N
 * bytes of JSON header, then the raw little-endian tensor data. The header maps each tensor name
 * to { dtype, shape, data_offsets: [begin, end] } (offsets relative to the end of the header) and
 * may hold "__metadata__", a map of strings. The tensors' byte ranges must tile the data exactly:
 * no gap, no overlap, nothing after the last one — the same checks the reference reader makes.
 *
 * Only the float formats the lab stores are accepted (F32, F16, BF16); another dtype is refused
 * naming the tensor. Tensors are read from a RandomAccessSource in chunks, so a multi-GB file is
 * never held whole: into f32 (exact from all three) or into f16 halves for GPU storage.
 */
import { jsonDepthProblem } from '../../util/json-depth';
import {
  bf16ToF16BitsTable,
  f16ToF32BitsTable,
  f32BitsToF16Bits,
  isF16Overflow,
} from '../../util/half-float';
import type { RandomAccessSource } from './random-access-source';

/** The largest header read: the reference implementation's bound (100 MB). */
export const MAX_HEADER_BYTES = 100_000_000;

export const SAFETENSORS_DTYPES = ['F32', 'F16', 'BF16'] as const;
export type SafetensorsDtype = (typeof SAFETENSORS_DTYPES)[number];

/** Bytes per element of each accepted dtype. */
export const DTYPE_BYTES: Record<SafetensorsDtype, number> = { F32: 4, F16: 2, BF16: 2 };

/** Every dtype the format defines, so that a refusal can say "a known dtype the lab does not take". */
const KNOWN_DTYPES = new Set([
  'BOOL', 'U8', 'I8', 'F8_E5M2', 'F8_E4M3', 'F8_E8M0', 'F4', 'F6_E2M3', 'F6_E3M2', 'I16', 'U16',
  'F16', 'BF16', 'I32', 'U32', 'F32', 'F64', 'I64', 'U64', 'C64',
]); // prettier-ignore

export interface TensorInfo {
  name: string;
  dtype: SafetensorsDtype;
  shape: readonly number[];
  /** Elements: product(shape). */
  size: number;
  /** Byte range in the file (absolute: the header's offsets plus 8 + N). */
  begin: number;
  end: number;
}

export interface SafetensorsHeader {
  /** The file the header was read from, for messages. */
  source: RandomAccessSource;
  /** Where the tensor data starts: 8 + N. */
  dataStart: number;
  metadata: Record<string, string>;
  /** In the order of their data in the file. */
  tensors: readonly TensorInfo[];
  byName: ReadonlyMap<string, TensorInfo>;
}

/** A malformed or unsupported safetensors file: names the file and, where one, the tensor. */
export class SafetensorsError extends Error {
  override readonly name = 'SafetensorsError';
}

/** Reads and checks the header of `source` (two small reads: the length, then the JSON). */
export async function readSafetensorsHeader(
  source: RandomAccessSource,
): Promise<SafetensorsHeader> {
  const fail = (message: string): never => {
    throw new SafetensorsError(`${source.name}: ${message}`);
  };
  if (source.size < 8) fail(`is ${source.size} bytes, too short for a safetensors file (≥ 8)`);
  const lengthBytes = await source.read(0, 8);
  const view = new DataView(lengthBytes.buffer, lengthBytes.byteOffset, 8);
  const headerLength = Number(view.getBigUint64(0, true));
  if (headerLength > MAX_HEADER_BYTES) {
    fail(`header length ${headerLength} exceeds the ${MAX_HEADER_BYTES}-byte bound`);
  }
  if (8 + headerLength > source.size) {
    fail(`header length ${headerLength} runs past the end of the ${source.size}-byte file`);
  }
  const text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(
    await source.read(8, headerLength),
  );
  if (!text.startsWith('{')) fail('header must be a JSON object starting with "{"');
  const depth = jsonDepthProblem(text, 8);
  if (depth) fail(`header ${depth}`);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    fail(`header is not valid JSON (${(error as Error).message})`);
  }
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    fail('header must be a JSON object');
  }
  const dataStart = 8 + headerLength;
  const dataBytes = source.size - dataStart;
  let metadata: Record<string, string> = {};
  const tensors: TensorInfo[] = [];
  for (const [name, entry] of Object.entries(json as Record<string, unknown>)) {
    if (name === '__metadata__') {
      metadata = readMetadata(entry, fail);
      continue;
    }
    tensors.push(readTensorEntry(name, entry, dataStart, fail));
  }
  // The byte ranges must tile [0, dataBytes): sorted by start, each begins where the last ended.
  tensors.sort((a, b) => a.begin - b.begin || a.end - b.end);
  let expected = dataStart;
  for (const tensor of tensors) {
    if (tensor.begin !== expected) {
      fail(
        `tensor "${tensor.name}" starts at data offset ${tensor.begin - dataStart}, expected ${expected - dataStart} ` +
          (tensor.begin < expected ? '(it overlaps the tensor before it)' : '(a gap before it)'),
      );
    }
    expected = tensor.end;
  }
  if (expected - dataStart !== dataBytes) {
    fail(
      `tensors cover ${expected - dataStart} bytes of data but the file holds ${dataBytes} after its header`,
    );
  }
  return { source, dataStart, metadata, tensors, byName: new Map(tensors.map((t) => [t.name, t])) };
}

function readMetadata(entry: unknown, fail: (m: string) => never): Record<string, string> {
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    fail('"__metadata__" must be an object of strings');
  }
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(entry as Record<string, unknown>)) {
    if (typeof value !== 'string') fail(`"__metadata__"."${key}" must be a string`);
    out[key] = value as string;
  }
  return out;
}

function readTensorEntry(
  name: string,
  entry: unknown,
  dataStart: number,
  fail: (m: string) => never,
): TensorInfo {
  const where = `tensor "${name.length > 200 ? `${name.slice(0, 197)}…` : name}"`;
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
    fail(`${where} must be an object with dtype, shape and data_offsets`);
  }
  const { dtype, shape, data_offsets: offsets } = entry as Record<string, unknown>;
  if (typeof dtype !== 'string') fail(`${where}: dtype must be a string`);
  if (!(SAFETENSORS_DTYPES as readonly string[]).includes(dtype as string)) {
    const known = KNOWN_DTYPES.has(dtype as string) ? '' : ' (not a safetensors dtype)';
    fail(
      `${where} has dtype ${JSON.stringify(String(dtype).slice(0, 20))}${known}; the lab reads ${SAFETENSORS_DTYPES.join(', ')}`,
    );
  }
  if (!Array.isArray(shape) || !shape.every((d) => Number.isSafeInteger(d) && d >= 0)) {
    fail(`${where}: shape must be an array of non-negative integers`);
  }
  if (
    !Array.isArray(offsets) ||
    offsets.length !== 2 ||
    !offsets.every((o) => Number.isSafeInteger(o) && o >= 0) ||
    offsets[0] > offsets[1]
  ) {
    fail(`${where}: data_offsets must be [begin, end] with 0 ≤ begin ≤ end`);
  }
  const dims = shape as number[];
  const size = dims.reduce((a, b) => a * b, 1);
  const [begin, end] = offsets as [number, number];
  const bytes = size * DTYPE_BYTES[dtype as SafetensorsDtype];
  if (!Number.isSafeInteger(bytes) || end - begin !== bytes) {
    fail(
      `${where}: data_offsets span ${end - begin} bytes but shape [${dims.join(', ')}] of ${dtype} needs ${bytes}`,
    );
  }
  return {
    name,
    dtype: dtype as SafetensorsDtype,
    shape: dims,
    size,
    begin: dataStart + begin,
    end: dataStart + end,
  };
}

/** Elements read per chunk: 4 M (8–16 MB), so a large tensor never needs a second copy whole. */
const CHUNK_ELEMENTS = 1 << 22;

/** Reads `tensor` as raw little-endian 16- or 32-bit words, chunk by chunk. */
async function forEachChunk(
  source: RandomAccessSource,
  tensor: TensorInfo,
  visit: (words: Uint16Array | Uint32Array, first: number) => void,
): Promise<void> {
  const itemBytes = DTYPE_BYTES[tensor.dtype];
  for (let first = 0; first < tensor.size; first += CHUNK_ELEMENTS) {
    const count = Math.min(CHUNK_ELEMENTS, tensor.size - first);
    const bytes = await source.read(tensor.begin + first * itemBytes, count * itemBytes);
    visit(littleEndianWords(bytes, itemBytes, count), first);
  }
}

const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

/** The bytes as words: a view when aligned on a little-endian machine, else a decoded copy. */
function littleEndianWords(bytes: Uint8Array, itemBytes: number, count: number) {
  if (LITTLE_ENDIAN && bytes.byteOffset % itemBytes === 0) {
    return itemBytes === 2
      ? new Uint16Array(bytes.buffer, bytes.byteOffset, count)
      : new Uint32Array(bytes.buffer, bytes.byteOffset, count);
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const words = itemBytes === 2 ? new Uint16Array(count) : new Uint32Array(count);
  for (let i = 0; i < count; i++) {
    words[i] = itemBytes === 2 ? view.getUint16(2 * i, true) : view.getUint32(4 * i, true);
  }
  return words;
}

/** Checks `target` has room for the tensor; every reader below writes target[0 .. size). */
function checkTarget(tensor: TensorInfo, target: { length: number }): void {
  if (target.length < tensor.size) {
    throw new RangeError(
      `tensor "${tensor.name}": ${tensor.size} values, target holds ${target.length}`,
    );
  }
}

/** Writes the tensor's values, exactly, as f32 into target[0 .. size). */
export async function readTensorF32(
  header: SafetensorsHeader,
  tensor: TensorInfo,
  target: Float32Array,
): Promise<void> {
  checkTarget(tensor, target);
  const out = new Uint32Array(target.buffer, target.byteOffset, target.length);
  await forEachChunk(header.source, tensor, (words, first) => {
    if (tensor.dtype === 'F32') out.set(words, first);
    else if (tensor.dtype === 'BF16') {
      for (let i = 0; i < words.length; i++) out[first + i] = (words[i]! << 16) >>> 0;
    } else {
      const table = f16ToF32BitsTable();
      for (let i = 0; i < words.length; i++) out[first + i] = table[words[i]!]!;
    }
  });
}

/**
 * Writes the tensor as f16 bits into target[0 .. size): F16 copied, F32 rounded to nearest even,
 * BF16 through f32 (exact) then rounded. Returns how many finite values became ±inf.
 */
export async function readTensorF16(
  header: SafetensorsHeader,
  tensor: TensorInfo,
  target: Uint16Array,
): Promise<{ overflowed: number }> {
  checkTarget(tensor, target);
  let overflowed = 0;
  await forEachChunk(header.source, tensor, (words, first) => {
    if (tensor.dtype === 'F16') {
      target.set(words, first);
      return;
    }
    if (tensor.dtype === 'BF16') {
      const table = bf16ToF16BitsTable();
      for (let i = 0; i < words.length; i++) {
        const bits = words[i]!;
        const half = table[bits]!;
        // A finite bf16 (exponent not all ones) that became ±inf.
        if ((half & 0x7fff) === 0x7c00 && (bits & 0x7f80) !== 0x7f80) overflowed++;
        target[first + i] = half;
      }
      return;
    }
    for (let i = 0; i < words.length; i++) {
      const bits = words[i]!;
      const half = f32BitsToF16Bits(bits);
      if (isF16Overflow(bits, half)) overflowed++;
      target[first + i] = half;
    }
  });
  return { overflowed };
}

/** The tensor `name` of a header, or an error naming the file and the tensor. */
export function tensorNamed(header: SafetensorsHeader, name: string): TensorInfo {
  const tensor = header.byName.get(name);
  if (!tensor) throw new SafetensorsError(`${header.source.name}: no tensor "${name}"`);
  return tensor;
}

/** A whole tensor as f32 (small tensors and tests; the loader writes into its flat array). */
export async function tensorToF32(header: SafetensorsHeader, name: string): Promise<Float32Array> {
  const tensor = tensorNamed(header, name);
  const out = new Float32Array(tensor.size);
  await readTensorF32(header, tensor, out);
  return out;
}
