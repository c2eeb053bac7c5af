/**
 * Hyperparameters declared once with their meaning: each algorithm's config is a typed object, and
 * beside it a spec with one entry per field — what it means, its valid range, the name verl / TRL /
 * OpenRLHF give it, and whether it may change while a run trains. The CLI flags and the lab's form
 * are generated from the spec, and every config (initial or a live change) is validated by it, so
 * a bad value is refused with the field and the range named.
 */
import { DECIMAL_NOTATION, parseDecimal } from './decimal';
import { OpInputError } from './input-error';
import { own } from './own';
import { shownText, shownValue } from './shown-text';

interface FieldBase {
  /** One line: what the field does. */
  doc: string;
  /** The frameworks' names, e.g. "verl: actor.clip_ratio; TRL: epsilon". */
  framework?: string;
  /** May change between updates of a running trainer (else only at creation). */
  live: boolean;
}

export interface NumberField extends FieldBase {
  kind: 'number' | 'int';
  min: number;
  max: number;
  /** The bounds themselves are excluded. */
  minOpen?: boolean;
  maxOpen?: boolean;
}

export interface BooleanField extends FieldBase {
  kind: 'boolean';
}

export interface ChoiceField extends FieldBase {
  kind: 'choice';
  options: readonly string[];
}

export type FieldSpec = NumberField | BooleanField | ChoiceField;

/** A spec for config type C: one FieldSpec per field. */
export type ConfigSpec<C> = { readonly [K in keyof C]-?: FieldSpec };

type Value = number | boolean | string;

/** Checks one value against its field spec; throws OpInputError naming `scope`.`field`. */
export function checkField(scope: string, field: string, spec: FieldSpec, value: unknown): void {
  const fail = (message: string): never => {
    throw new OpInputError(scope, field, message);
  };
  if (spec.kind === 'boolean') {
    if (typeof value !== 'boolean') fail(`must be true or false, got ${shownValue(value)}`);
    return;
  }
  if (spec.kind === 'choice') {
    if (typeof value !== 'string' || !spec.options.includes(value)) {
      fail(
        `must be one of ${spec.options.map((o) => `'${o}'`).join(', ')}, got ${shownValue(value)}`,
      );
    }
    return;
  }
  const range = rangeText(spec);
  const what = spec.kind === 'int' ? 'an integer' : 'a number';
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    // A value from a file may be a string of any length: the message quotes its start only.
    fail(`must be ${what} in ${range}, got ${shownValue(value)}`);
  }
  const n = value as number;
  const below = spec.minOpen ? n <= spec.min : n < spec.min;
  const above = spec.maxOpen ? n >= spec.max : n > spec.max;
  if ((spec.kind === 'int' && !Number.isInteger(n)) || below || above) {
    fail(`must be ${what} in ${range}, got ${n}`);
  }
}

/** A number field's range as messages write it: [0, 1], (0, 1], … */
export function rangeText(spec: Pick<NumberField, 'min' | 'max' | 'minOpen' | 'maxOpen'>): string {
  return `${spec.minOpen ? '(' : '['}${spec.min}, ${spec.max}${spec.maxOpen ? ')' : ']'}`;
}

/** Validates every field of a full config (unknown keys are errors too). */
export function checkConfig<C extends object>(scope: string, spec: ConfigSpec<C>, config: C): void {
  checkPartial(scope, spec, config, { liveOnly: false });
}

/**
 * Checks that `config` is a whole config of `spec` — every field present and in range, no other —
 * so that code holding only a settings record (the algorithm registry) may treat it as a C.
 */
export function assertConfig<C extends object>(
  scope: string,
  spec: ConfigSpec<C>,
  config: object,
): asserts config is C {
  for (const key of Object.keys(spec)) {
    if (!Object.hasOwn(config, key)) throw new OpInputError(scope, key, 'is missing');
  }
  checkPartial(scope, spec, config, { liveOnly: false });
}

/**
 * Validates a partial change. With liveOnly, fields that cannot change while running are refused
 * with a message saying so (the lab then offers "duplicate with this change" instead).
 */
export function checkPartial<C extends object>(
  scope: string,
  spec: ConfigSpec<C>,
  partial: Partial<C>,
  options: { liveOnly: boolean },
): void {
  for (const [key, value] of Object.entries(partial)) {
    // Own keys only: 'constructor' is not a setting, whatever Object.prototype holds.
    const field = own(spec as Record<string, FieldSpec>, key);
    if (!field) {
      throw new OpInputError(
        scope,
        key,
        `is not a setting of ${scope} (known: ${Object.keys(spec).join(', ')})`,
      );
    }
    if (options.liveOnly && !field.live) {
      throw new OpInputError(
        scope,
        key,
        'cannot change while the run trains; fork or duplicate the run instead',
      );
    }
    checkField(scope, key, field, value);
  }
}

/** Parses `--kebab-name=value` flags for the fields of `spec` (CLI); unknown flags are left alone. */
export function configFromFlags<C extends object>(
  scope: string,
  spec: ConfigSpec<C>,
  flags: ReadonlyMap<string, string>,
): Partial<C> {
  const out: Record<string, Value> = {};
  for (const [key, field] of Object.entries(spec) as [string, FieldSpec][]) {
    const raw = flags.get(kebab(key));
    if (raw === undefined) continue;
    const value: Value =
      field.kind === 'boolean'
        ? raw === 'true'
          ? true
          : raw === 'false'
            ? false
            : raw
        : field.kind === 'choice'
          ? raw
          : parseDecimal(raw);
    if (field.kind !== 'boolean' && field.kind !== 'choice' && Number.isNaN(value)) {
      // `0x10` would be 16 to Number(): refused, not read as something other than it looks.
      const what = field.kind === 'int' ? 'an integer' : 'a number';
      throw new OpInputError(
        scope,
        key,
        `must be ${what} in ${rangeText(field)} ${DECIMAL_NOTATION}, got '${shownText(raw)}'`,
      );
    }
    checkField(scope, key, field, value);
    out[key] = value;
  }
  return out as Partial<C>;
}

/** camelCase → kebab-case: the CLI spelling of a field. */
export function kebab(key: string): string {
  return key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
