/**
 * Checkpoint files: model weights (+ optional AdamW moments, tokenizer, metadata) in one versioned
 * binary that the app saves, downloads and loads back.
 *
 * Layout (all integers u32 little-endian):
 *
 *   offset 0   magic "ARLCKPT1" (8 ASCII bytes)
 *   offset 8   format version (1)
 *   offset 12  H = header length in bytes
 *   offset 16  CRC-32 of the header bytes
 *   offset 20  header: JSON, UTF-8, H bytes
 *              zero bytes up to the next multiple of 4
 *   P          payload: float32 little-endian, header.payload.floats values
 *
 * The header names every tensor with its shape and offset (in floats from P), and holds the CRC-32
 * of the payload. Tensors lie back to back in header order: weights, then optimizer m, then v.
 * The header's own CRC sits in the fixed preamble because a checksum cannot be inside the bytes
 * it covers.
 *
 * decodeCheckpoint checks everything (framing, checksums, header fields, layout, finiteness, the
 * caller's expectations) before it returns: a bad file never half-loads into a model.
 */
import { TokenizerError } from './tokenizer';
import type { TokenizerRecord } from './tokenizer-api';
import { readTokenizerRecord } from './tokenizer-record';
import { jsonDepthProblem } from '../util/json-depth';
import { crc32, hex32 } from './checksum';
import {
  CheckpointError,
  checkJsonValue,
  checkMeta,
  checkHyperparams,
  checkTensorEntry,
  describeShape,
  describeValue,
  expectInt,
  expectObject,
  expectString,
  quoteName,
  shapeSize,
  type TensorEntry,
} from './checkpoint-header';

export { CheckpointError } from './checkpoint-header';

export interface CheckpointTensor {
  name: string;
  /** Dimensions, outermost first; the data is row-major with shapeSize(shape) elements. */
  shape: number[];
  data: Float32Array;
}

export interface CheckpointOptimizer {
  kind: 'adamw';
  /** AdamW's step count t (bias correction uses β^t). */
  step: number;
  /** lr, beta1, beta2, eps, weight_decay, … (finite numbers). */
  hyperparams: Record<string, number>;
  /** First and second moments, one tensor per trained weight (same name and shape). */
  m: CheckpointTensor[];
  v: CheckpointTensor[];
}

export interface Checkpoint {
  /** kind: 'transformer' | 'mlp' | 'tabular'; config: that model's JSON config. */
  model: { kind: string; config: unknown };
  /** The tokenizer's record: a character tokenizer's alphabet, or a Hugging Face one's source. */
  tokenizer?: TokenizerRecord;
  /** Training steps taken when saved (integer ≥ 0). */
  step: number;
  /** The run's seed (integer in [0, 2^32 − 1]). */
  seed: number;
  /** Weights. */
  tensors: CheckpointTensor[];
  optimizer?: CheckpointOptimizer;
  meta?: Record<string, string | number | boolean>;
}

/** What the loading model requires; anything else in the file is an error. */
export interface CheckpointExpectation {
  /** model.kind must equal this. */
  kind?: string;
  /** The weight tensors, exactly (any order): none missing, none extra, same shapes. */
  tensors?: { name: string; shape: number[] }[];
}

export const CHECKPOINT_MAGIC = 'ARLCKPT1';
export const CHECKPOINT_VERSION = 1;

/** Whether `bytes` start as a checkpoint file does (its magic), before any decoding. */
export function isCheckpointFile(bytes: Uint8Array): boolean {
  if (bytes.length < CHECKPOINT_MAGIC.length) return false;
  for (let i = 0; i < CHECKPOINT_MAGIC.length; i++) {
    if (bytes[i] !== CHECKPOINT_MAGIC.charCodeAt(i)) return false;
  }
  return true;
}
/** Bytes before the header: magic, version, header length, header CRC. */
const PREAMBLE_BYTES = 20;

const LITTLE_ENDIAN = new Uint8Array(new Uint32Array([1]).buffer)[0] === 1;

interface Group {
  /** Field prefix for errors: 'tensors', 'optimizer.m', 'optimizer.v'. */
  field: string;
  tensors: CheckpointTensor[];
}

/** Serializes `ckpt`; throws CheckpointError for anything decodeCheckpoint would reject. */
export function encodeCheckpoint(ckpt: Checkpoint): Uint8Array {
  const header = buildHeader(ckpt);
  const { groups, entries, floats } = tensorGroups(ckpt);
  header.tensors = entries[0];
  if (header.optimizer) Object.assign(header.optimizer, { m: entries[1], v: entries[2] });

  // Payload first: its CRC goes into the header.
  const payload = new Uint8Array(floats * 4);
  let at = 0;
  for (const group of groups) {
    for (const t of group.tensors) {
      writeFloats(payload, at, t.data);
      at += t.data.byteLength;
    }
  }
  header.payload = { floats, crc32: crc32(payload) };

  const headerBytes = new TextEncoder().encode(JSON.stringify(header));
  const payloadStart = align4(PREAMBLE_BYTES + headerBytes.length);
  const out = new Uint8Array(payloadStart + payload.length); // padding stays zero
  for (let i = 0; i < CHECKPOINT_MAGIC.length; i++) out[i] = CHECKPOINT_MAGIC.charCodeAt(i);
  const view = new DataView(out.buffer);
  view.setUint32(8, CHECKPOINT_VERSION, true);
  view.setUint32(12, headerBytes.length, true);
  view.setUint32(16, crc32(headerBytes), true);
  out.set(headerBytes, PREAMBLE_BYTES);
  out.set(payload, payloadStart);
  return out;
}

/**
 * Parses and checks a checkpoint file. Throws CheckpointError naming the field and the expected
 * vs found value; on success every tensor is a fresh Float32Array of finite values.
 */
export function decodeCheckpoint(bytes: Uint8Array, expect?: CheckpointExpectation): Checkpoint {
  const { header, payloadStart } = readFraming(bytes);
  const parsed = parseHeader(header);
  // The wrong model is the likelier mistake than a damaged payload, and costs no float reads.
  if (expect) checkExpectation(parsed.model.kind, parsed.tensors, expect);
  const floats = parsed.payloadFloats;

  for (let i = PREAMBLE_BYTES + parsed.headerLength; i < payloadStart; i++) {
    if (bytes[i] !== 0) {
      throw new CheckpointError('padding', `byte ${i} must be 0, found ${bytes[i]}`);
    }
  }
  const payloadEnd = payloadStart + floats * 4;
  if (bytes.length < payloadEnd) {
    throw new CheckpointError(
      'payload',
      `truncated: the header declares ${floats} floats (${floats * 4} bytes from byte ` +
        `${payloadStart}), so the file must be ${payloadEnd} bytes, found ${bytes.length}`,
    );
  }
  if (bytes.length > payloadEnd) {
    throw new CheckpointError(
      'payload',
      `trailing bytes: the file must end at byte ${payloadEnd}, found ${bytes.length} bytes`,
    );
  }
  const payload = bytes.subarray(payloadStart, payloadEnd);
  const payloadCrc = crc32(payload);
  if (payloadCrc !== parsed.payloadCrc) {
    throw new CheckpointError(
      'payloadCrc',
      `checksum mismatch: the header says ${hex32(parsed.payloadCrc)}, ` +
        `the payload hashes to ${hex32(payloadCrc)} (the weights are damaged)`,
    );
  }

  const read = (field: string, entries: TensorEntry[]): CheckpointTensor[] =>
    entries.map((e) => {
      const data = readFloats(payload, e.offset, shapeSize(e.shape));
      checkFiniteTensor(`${field}[${quoteName(e.name)}]`, data);
      return { name: e.name, shape: e.shape, data };
    });

  const ckpt: Checkpoint = {
    model: parsed.model,
    step: parsed.step,
    seed: parsed.seed,
    tensors: read('tensors', parsed.tensors),
  };
  if (parsed.tokenizer) ckpt.tokenizer = parsed.tokenizer;
  if (parsed.optimizer) {
    const o = parsed.optimizer;
    ckpt.optimizer = {
      kind: 'adamw',
      step: o.step,
      hyperparams: o.hyperparams,
      m: read('optimizer.m', o.m),
      v: read('optimizer.v', o.v),
    };
  }
  if (parsed.meta) ckpt.meta = parsed.meta;
  return ckpt;
}

// ---------------------------------------------------------------------------------------------
// Framing: magic, version, header bounds and header checksum.

function readFraming(bytes: Uint8Array): { header: Uint8Array; payloadStart: number } {
  if (!(bytes instanceof Uint8Array)) {
    throw new CheckpointError('bytes', `must be a Uint8Array, got ${describeValue(bytes)}`);
  }
  const magicLength = Math.min(bytes.length, CHECKPOINT_MAGIC.length);
  const found = String.fromCharCode(...bytes.subarray(0, magicLength));
  if (found !== CHECKPOINT_MAGIC.slice(0, magicLength) || bytes.length === 0) {
    throw new CheckpointError(
      'magic',
      `not a checkpoint: expected the file to start with ${JSON.stringify(CHECKPOINT_MAGIC)}, ` +
        `found ${JSON.stringify(found)}`,
    );
  }
  if (bytes.length < PREAMBLE_BYTES) {
    throw new CheckpointError(
      'preamble',
      `truncated: a checkpoint starts with ${PREAMBLE_BYTES} bytes of framing, ` +
        `found a ${bytes.length}-byte file`,
    );
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint32(8, true);
  if (version !== CHECKPOINT_VERSION) {
    throw new CheckpointError(
      'version',
      `unsupported format version: expected ${CHECKPOINT_VERSION}, found ${version}`,
    );
  }
  const headerLength = view.getUint32(12, true);
  const headerEnd = PREAMBLE_BYTES + headerLength;
  if (bytes.length < headerEnd) {
    throw new CheckpointError(
      'header',
      `truncated: the preamble declares a ${headerLength}-byte header, so the file must be at ` +
        `least ${headerEnd} bytes, found ${bytes.length}`,
    );
  }
  const header = bytes.subarray(PREAMBLE_BYTES, headerEnd);
  const stored = view.getUint32(16, true);
  const computed = crc32(header);
  if (stored !== computed) {
    throw new CheckpointError(
      'headerCrc',
      `checksum mismatch: the preamble says ${hex32(stored)}, ` +
        `the header hashes to ${hex32(computed)} (the header is damaged)`,
    );
  }
  return { header, payloadStart: align4(headerEnd) };
}

// ---------------------------------------------------------------------------------------------
// Header: JSON → checked fields.

interface ParsedHeader {
  headerLength: number;
  model: { kind: string; config: unknown };
  tokenizer?: TokenizerRecord;
  step: number;
  seed: number;
  meta?: Record<string, string | number | boolean>;
  tensors: TensorEntry[];
  optimizer?: {
    step: number;
    hyperparams: Record<string, number>;
    m: TensorEntry[];
    v: TensorEntry[];
  };
  payloadFloats: number;
  payloadCrc: number;
}

function parseHeader(headerBytes: Uint8Array): ParsedHeader {
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(headerBytes);
  } catch {
    throw new CheckpointError('header', 'is not valid UTF-8');
  }
  const tooDeep = jsonDepthProblem(text);
  if (tooDeep) throw new CheckpointError('header', tooDeep);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new CheckpointError('header', `is not JSON: ${(e as Error).message}`);
  }
  const h = expectObject(json, 'header');
  const model = expectObject(h.model, 'model');
  const kind = expectString(model.kind, 'model.kind');
  if (!('config' in model)) throw new CheckpointError('model.config', 'is missing');
  const parsed: ParsedHeader = {
    headerLength: headerBytes.length,
    model: { kind, config: model.config },
    step: expectInt(h.step, 'step', 0, Number.MAX_SAFE_INTEGER),
    seed: expectInt(h.seed, 'seed', 0, 0xffffffff),
    tensors: [],
    payloadFloats: 0,
    payloadCrc: 0,
  };
  if (h.tokenizer !== undefined) parsed.tokenizer = checkTokenizer(h.tokenizer);
  if (h.meta !== undefined) parsed.meta = checkMeta(h.meta, 'meta');
  const payload = expectObject(h.payload, 'payload');
  parsed.payloadFloats = expectInt(payload.floats, 'payload.floats', 0, 2 ** 31 - 1);
  parsed.payloadCrc = expectInt(payload.crc32, 'payload.crc32', 0, 0xffffffff);

  // Tensors tile the payload back to back: weights, then m, then v.
  const layout = { offset: 0 };
  parsed.tensors = readEntries(h.tensors, 'tensors', layout);
  if (h.optimizer !== undefined) {
    const o = expectObject(h.optimizer, 'optimizer');
    if (o.kind !== 'adamw') {
      throw new CheckpointError(
        'optimizer.kind',
        `unsupported optimizer: expected 'adamw', found ${describeValue(o.kind)}`,
      );
    }
    const m = readEntries(o.m, 'optimizer.m', layout);
    const v = readEntries(o.v, 'optimizer.v', layout);
    parsed.optimizer = {
      step: expectInt(o.step, 'optimizer.step', 0, Number.MAX_SAFE_INTEGER),
      hyperparams: checkHyperparams(o.hyperparams, 'optimizer.hyperparams'),
      m,
      v,
    };
    checkMoments(parsed.tensors, m, v);
  }
  if (layout.offset !== parsed.payloadFloats) {
    throw new CheckpointError(
      'payload.floats',
      `must equal the tensors' total size ${layout.offset}, found ${parsed.payloadFloats}`,
    );
  }
  return parsed;
}

function readEntries(value: unknown, field: string, layout: { offset: number }): TensorEntry[] {
  if (value === undefined) throw new CheckpointError(field, 'is missing');
  if (!Array.isArray(value)) {
    throw new CheckpointError(field, `must be an array of tensors, found ${describeValue(value)}`);
  }
  const seen = new Set<string>();
  return value.map((raw: unknown, i) => {
    const entry = checkTensorEntry(raw, `${field}[${i}]`);
    if (seen.has(entry.name)) {
      throw new CheckpointError(`${field}[${i}].name`, `duplicate name ${quoteName(entry.name)}`);
    }
    seen.add(entry.name);
    if (entry.offset !== layout.offset) {
      throw new CheckpointError(
        `${field}[${i}].offset`,
        `tensor ${quoteName(entry.name)} must start at float ${layout.offset} (tensors are ` +
          `stored back to back in header order), found ${entry.offset}`,
      );
    }
    layout.offset += shapeSize(entry.shape);
    return entry;
  });
}

/** m and v: the same tensors in the same order, each one a weight of the same shape. */
function checkMoments(weights: TensorEntry[], m: TensorEntry[], v: TensorEntry[]): void {
  const shapes = new Map(weights.map((w) => [w.name, w.shape]));
  const mine = (group: string, list: TensorEntry[]): void => {
    for (const e of list) {
      const shape = shapes.get(e.name);
      if (!shape) {
        throw new CheckpointError(
          `${group}[${quoteName(e.name)}]`,
          'unexpected: no weight tensor has this name',
        );
      }
      if (describeShape(shape) !== describeShape(e.shape)) {
        throw new CheckpointError(
          `${group}[${quoteName(e.name)}].shape`,
          `shape mismatch: expected the weight's shape ${describeShape(shape)}, ` +
            `found ${describeShape(e.shape)}`,
        );
      }
    }
  };
  mine('optimizer.m', m);
  mine('optimizer.v', v);
  const names = (list: TensorEntry[]): string => list.map((e) => quoteName(e.name)).join(', ');
  if (names(m) !== names(v)) {
    throw new CheckpointError(
      'optimizer.v',
      `must list the same tensors as optimizer.m: expected [${names(m)}], found [${names(v)}]`,
    );
  }
}

function checkTokenizer(value: unknown): TokenizerRecord {
  const spec = expectObject(value, 'tokenizer');
  try {
    return readTokenizerRecord(spec);
  } catch (e) {
    if (e instanceof TokenizerError) throw new CheckpointError('tokenizer', e.message);
    throw e;
  }
}

// ---------------------------------------------------------------------------------------------
// Encoding side: the same checks, on the in-memory object.

interface HeaderJson {
  model: { kind: string; config: unknown };
  tokenizer?: TokenizerRecord;
  step: number;
  seed: number;
  meta?: Record<string, string | number | boolean>;
  optimizer?: { kind: 'adamw'; step: number; hyperparams: Record<string, number> };
  tensors?: TensorEntry[];
  payload?: { floats: number; crc32: number };
}

function buildHeader(ckpt: Checkpoint): HeaderJson {
  const c = expectObject(ckpt, 'checkpoint');
  const model = expectObject(c.model, 'model');
  const kind = expectString(model.kind, 'model.kind');
  checkJsonValue(model.config, 'model.config');
  const header: HeaderJson = {
    model: { kind, config: model.config },
    step: expectInt(ckpt.step, 'step', 0, Number.MAX_SAFE_INTEGER),
    seed: expectInt(ckpt.seed, 'seed', 0, 0xffffffff),
  };
  if (ckpt.tokenizer !== undefined) header.tokenizer = checkTokenizer(ckpt.tokenizer);
  if (ckpt.meta !== undefined) header.meta = checkMeta(ckpt.meta, 'meta');
  if (ckpt.optimizer !== undefined) {
    const o = expectObject(ckpt.optimizer, 'optimizer');
    if (o.kind !== 'adamw') {
      throw new CheckpointError(
        'optimizer.kind',
        `unsupported optimizer: expected 'adamw', found ${describeValue(o.kind)}`,
      );
    }
    header.optimizer = {
      kind: 'adamw',
      step: expectInt(o.step, 'optimizer.step', 0, Number.MAX_SAFE_INTEGER),
      hyperparams: checkHyperparams(o.hyperparams, 'optimizer.hyperparams'),
    };
  }
  return header;
}

/**
 * The tensor lists in payload order, each tensor checked (name, shape, data, finiteness), with
 * their header entries and the payload size in floats.
 */
function tensorGroups(ckpt: Checkpoint): {
  groups: Group[];
  entries: TensorEntry[][];
  floats: number;
} {
  const groups: Group[] = [{ field: 'tensors', tensors: ckpt.tensors }];
  if (ckpt.optimizer) {
    groups.push({ field: 'optimizer.m', tensors: ckpt.optimizer.m });
    groups.push({ field: 'optimizer.v', tensors: ckpt.optimizer.v });
  }
  const entries: TensorEntry[][] = [];
  let offset = 0;
  for (const group of groups) {
    if (!Array.isArray(group.tensors)) {
      throw new CheckpointError(
        group.field,
        `must be an array of tensors, found ${describeValue(group.tensors)}`,
      );
    }
    const seen = new Set<string>();
    entries.push(
      group.tensors.map((t, i) => {
        const where = `${group.field}[${i}]`;
        const entry = checkTensorEntry({ name: t?.name, shape: t?.shape, offset }, where);
        if (seen.has(entry.name)) {
          throw new CheckpointError(`${where}.name`, `duplicate name ${quoteName(entry.name)}`);
        }
        seen.add(entry.name);
        const size = shapeSize(entry.shape);
        if (!(t.data instanceof Float32Array) || t.data.length !== size) {
          throw new CheckpointError(
            `${group.field}[${quoteName(entry.name)}].data`,
            `must be a Float32Array of ${size} elements (shape ${describeShape(entry.shape)}), ` +
              `found ${describeValue(t.data)}`,
          );
        }
        checkFiniteTensor(`${group.field}[${quoteName(entry.name)}]`, t.data);
        offset += size;
        return entry;
      }),
    );
  }
  if (ckpt.optimizer) checkMoments(entries[0]!, entries[1]!, entries[2]!);
  return { groups, entries, floats: offset };
}

// ---------------------------------------------------------------------------------------------
// Expectations, floats and small helpers.

function checkExpectation(
  kind: string,
  tensors: readonly TensorEntry[],
  expect: CheckpointExpectation,
): void {
  if (expect.kind !== undefined && kind !== expect.kind) {
    throw new CheckpointError(
      'model.kind',
      `kind mismatch: expected ${JSON.stringify(expect.kind)}, ` + `found ${JSON.stringify(kind)}`,
    );
  }
  if (expect.tensors === undefined) return;
  const found = new Map(tensors.map((t) => [t.name, t.shape]));
  const wanted = new Set<string>();
  for (const e of expect.tensors) {
    wanted.add(e.name);
    const shape = found.get(e.name);
    if (!shape) {
      throw new CheckpointError(
        `tensors[${quoteName(e.name)}]`,
        `missing: expected a tensor of shape ${describeShape(e.shape)}, the file has none ` +
          `(it has ${tensors.length} tensors)`,
      );
    }
    if (describeShape(shape) !== describeShape(e.shape)) {
      throw new CheckpointError(
        `tensors[${quoteName(e.name)}].shape`,
        `shape mismatch for ${quoteName(e.name)}: expected ${describeShape(e.shape)}, ` +
          `found ${describeShape(shape)}`,
      );
    }
  }
  for (const t of tensors) {
    if (!wanted.has(t.name)) {
      throw new CheckpointError(
        `tensors[${quoteName(t.name)}]`,
        `unexpected: the model has no tensor of this name (shape ${describeShape(t.shape)})`,
      );
    }
  }
}

function checkFiniteTensor(field: string, data: Float32Array): void {
  for (let i = 0; i < data.length; i++) {
    if (!Number.isFinite(data[i]!)) {
      throw new CheckpointError(field, `must be finite, but index ${i} is ${data[i]}`);
    }
  }
}

/** Copies `data` into `out` at byte `at` as float32 little-endian (bit-exact). */
function writeFloats(out: Uint8Array, at: number, data: Float32Array): void {
  if (LITTLE_ENDIAN) {
    out.set(new Uint8Array(data.buffer, data.byteOffset, data.byteLength), at);
    return;
  }
  const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
  for (let i = 0; i < data.length; i++) view.setFloat32(at + 4 * i, data[i]!, true);
}

/** `count` float32 LE values from `payload` starting at float `offset`, as a fresh array. */
function readFloats(payload: Uint8Array, offset: number, count: number): Float32Array {
  const start = offset * 4;
  if (LITTLE_ENDIAN) {
    // Copy into a fresh, aligned buffer (not .slice(): on a Node Buffer that is a view).
    const copy = new Uint8Array(count * 4);
    copy.set(payload.subarray(start, start + count * 4));
    return new Float32Array(copy.buffer);
  }
  const view = new DataView(payload.buffer, payload.byteOffset, payload.byteLength);
  const out = new Float32Array(count);
  for (let i = 0; i < count; i++) out[i] = view.getFloat32(start + 4 * i, true);
  return out;
}

function align4(n: number): number {
  return (n + 3) & ~3;
}
