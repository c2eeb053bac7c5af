/**
 * Reading an environment snapshot (EnvSnapshot) back: each getter checks one field and throws an
 * EnvError that names it (`snapshot.state[2]`) with its valid range. A snapshot may come from an
 * imported file, so nothing in it is trusted. The environments read every field before they change
 * any, so a refused snapshot leaves them as they were.
 */
import { EnvError, type EnvSnapshot, type JsonValue } from './types';

export class SnapshotReader {
  constructor(
    private readonly snapshot: EnvSnapshot,
    /** For the errors: the env's id and its step in the current episode. */
    private readonly env: string,
    private readonly step: number,
    private readonly prefix = 'snapshot',
  ) {
    if (typeof snapshot !== 'object' || snapshot === null || Array.isArray(snapshot)) {
      this.fail(prefix, 'an object', snapshot);
    }
  }

  /** An integer in [low, high]. */
  int(field: string, low: number, high: number): number {
    const value = this.snapshot[field];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < low || value > high) {
      this.fail(this.path(field), `an integer in [${low}, ${high}]`, value);
    }
    return value as number;
  }

  /** A finite number. */
  number(field: string): number {
    const value = this.snapshot[field];
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      this.fail(this.path(field), 'a finite number', value);
    }
    return value as number;
  }

  boolean(field: string): boolean {
    const value = this.snapshot[field];
    if (typeof value !== 'boolean') this.fail(this.path(field), 'true or false', value);
    return value as boolean;
  }

  /** A list of finite numbers, `length` of them or at most `maxLength`. */
  numbers(field: string, size: { length?: number; maxLength?: number }): number[] {
    const value = this.snapshot[field];
    const want =
      size.length !== undefined
        ? `a list of ${size.length} finite numbers`
        : `a list of at most ${size.maxLength} finite numbers`;
    if (!Array.isArray(value)) this.fail(this.path(field), want, value);
    const list = value as JsonValue[];
    const fits =
      size.length !== undefined
        ? list.length === size.length
        : list.length <= (size.maxLength ?? Infinity);
    if (!fits) this.fail(this.path(field), want, value, `${list.length} values`);
    list.forEach((item, i) => {
      if (typeof item !== 'number' || !Number.isFinite(item)) {
        this.fail(`${this.path(field)}[${i}]`, 'a finite number', item);
      }
    });
    return list as number[];
  }

  /** A nested snapshot (an object), for a wrapped environment. */
  record(field: string): EnvSnapshot {
    const value = this.snapshot[field];
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      this.fail(this.path(field), 'an object', value);
    }
    return value as EnvSnapshot;
  }

  /** A list of nested snapshots, exactly `length` of them. */
  records(field: string, length: number): EnvSnapshot[] {
    const value = this.snapshot[field];
    if (!Array.isArray(value) || value.length !== length) {
      const shown = Array.isArray(value) ? `${value.length} entries` : undefined;
      this.fail(this.path(field), `a list of ${length} objects`, value, shown);
    }
    return (value as JsonValue[]).map((item, i) => {
      if (typeof item !== 'object' || item === null || Array.isArray(item)) {
        this.fail(`${this.path(field)}[${i}]`, 'an object', item);
      }
      return item as EnvSnapshot;
    });
  }

  private path(field: string): string {
    return `${this.prefix}.${field}`;
  }

  private fail(path: string, want: string, got: unknown, shown?: string): never {
    const text = shown ?? JSON.stringify(got) ?? String(got);
    throw new EnvError(this.env, this.step, `${path} must be ${want}, got ${text}`);
  }
}
