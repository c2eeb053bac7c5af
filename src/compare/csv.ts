/**
 * Metrics as CSV (RFC 4180): a header `update,<metric>,…`, then one row per update — the update
 * number (1-based) and each metric's value. Fields holding a comma, a double quote, CR or LF are
 * quoted with inner quotes doubled; lines end in CRLF. A missing value (NaN) is an empty field;
 * ±Infinity is written `Infinity` / `-Infinity`; other numbers in JavaScript's shortest
 * round-trip form, so reading the file back gives the same doubles.
 *
 * Metric names come from the trainers or from a validated import (run-file.ts refuses names that
 * start with '=', '+', '-' or '@'), so a spreadsheet does not read a header cell as a formula.
 */

/** One CSV field, quoted when RFC 4180 requires it. */
export function csvField(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** A number as a CSV field: '' for NaN. */
export function csvNumber(value: number): string {
  return Number.isNaN(value) ? '' : String(value);
}

/**
 * `metrics` (name → one value per update, index i = update i + 1) as CSV. `names` picks and orders
 * the columns (default: every metric, in the object's order); a name the run lacks is an empty
 * column. Rows run to the longest series.
 */
export function metricsToCsv(
  metrics: Readonly<Record<string, readonly number[]>>,
  names: readonly string[] = Object.keys(metrics),
): string {
  const columns = names.map((name) => (Object.hasOwn(metrics, name) ? metrics[name]! : []));
  let rows = 0;
  for (const values of columns) rows = Math.max(rows, values.length);
  const lines = [['update', ...names].map(csvField).join(',')];
  for (let i = 0; i < rows; i++) {
    lines.push([String(i + 1), ...columns.map((values) => csvNumber(values[i] ?? NaN))].join(','));
  }
  return lines.join('\r\n') + '\r\n';
}
