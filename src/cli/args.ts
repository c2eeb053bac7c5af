/**
 * `--name=value` / `--switch` command-line parsing for the project's CLIs (no dependencies).
 *
 * Every refusal names the flag and what it accepts: a value flag given bare (`--out`) or empty
 * (`--out=`), a number out of its range, a switch given a word it does not
 * know, a number not in decimal notation (`0x10`). Values quoted in a refusal are cut to
 * SHOWN_TEXT_MAX characters. Names are kept in a Map, so a flag or a value such as `__proto__` or `constructor` is only
 * ever a string, never a member of Object.prototype.
 */
import { DECIMAL_NOTATION, parseDecimal } from '../util/decimal';
import { checkField, rangeText, type NumberField } from '../util/hyperparams';
import { shownText } from '../util/shown-text';

/** A bad flag: the message names it (`--updates must be an integer in [1, 100000], got '-5'`). */
export class FlagError extends Error {
  override readonly name = 'FlagError';
  constructor(
    readonly flag: string,
    message: string,
  ) {
    super(message);
  }
}

/** A flag given without `=value`. */
const BARE = Symbol('bare');

/** An inclusive range unless an end is marked open, as the settings' FieldSpecs have it. */
export interface Range {
  min: number;
  max: number;
  minOpen?: boolean;
  maxOpen?: boolean;
}

export class CliArgs {
  private readonly values = new Map<string, string | typeof BARE>();
  private readonly used = new Set<string>();

  constructor(args: readonly string[]) {
    for (const arg of args) {
      const match = /^--([a-z][a-z0-9-]*)(?:=(.*))?$/s.exec(arg);
      if (!match) {
        const shown = shownText(arg);
        throw new FlagError(shown, `unexpected argument "${shown}" (expected --name=value)`);
      }
      const [, name, value] = match as unknown as [string, string, string | undefined];
      if (value === '') {
        throw new FlagError(
          name,
          `--${name}= has no value: give --${name}=<value> or leave it out`,
        );
      }
      // A later flag replaces an earlier one, so a script's defaults can be overridden after them.
      this.values.set(name, value ?? BARE);
    }
  }

  /** A value flag; a bare `--name` is refused (it would otherwise read as the text "true"). */
  optional(name: string): string | undefined {
    this.used.add(name);
    const value = this.values.get(name);
    if (value === BARE) throw new FlagError(name, `--${name} needs a value: --${name}=<value>`);
    return value;
  }

  string(name: string, fallback: string): string {
    return this.optional(name) ?? fallback;
  }

  /** A switch as written: 'true' when bare, else its value (for callers with their own message). */
  switchText(name: string): string | undefined {
    this.used.add(name);
    const value = this.values.get(name);
    return value === BARE ? 'true' : value;
  }

  /** A switch: `--name` or `--name=true` is on, `--name=false` or leaving it out is off. */
  flag(name: string): boolean {
    const value = this.switchText(name);
    if (value === undefined || value === 'false') return false;
    if (value === 'true') return true;
    throw new FlagError(
      name,
      `--${name} is a switch (--${name} or --${name}=false), got '${shownText(value)}'`,
    );
  }

  /** One of `options` (compared as strings, never looked up in an object). */
  choice<T extends string>(name: string, options: readonly T[], fallback: T): T {
    const value = this.string(name, fallback);
    if (!(options as readonly string[]).includes(value)) {
      throw new FlagError(
        name,
        `--${name} must be one of ${options.join(', ')}, got '${shownText(value)}'`,
      );
    }
    return value as T;
  }

  /** A whole number in `range`, checked as the settings' FieldSpecs check theirs. */
  int(name: string, fallback: number, range: Range): number {
    return this.ranged(name, fallback, { kind: 'int', ...range });
  }

  /** A finite number in `range`. */
  real(name: string, fallback: number, range: Range): number {
    return this.ranged(name, fallback, { kind: 'number', ...range });
  }

  /** Any finite number (scripts whose values their own code checks). */
  number(name: string, fallback: number): number {
    return this.real(name, fallback, { min: -Number.MAX_VALUE, max: Number.MAX_VALUE });
  }

  /** Every flag given, by name, a bare one as 'true' (for spec-generated options). */
  all(): ReadonlyMap<string, string> {
    return new Map([...this.values].map(([k, v]) => [k, v === BARE ? 'true' : v]));
  }

  /** Throws on flags nobody asked for (typos). Call after reading every option. */
  checkAllUsed(): void {
    const unknown = [...this.values.keys()].filter((k) => !this.used.has(k));
    if (unknown.length) {
      throw new FlagError(
        unknown[0]!,
        `unknown option(s): ${shownText(unknown.map((k) => `--${shownText(k)}`).join(', '), 200)}`,
      );
    }
  }

  private ranged(name: string, fallback: number, spec: Omit<NumberField, 'live' | 'doc'>): number {
    const raw = this.optional(name);
    const value = raw === undefined ? fallback : parseDecimal(raw);
    const what = spec.kind === 'int' ? 'an integer' : 'a number';
    if (raw !== undefined && Number.isNaN(value)) {
      throw new FlagError(
        name,
        `--${name} must be ${what} in ${rangeText(spec)} ${DECIMAL_NOTATION}, got '${shownText(raw)}'`,
      );
    }
    try {
      checkField(name, name, { ...spec, live: false, doc: '' }, value);
    } catch {
      const got = raw === undefined ? String(fallback) : `'${shownText(raw)}'`;
      throw new FlagError(name, `--${name} must be ${what} in ${rangeText(spec)}, got ${got}`);
    }
    return value;
  }
}
