/**
 * Lookups of names that come from outside the code — metric names in an imported file, setting
 * names in a link or a live change — in plain records. `record[name]` would find
 * Object.prototype's members for names such as 'toString' or 'constructor' (a function where a
 * series or a field spec was expected); these read only what the record itself holds.
 */

/** The value `record` holds under `key` itself; undefined for an inherited member. */
export function own<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}
