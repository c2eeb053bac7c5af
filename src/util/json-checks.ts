/**
 * Checks for untrusted JSON (imported run files and the checkpoints in them, URL state): each
 * failure is an ImportError naming the JSON path of the bad value — `metrics['reward/mean'][12]`,
 * `spec.config.lr`, `runs[1].seed` — what was expected and what was found. Settings are checked by
 * their own FieldSpecs (checkField), so an import accepts exactly what the trainer would. Generic:
 * the lab's own fields (tasks, curricula, reward models) are checked in src/compare/json-checks.ts.
 */
import { OpInputError } from './input-error';
import { checkField, type FieldSpec } from './hyperparams';
import { shownText } from './shown-text';

/** A setting's value as JSON holds it. */
type Settings = Record<string, number | boolean | string>;

/**
 * What an import accepts at most (run files, and the checkpoints inside them); larger files are
 * refused before any other work.
 */
export const IMPORT_LIMITS = {
  /** Characters of the JSON text (≈ bytes for the ASCII JSON the lab writes): 20 MB. */
  maxChars: 20_000_000,
  /** Metric values over all series. */
  maxPoints: 1_000_000,
  maxMetrics: 1_000,
  maxEvents: 100_000,
  /** Metric, summary and task names. */
  maxNameLength: 200,
  /** Free text: event reasons, labels, backend descriptions. */
  maxTextLength: 2_000,
} as const;

/** A bad file or link: `path` names the value, the message says what is wrong with it. */
export class ImportError extends Error {
  override readonly name: string = 'ImportError';
  constructor(
    /** JSON path of the bad value, e.g. "metrics['reward/mean'][12]"; '(file)' for the whole. */
    readonly path: string,
    /** What is wrong, e.g. 'must be a number or "NaN", got true'. */
    readonly problem: string,
  ) {
    super(`${path}: ${problem}`);
  }
}

/** The path of `key` inside `path`: a.b, a['x/y'], a[3]; the root is ''. */
export function child(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  if (/^[A-Za-z_$][\w$]*$/.test(key)) return path ? `${path}.${key}` : key;
  return `${path}[${quote(key)}]`;
}

function quote(key: string): string {
  const shown = shownText(key, 60);
  return `'${shown.replaceAll('\\', '\\\\').replaceAll("'", "\\'")}'`;
}

/** A short description of a found value for messages: 'true', '"abc"', 'an array of 3', … */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') {
    return JSON.stringify(shownText(value));
  }
  if (Array.isArray(value)) return `an array of ${value.length}`;
  if (typeof value === 'object') return 'an object';
  return String(value);
}

/** Whether `value` is a plain JSON object (not an array, not null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A plain JSON object (not an array, not null). */
export function expectRecord(value: unknown, path: string): Record<string, unknown> {
  if (!isRecord(value)) {
    throw new ImportError(path || '(root)', `must be an object, got ${describeValue(value)}`);
  }
  return value as Record<string, unknown>;
}

/** Refuses keys outside required ∪ optional (naming the first) and missing required keys. */
export function expectKeys(
  object: Record<string, unknown>,
  path: string,
  required: readonly string[],
  optional: readonly string[] = [],
): void {
  for (const key of Object.keys(object)) {
    if (!required.includes(key) && !optional.includes(key)) {
      const known = [...required, ...optional].join(', ');
      throw new ImportError(child(path, key), `is not a known field here (known: ${known})`);
    }
  }
  for (const key of required) {
    if (!Object.hasOwn(object, key)) throw new ImportError(child(path, key), 'is missing');
  }
}

/** A string of at most `max` characters (non-empty unless allowEmpty). */
export function expectString(
  value: unknown,
  path: string,
  max: number,
  allowEmpty = false,
): string {
  if (typeof value !== 'string' || (!allowEmpty && value.length === 0)) {
    throw new ImportError(
      path,
      `must be a ${allowEmpty ? '' : 'non-empty '}string, got ${describeValue(value)}`,
    );
  }
  if (value.length > max) {
    throw new ImportError(path, `must be at most ${max} characters, got ${value.length}`);
  }
  return value;
}

/** An integer in [min, max]. */
export function expectInt(value: unknown, path: string, min: number, max: number): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new ImportError(
      path,
      `must be an integer in [${min}, ${max}], got ${describeValue(value)}`,
    );
  }
  return value;
}

/** One of a fixed set of strings. */
export function expectOneOf<T extends string>(
  value: unknown,
  path: string,
  options: readonly T[],
): T {
  if (typeof value !== 'string' || !(options as readonly string[]).includes(value)) {
    const list = options.map((o) => `'${o}'`).join(', ');
    throw new ImportError(path, `must be one of ${list}, got ${describeValue(value)}`);
  }
  return value as T;
}

/**
 * Settings of `algo` at `path`: an object whose every key is a setting of the algorithm and whose
 * every value passes that setting's FieldSpec. With `full`, the result is a whole config: a
 * setting the object lacks takes the algorithm's default; without, any subset (a live change, a
 * diff).
 */
export function expectSettings(
  value: unknown,
  path: string,
  algo: { name: string; spec: Readonly<Record<string, FieldSpec>>; defaults: Settings },
  full: boolean,
): Settings {
  const object = expectRecord(value, path);
  const out: Settings = {};
  for (const [key, setting] of Object.entries(object)) {
    const at = child(path, key);
    // Own keys only: 'constructor' or 'toString' must not find Object.prototype's members.
    if (!Object.hasOwn(algo.spec, key)) {
      throw new ImportError(at, `is not a setting of ${algo.name}`);
    }
    try {
      checkField(algo.name, key, algo.spec[key]!, setting);
    } catch (error) {
      if (!(error instanceof OpInputError)) throw error;
      // "grpo: lr must be …" → "must be …": the path already names the field.
      throw new ImportError(at, error.message.slice(`${error.op}: ${error.field} `.length));
    }
    out[key] = setting as Settings[string];
  }
  if (full) {
    for (const key of Object.keys(algo.spec)) {
      if (Object.hasOwn(object, key)) continue;
      // A file written before this setting existed. A new setting's default is the behaviour the
      // lab had without it (the reward settings, for one), so the default is what that run used.
      const fallback = algo.defaults[key];
      if (fallback === undefined) throw new ImportError(child(path, key), 'is missing');
      out[key] = fallback;
    }
  }
  return out;
}
