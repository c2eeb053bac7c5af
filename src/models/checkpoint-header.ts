/**
 * Field checks for checkpoint headers (the JSON part of a checkpoint file, and the same fields of
 * an in-memory Checkpoint before it is written). Each failure is a CheckpointError naming the
 * field path, what was expected and what was found.
 */

import { shownText, shownValue } from '../util/shown-text';

/** A bad or damaged checkpoint; `field` names what is wrong ('magic', 'tensors["w"].shape', …). */
export class CheckpointError extends Error {
  override readonly name = 'CheckpointError';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(`checkpoint ${field}: ${message}`);
  }
}

/** One tensor as the header lists it; `offset` counts floats from the start of the payload. */
export interface TensorEntry {
  name: string;
  shape: number[];
  offset: number;
}

/** Largest tensor / payload, in floats (typed-array lengths stay well inside this). */
const MAX_FLOATS = 2 ** 31 - 1;
/** Nesting limit for model configs: deep enough for any config, shallow enough to stop cycles. */
const MAX_DEPTH = 32;

export function expectObject(value: unknown, field: string): Record<string, unknown> {
  if (value === undefined) throw new CheckpointError(field, 'is missing');
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CheckpointError(field, `must be an object, found ${describeValue(value)}`);
  }
  return value as Record<string, unknown>;
}

export function expectString(value: unknown, field: string): string {
  if (value === undefined) throw new CheckpointError(field, 'is missing');
  if (typeof value !== 'string' || value.length === 0) {
    throw new CheckpointError(field, `must be a non-empty string, found ${describeValue(value)}`);
  }
  return value;
}

export function expectInt(value: unknown, field: string, min: number, max: number): number {
  if (value === undefined) throw new CheckpointError(field, 'is missing');
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new CheckpointError(
      field,
      `must be an integer in [${min}, ${max}], found ${describeValue(value)}`,
    );
  }
  return value;
}

/** { name, shape, offset } with a non-empty name and non-negative integer dimensions. */
export function checkTensorEntry(value: unknown, field: string): TensorEntry {
  const e = expectObject(value, field);
  const name = expectString(e.name, `${field}.name`);
  const rawShape = e.shape;
  if (!Array.isArray(rawShape)) {
    throw new CheckpointError(
      `${field}.shape`,
      `must be an array of dimensions, found ${describeValue(rawShape)}`,
    );
  }
  const shape = rawShape.map((d: unknown, i) =>
    expectInt(d, `${field}.shape[${i}]`, 0, MAX_FLOATS),
  );
  if (shapeSize(shape) > MAX_FLOATS) {
    throw new CheckpointError(
      `${field}.shape`,
      `tensor ${quoteName(name)} of shape ${describeShape(shape)} has more than ${MAX_FLOATS} ` +
        `elements`,
    );
  }
  const offset = expectInt(e.offset, `${field}.offset`, 0, MAX_FLOATS);
  return { name, shape, offset };
}

/** Product of the dimensions (1 for a scalar, shape []). */
export function shapeSize(shape: readonly number[]): number {
  let size = 1;
  for (const d of shape) size *= d;
  return size;
}

/** "[2, 3]". */
export function describeShape(shape: readonly number[]): string {
  return `[${shape.join(', ')}]`;
}

/** A tensor name in quotes, unambiguous even when it holds quotes or dots. */
export function quoteName(name: string): string {
  return JSON.stringify(name);
}

/** meta: string, finite-number or boolean values; returns a copy. */
export function checkMeta(
  value: unknown,
  field: string,
): Record<string, string | number | boolean> {
  const meta = expectObject(value, field);
  const entries = Object.entries(meta).map(([key, v]) => {
    const ok =
      typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && isFinite(v));
    if (!ok) {
      throw new CheckpointError(
        `${field}.${key}`,
        `must be a string, a finite number or a boolean, found ${describeValue(v)}`,
      );
    }
    return [key, v] as const;
  });
  // fromEntries defines own properties, so a "__proto__" key stays a plain key.
  return Object.fromEntries(entries);
}

/** Optimizer hyperparameters: finite numbers; returns a copy. */
export function checkHyperparams(value: unknown, field: string): Record<string, number> {
  const params = expectObject(value, field);
  const entries = Object.entries(params).map(([key, v]) => {
    if (typeof v !== 'number' || !isFinite(v)) {
      throw new CheckpointError(
        `${field}.${key}`,
        `must be a finite number, found ${describeValue(v)}`,
      );
    }
    return [key, v] as const;
  });
  return Object.fromEntries(entries);
}

/**
 * `value` survives JSON unchanged: null, booleans, strings, finite numbers, arrays and plain
 * objects of those. (JSON.stringify would silently turn NaN into null and drop undefined.)
 */
export function checkJsonValue(value: unknown, field: string, depth = 0): void {
  if (depth > MAX_DEPTH) {
    throw new CheckpointError(field, `nests deeper than ${MAX_DEPTH} levels (a cycle?)`);
  }
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (!isFinite(value)) throw new CheckpointError(field, `must be finite, found ${value}`);
    return;
  }
  if (Array.isArray(value)) {
    value.forEach((v: unknown, i) => checkJsonValue(v, `${field}[${i}]`, depth + 1));
    return;
  }
  const proto: unknown = typeof value === 'object' ? Object.getPrototypeOf(value) : undefined;
  if (proto === Object.prototype || proto === null) {
    for (const [key, v] of Object.entries(value as object))
      checkJsonValue(v, `${field}.${key}`, depth + 1);
    return;
  }
  throw new CheckpointError(field, `must be plain JSON data, found ${describeValue(value)}`);
}

/** A short description of a found value for messages: 'null', 'an array', 'number NaN', … */
export function describeValue(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (value instanceof Float32Array) return `a Float32Array of ${value.length} elements`;
  if (ArrayBuffer.isView(value)) return `a ${value.constructor.name}`;
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(shownText(value));
  if (typeof value === 'object') return 'an object';
  return `${typeof value} ${shownValue(value)}`;
}
