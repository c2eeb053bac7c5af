/**
 * A small WebAssembly encoder: enough of the binary format (types, one memory, functions, exports)
 * and of the instruction set (i32 arithmetic, loads and stores, structured control, the f64x2 SIMD
 * operations) to write the CPU kernels of src/ops/nn as readable TypeScript, built at run time.
 * Nothing is fetched or compiled from text: the bytes are assembled here and handed to
 * `new WebAssembly.Module`, synchronously (the kernels are a few hundred bytes, under every
 * browser's limit for synchronous compilation on the main thread).
 *
 * Instructions are written in folded form, operands first: `i32.add(local.get(x), i32.const(4))`
 * returns the bytes of `local.get x; i32.const 4; i32.add`. Binary format: WebAssembly Core
 * Specification 2.0, §5 (SIMD opcodes under the 0xFD prefix, §5.4.8).
 */

export type Code = readonly number[];

/** Value types (§5.3.1). */
export const i32T = 0x7f;
export const f64T = 0x7c;
export const v128T = 0x7b;
export type ValueType = typeof i32T | typeof f64T | typeof v128T;

/** Unsigned LEB128 (§5.2.2): sizes, indices, alignments and offsets. */
export function uleb(value: number): number[] {
  if (!Number.isInteger(value) || value < 0 || value > 0xffffffff) {
    throw new RangeError(`uleb: value must be an integer in [0, 2^32 − 1], got ${value}`);
  }
  const bytes: number[] = [];
  let v = value;
  do {
    const byte = v & 0x7f;
    v = Math.floor(v / 128);
    bytes.push(v === 0 ? byte : byte | 0x80);
  } while (v !== 0);
  return bytes;
}

/** Signed LEB128 of a 32-bit integer (§5.2.2): i32.const immediates. */
export function sleb(value: number): number[] {
  if (!Number.isInteger(value) || value < -(2 ** 31) || value > 2 ** 31 - 1) {
    throw new RangeError(`sleb: value must be an integer in [−2^31, 2^31 − 1], got ${value}`);
  }
  const bytes: number[] = [];
  let v = value;
  for (;;) {
    const byte = v & 0x7f;
    v >>= 7;
    const done = (v === 0 && (byte & 0x40) === 0) || (v === -1 && (byte & 0x40) !== 0);
    bytes.push(done ? byte : byte | 0x80);
    if (done) return bytes;
  }
}

const vec = (items: readonly Code[]): number[] => [...uleb(items.length), ...items.flat()];
const name = (text: string): number[] => vec([...new TextEncoder().encode(text)].map((b) => [b]));
const section = (id: number, body: Code): number[] => [id, ...uleb(body.length), ...body];
const simd = (opcode: number): number[] => [0xfd, ...uleb(opcode)];
/** memarg (§5.4.6): log2 of the alignment, then the byte offset. */
const memarg = (alignLog2: number, offset: number): number[] => [
  ...uleb(alignLog2),
  ...uleb(offset),
];

export const local = {
  get: (index: number): Code => [0x20, ...uleb(index)],
  set: (index: number, value: Code): Code => [...value, 0x21, ...uleb(index)],
};

export const i32 = {
  const: (value: number): Code => [0x41, ...sleb(value)],
  add: (a: Code, b: Code): Code => [...a, ...b, 0x6a],
  sub: (a: Code, b: Code): Code => [...a, ...b, 0x6b],
  mul: (a: Code, b: Code): Code => [...a, ...b, 0x6c],
  shl: (a: Code, b: Code): Code => [...a, ...b, 0x74],
  geU: (a: Code, b: Code): Code => [...a, ...b, 0x4f],
};

export const f64 = {
  /** An 8-byte-aligned load from address + offset. */
  load: (address: Code, offset = 0): Code => [...address, 0x2b, ...memarg(3, offset)],
};

export const v128 = {
  /** A 16-byte-aligned load from address + offset. */
  load: (address: Code, offset = 0): Code => [...address, ...simd(0x00), ...memarg(4, offset)],
  store: (address: Code, value: Code, offset = 0): Code => [
    ...address,
    ...value,
    ...simd(0x0b),
    ...memarg(4, offset),
  ],
  zero: (): Code => [...simd(0x0c), ...new Array<number>(16).fill(0)],
};

export const f64x2 = {
  splat: (value: Code): Code => [...value, ...simd(0x14)],
  add: (a: Code, b: Code): Code => [...a, ...b, ...simd(0xf0)],
  mul: (a: Code, b: Code): Code => [...a, ...b, ...simd(0xf2)],
};

/**
 * Structured control (§5.4.1). `block(label => body)`: `br(label)` inside jumps past its end.
 * `loop(label => body)`: `br(label)` jumps back to its start. Labels are resolved to relative
 * depths by `br`/`brIf`, so nesting can be written without counting.
 */
export interface Label {
  readonly depth: number;
}
let depth = 0;
function structured(opcode: number, body: (label: Label) => Code[]): Code {
  const label = { depth: ++depth };
  try {
    return [opcode, 0x40, ...body(label).flat(), 0x0b];
  } finally {
    depth--;
  }
}
export const block = (body: (label: Label) => Code[]): Code => structured(0x02, body);
export const loop = (body: (label: Label) => Code[]): Code => structured(0x03, body);
export const br = (label: Label): Code => [0x0c, ...uleb(depth - label.depth)];
export const brIf = (label: Label, condition: Code): Code => [
  ...condition,
  0x0d,
  ...uleb(depth - label.depth),
];

/**
 * for (counter = from; counter < to; counter += step) body — `to` is evaluated before every pass,
 * compared unsigned.
 */
export function forRange(counter: number, from: Code, to: Code, step: number, body: Code[]): Code {
  return [
    ...local.set(counter, from),
    ...block((done) => [
      loop((next) => [
        brIf(done, i32.geU(local.get(counter), to)),
        ...body,
        local.set(counter, i32.add(local.get(counter), i32.const(step))),
        br(next),
      ]),
    ]),
  ];
}

export interface FunctionDef {
  name: string;
  params: readonly ValueType[];
  /** Locals after the parameters, in index order. */
  locals: readonly ValueType[];
  body: readonly Code[];
}

/** A module with one memory (exported as "memory", `pages` × 64 KiB to start) and `functions`. */
export function encodeModule(
  pages: number,
  functions: readonly FunctionDef[],
): Uint8Array<ArrayBuffer> {
  const types = functions.map((f) => [0x60, ...vec(f.params.map((t) => [t])), ...vec([])]);
  const codes = functions.map((f) => {
    const locals = vec(f.locals.map((t) => [...uleb(1), t]));
    const body = [...locals, ...f.body.flat(), 0x0b];
    return [...uleb(body.length), ...body];
  });
  const exports = [
    [...name('memory'), 0x02, ...uleb(0)],
    ...functions.map((f, index) => [...name(f.name), 0x00, ...uleb(index)]),
  ];
  return new Uint8Array([
    ...[0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00],
    ...section(1, vec(types)),
    ...section(3, vec(functions.map((_, index) => uleb(index)))),
    ...section(5, vec([[0x00, ...uleb(pages)]])),
    ...section(7, vec(exports)),
    ...section(10, vec(codes)),
  ]);
}
