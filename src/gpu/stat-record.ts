/**
 * A kernel's statistics read back by name. A kernel that writes several numbers into one buffer
 * declares where each goes as `const <PREFIX>NAME = k;` constants in its WGSL and writes through
 * them; the TypeScript side reads the same constants (wgsl-reflect.ts reflectSlots) and gets a typed
 * record, so the order lives in the shader alone and a reordering there cannot silently swap two
 * figures here.
 */
import { reflectSlots } from './wgsl-reflect';

export interface StatLayout<K extends string> {
  /** Slot of each statistic in the buffer. */
  readonly slots: Readonly<Record<K, number>>;
  /** Floats the statistics take (the buffer may be longer: padding). */
  readonly length: number;
  /** The statistics of `values` (a read-back buffer) by name. */
  read(values: ArrayLike<number>): Record<K, number>;
}

/**
 * The layout of `source`'s `<prefix>*` slots; `names` are the statistics TypeScript expects (the
 * slot names in camelCase), and the shader must declare exactly these.
 */
export function statLayout<K extends string>(
  source: string,
  prefix: string,
  names: readonly K[],
): StatLayout<K> {
  const found = reflectSlots(source, prefix);
  const missing = names.filter((name) => !found.has(name));
  const extra = [...found.keys()].filter((name) => !(names as readonly string[]).includes(name));
  if (missing.length || extra.length) {
    throw new Error(
      `WGSL slots ${prefix}*: missing [${missing.join(', ')}], unexpected [${extra.join(', ')}]`,
    );
  }
  const slots = Object.fromEntries(names.map((name) => [name, found.get(name)!])) as Record<
    K,
    number
  >;
  return {
    slots,
    length: names.length,
    read(values) {
      if (values.length < names.length) {
        throw new Error(`statistics: ${names.length} values expected, got ${values.length}`);
      }
      return Object.fromEntries(names.map((name) => [name, values[slots[name]]!])) as Record<
        K,
        number
      >;
    },
  };
}
