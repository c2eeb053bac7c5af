/**
 * The shape of an export table (one per algorithm: our field → TRL argument / verl key / why
 * there is none) and the small builders the tables are written with. The tables live in
 * framework-export-{grpo,ppo,dpo,rewards}.ts; framework-export.ts runs them.
 */
import type { FieldSpec } from '../util/hyperparams';
import type { Settings } from './run-record';

export type SettingValue = Settings[string];
/** A Python / Hydra value. */
export type Value = number | boolean | string | null;

export interface Line {
  name: string;
  value: Value;
  /** Print as a float (1.0, not 1): the field is a real number. */
  float?: boolean;
  /**
   * verl: a key the trainer config does not declare, added with Hydra's '+' (the DAPO reward
   * manager's reward.reward_kwargs).
   */
  added?: boolean;
  /** The value is already Python source (TRL's reward_weights list). */
  raw?: boolean;
}

/** What one field becomes in one framework: lines to set, or why there is no equivalent. */
export type Emitted = { set: Line[]; note?: string } | { none: string };

export interface Mapping {
  /** The framework names this field maps to, as documentation (and for the spec cross-check). */
  names: readonly string[];
  emit(value: SettingValue, config: Settings, field: FieldSpec): Emitted;
}

export interface FieldRow {
  trl: Mapping;
  verl: Mapping;
}

/** TRL's config classes the exports use, with the module that exports each at the pinned release. */
export const TRL_CLASSES = {
  GRPOConfig: 'trl',
  RLOOConfig: 'trl',
  DPOConfig: 'trl',
  // Moved out of the top-level package in TRL v0.29.
  PPOConfig: 'trl.experimental.ppo',
} as const;
export type TrlClass = keyof typeof TRL_CLASSES;

/** Which TRL trainer a config maps to, or why it has none. */
export type TrlTarget = { cls: TrlClass } | { unavailable: string };

export interface FrameworkTable {
  /** The TRL config class for this config (GRPO's estimator picks GRPOConfig or RLOOConfig). */
  trl(config: Settings): TrlTarget;
  /** verl's trainer for this algorithm, or why there is none. */
  verl: { critic: boolean } | { unavailable: string };
  /** Lines every verl export of this algorithm starts with, e.g. algorithm.adv_estimator=gae. */
  verlFixed: readonly Line[];
  /** Notes that hold for every config of the algorithm. */
  trlNotes: readonly string[];
  verlNotes: readonly string[];
  rows: Readonly<Record<string, FieldRow>>;
}

// ——— Builders ———

/** The same value under `name`. */
export const to = (name: string, note?: string): Mapping => ({
  names: [name],
  emit: (value, _config, field) => ({
    set: [{ name, value, float: field.kind === 'number' }],
    ...(note ? { note } : {}),
  }),
});

/** The same value under several names (verl's actor and critic). */
export const toAll = (...names: string[]): Mapping => ({
  names,
  emit: (value, _config, field) => ({
    set: names.map((name) => ({ name, value, float: field.kind === 'number' })),
  }),
});

/** A translated value; `translate` returns { none } for values without an equivalent. */
export const mapped = (
  name: string,
  translate: (value: SettingValue, config: Settings) => Value | { none: string },
  note?: (value: SettingValue, config: Settings) => string | undefined,
): Mapping => ({
  names: [name],
  emit: (value, config, field) => {
    const out = translate(value, config);
    if (out !== null && typeof out === 'object') return out;
    const text = note?.(value, config);
    return {
      set: [{ name, value: out, float: field.kind === 'number' && typeof out === 'number' }],
      ...(text ? { note: text } : {}),
    };
  },
});

/** A fixed lookup of choice values. */
export const choice = (
  name: string,
  table: Record<string, Value>,
  why: string,
  note?: (value: SettingValue) => string | undefined,
): Mapping =>
  mapped(
    name,
    (value) => (Object.hasOwn(table, String(value)) ? table[String(value)]! : { none: why }),
    note,
  );

/** No equivalent in this framework, with the reason (which may depend on the value). */
export const none = (
  why: string | ((value: SettingValue, config: Settings) => string),
): Mapping => ({
  names: [],
  emit: (value, config) => ({ none: typeof why === 'string' ? why : why(value, config) }),
});

/** Full control: any lines from the value and the whole config. */
export const custom = (
  names: readonly string[],
  emit: (value: SettingValue, config: Settings) => Emitted,
): Mapping => ({ names, emit: (value, config) => emit(value, config) });

/** Nothing to write (a setting read only together with another row, which speaks for it). */
export const silent = (): Mapping => ({ names: [], emit: () => ({ set: [] }) });

export const num = (v: SettingValue | undefined) => Number(v);

/** No equivalent, said only while the setting is on (above 0): off is what the frameworks do. */
export const noneWhenOn = (why: string): Mapping => ({
  names: [],
  emit: (value) => (num(value) > 0 ? { none: why } : { set: [] }),
});
