/**
 * Helpers for the importers' fuzz tests (tests/compare/import-fuzz.test.ts, the .ckpt and .onnx
 * ones): untrusted input changed in the ways files break — keys named after Object.prototype's
 * members, flipped bits, cuts, nesting and size bombs — and a check that an importer answers each
 * with its own refusal or a result, within a memory bound, never with another exception. How long
 * an answer takes is the bench's to say (suite input-guards), not a limit a loaded machine fails.
 */
import { expect, vi } from 'vitest';

/** Keys that find Object.prototype's members (or set an object's prototype) in a plain lookup. */
export const PROTOTYPE_KEYS = [
  '__proto__',
  'constructor',
  'toString',
  'hasOwnProperty',
  'valueOf',
  'isPrototypeOf',
  'prototype',
] as const;

/** JSON values to put under such a key. */
export const ODD_VALUES: readonly unknown[] = [1, 'x', true, null, [], {}, { x: [1] }, [[0]]];

type Json = unknown;

/** Every path to an object (not an array) inside `value`, the root included. */
export function objectPaths(value: Json, path: (string | number)[] = []): (string | number)[][] {
  if (typeof value !== 'object' || value === null) return [];
  const inner = Object.entries(value as object).flatMap(([k, v]) =>
    objectPaths(v, [...path, Array.isArray(value) ? Number(k) : k]),
  );
  return Array.isArray(value) ? inner : [path, ...inner];
}

/** Every path to any value inside `value` (not the root). */
export function valuePaths(value: Json, path: (string | number)[] = []): (string | number)[][] {
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value as object).flatMap(([k, v]) => {
    const at = [...path, Array.isArray(value) ? Number(k) : k];
    return [at, ...valuePaths(v, at)];
  });
}

function at(root: Json, path: readonly (string | number)[]): Record<string, unknown> {
  let node = root as Record<string, unknown>;
  for (const key of path) node = node[key] as Record<string, unknown>;
  return node;
}

/**
 * `json` as text with `key: value` added to the object at `path` as an own property (JSON.parse
 * makes "__proto__" an own key too, so the text is what a file holding it would read).
 */
export function withKey(
  json: Json,
  path: readonly (string | number)[],
  key: string,
  value: unknown,
): string {
  const copy = structuredClone(json);
  Object.defineProperty(at(copy, path), key, {
    value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return JSON.stringify(copy);
}

/** `json` as text with the value at `path` replaced by `raw` JSON text. */
export function withRawValue(json: Json, path: readonly (string | number)[], raw: string): string {
  const copy = structuredClone(json);
  const marker = 'fuzz-value-marker-7f3a';
  at(copy, path.slice(0, -1))[path[path.length - 1]!] = marker;
  return JSON.stringify(copy).replace(JSON.stringify(marker), raw);
}

/** `depth` nested arrays or objects: [[[…]]] or {"a":{"a":…}}. */
export function nested(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array'
    ? '['.repeat(depth) + ']'.repeat(depth)
    : '{"a":'.repeat(depth) + '{}' + '}'.repeat(depth);
}

/** `text` with bit `bit` (0–15) of UTF-16 unit `index` flipped. */
export function flipChar(text: string, index: number, bit: number): string {
  const code = text.charCodeAt(index) ^ (1 << bit);
  return text.slice(0, index) + String.fromCharCode(code) + text.slice(index + 1);
}

/** `bytes` with bit `bit` (0–7) of byte `index` flipped (a copy). */
export function flipBit(bytes: Uint8Array, index: number, bit: number): Uint8Array {
  const out = bytes.slice();
  out[index]! ^= 1 << bit;
  return out;
}

/**
 * What an importer did with one input, and the length of every text it handed to JSON.parse while
 * reading it (a bomb refused before parsing leaves none as long as itself).
 */
export type Outcome<T> = ({ ok: true; value: T } | { ok: false; error: Error }) & {
  parsed: number[];
};

/**
 * Runs `read` and returns its result or its refusal (an error of `refusal`'s class); any other
 * exception fails the test. It must grow the heap by at most `mb`.
 */
export function answer<T>(
  read: () => T,
  refusal: abstract new (...args: never[]) => Error,
  bounds: { mb?: number } = {},
): Outcome<T> {
  const { mb = 64 } = bounds;
  const parsed: number[] = [];
  const parse = JSON.parse;
  const spy = vi.spyOn(JSON, 'parse').mockImplementation((text, reviver) => {
    parsed.push(String(text).length);
    return parse(text, reviver) as unknown;
  });
  const heap = process.memoryUsage().heapUsed;
  let outcome: Outcome<T>;
  try {
    outcome = { ok: true, value: read(), parsed };
  } catch (error) {
    if (!(error instanceof refusal)) throw error;
    outcome = { ok: false, error, parsed };
  } finally {
    spy.mockRestore();
  }
  expect((process.memoryUsage().heapUsed - heap) / 2 ** 20, 'heap growth (MB)').toBeLessThan(mb);
  return outcome;
}

/** Object.prototype's own names now, to show that no input added one (or replaced one). */
export function prototypeSnapshot(): string {
  return Object.getOwnPropertyNames(Object.prototype)
    .map((name) => `${name}:${typeof (Object.prototype as Record<string, unknown>)[name]}`)
    .sort()
    .join(',');
}
