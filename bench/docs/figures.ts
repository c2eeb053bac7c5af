/**
 * Figures of the docs read from bench/results instead of typed by hand. A template writes a
 * figure as a placeholder naming the result file and the row it comes from, e.g.
 *
 *   {{ms|2026-12-04T18-24-02|node-dawn|token-logprobs|ours|N=4096,V=32768}}
 *
 * and renderFigures() replaces it with the number as the file holds it, formatted one way for
 * every figure of its kind. A result file that changes changes the figure; a placeholder that
 * names no file, suite, row or field is an error naming the placeholder, never a blank.
 *
 * Fields, separated by `|`: the kind, a part of the result file's name that only one file has,
 * the environment (node-dawn, chromium, chromium-ui), the suite (or suites, comma-separated, for
 * the ranges), the implementation by the start of its name (`a/b` for the two of a ratio), and
 * the shape as `K=v,…` (empty: every shape). Kinds:
 *
 * - `ms`, `gpums`: the row's median ms, its GPU ms;
 * - `x`: ms(a) ÷ ms(b) on the shape, as `16×`; `pct`: a's GB/s ÷ b's GB/s, as `90%`;
 * - `tbs`: the row's bytes over its GPU ms, in TB/s;
 * - `msrange`, `xrange`: the smallest and largest of `ms` or `x` over every matching row;
 * - `frame`: a field of a UI row's frame statistics (`p95`, `longTasks.count`, `details.x`), in
 *   place of the shape; `share`: the percentage of its frame intervals over 16.75 ms;
 * - `load`: the host's 1-minute load average when the run ended (no further fields).
 *
 * A page written by hand keeps its figures in place instead: see refreshFigures().
 */
import type { EnvResult, Measurement } from '../core/types';

/** A bench result file as saved by bench/run.ts (the fields the figures read). */
export interface BenchRecord {
  host: { loadAverageAtEnd: number[] };
  environments: EnvResult[];
}

/** Result files by name (without `.json`). */
export type Records = Readonly<Record<string, BenchRecord>>;

const PLACEHOLDER = /\{\{([a-z]+(?:\|[^|{}]*)*)\}\}/g;

/** An error in a template's placeholder, naming it. */
export class FigureError extends Error {
  override readonly name = 'FigureError';
}

/** Milliseconds as the docs print them: three significant digits, thousands separated. */
export function formatMs(ms: number): string {
  if (ms >= 100) return Math.round(ms).toLocaleString('en');
  return ms >= 10 ? ms.toFixed(1) : ms >= 1 ? ms.toFixed(2) : ms.toFixed(3);
}

/** A ratio: two decimals below 10, whole numbers above. */
export function formatRatio(ratio: number): string {
  return `${ratioNumber(ratio)}×`;
}

function ratioNumber(ratio: number): string {
  return ratio >= 10 ? Math.round(ratio).toLocaleString('en') : ratio.toFixed(2);
}

function fileOf(records: Records, part: string, where: string): BenchRecord {
  const names = Object.keys(records).filter((name) => name.includes(part));
  if (names.length !== 1) {
    throw new FigureError(
      `${where}: '${part}' names ${names.length} result files${names.length ? ` (${names.join(', ')})` : ''}; it must name one`,
    );
  }
  return records[names[0]!]!;
}

function parseShape(text: string, where: string): Record<string, number> {
  const shape: Record<string, number> = {};
  for (const pair of text.split(',').filter(Boolean)) {
    const [key, value] = pair.split('=');
    if (!key || value === undefined || !Number.isFinite(Number(value))) {
      throw new FigureError(`${where}: shape '${text}' is not K=v,…`);
    }
    shape[key] = Number(value);
  }
  return shape;
}

const fits = (m: Measurement, shape: Record<string, number>) =>
  Object.entries(shape).every(([k, v]) => m.shape[k] === v);

/** The timed rows of `impl` (by the start of its name) in the suites and environment named. */
function rows(
  record: BenchRecord,
  env: string,
  suites: string,
  impl: string,
  shape: Record<string, number>,
  where: string,
): Measurement[] {
  const environment = record.environments.find((e) => e.env.name === env);
  if (!environment) throw new FigureError(`${where}: no environment '${env}'`);
  const found: Measurement[] = [];
  for (const name of suites.split(',')) {
    const suite = environment.suites.find((s) => s.suite === name);
    if (!suite) throw new FigureError(`${where}: no suite '${name}' in ${env}`);
    found.push(
      ...suite.measurements.filter(
        (m) => m.impl.trim().startsWith(impl) && fits(m, shape) && m.status === 'ok',
      ),
    );
  }
  if (found.length === 0) throw new FigureError(`${where}: no timed row of '${impl}'`);
  return found;
}

function one(found: Measurement[], where: string): Measurement {
  if (found.length !== 1) {
    throw new FigureError(`${where}: ${found.length} rows match; name the shape of one`);
  }
  return found[0]!;
}

function field(m: Measurement, path: string, where: string): number {
  let value: unknown = m.frames;
  for (const key of path.split('.')) value = (value as Record<string, unknown> | undefined)?.[key];
  if (typeof value !== 'number') throw new FigureError(`${where}: no number at '${path}'`);
  return value;
}

const msOf = (m: Measurement) => m.ms!;

/** Ratios a ÷ b of ms, over the shapes both ran. */
function ratios(
  record: BenchRecord,
  env: string,
  suites: string,
  impls: string,
  shape: Record<string, number>,
  where: string,
): number[] {
  const [a, b] = impls.split('/');
  if (!a || !b) throw new FigureError(`${where}: a ratio names two implementations, 'a/b'`);
  const bs = rows(record, env, suites, b, shape, where);
  return rows(record, env, suites, a, shape, where).map((m) => {
    const base = bs.find((n) => fits(n, m.shape));
    if (!base) throw new FigureError(`${where}: '${b}' did not run the shapes of '${a}'`);
    return msOf(m) / msOf(base);
  });
}

const range = (values: number[], format: (v: number) => string) => {
  const [low, high] = [Math.min(...values), Math.max(...values)];
  return format(low) === format(high) ? format(low) : `${format(low)}–${format(high)}`;
};

/** The text of one placeholder's figure. */
export function figure(records: Records, spec: string): string {
  const where = `{{${spec}}}`;
  const [kind, file = '', env = '', suites = '', impl = '', last = ''] = spec.split('|');
  const record = fileOf(records, file, where);
  if (kind === 'load') return record.host.loadAverageAtEnd[0]!.toFixed(1);
  const shape = () => parseShape(last, where);
  switch (kind) {
    case 'ms':
      return formatMs(msOf(one(rows(record, env, suites, impl, shape(), where), where)));
    case 'gpums': {
      const m = one(rows(record, env, suites, impl, shape(), where), where);
      if (m.gpuMs === undefined) throw new FigureError(`${where}: the row has no GPU ms`);
      return formatMs(m.gpuMs);
    }
    case 'tbs': {
      const m = one(rows(record, env, suites, impl, shape(), where), where);
      if (m.gpuMs === undefined) throw new FigureError(`${where}: the row has no GPU ms`);
      return (m.bytes / m.gpuMs / 1e9).toFixed(1);
    }
    case 'x':
      return formatRatio(single(ratios(record, env, suites, impl, shape(), where), where));
    case 'pct': {
      // GB/s of a over GB/s of b: bytes counted as each row counts them (a copy moves twice).
      const [a, b] = impl.split('/');
      const ma = one(rows(record, env, suites, a ?? '', shape(), where), where);
      const mb = one(rows(record, env, suites, b ?? '', shape(), where), where);
      return `${Math.round((ma.bytes / msOf(ma) / (mb.bytes / msOf(mb))) * 100)}%`;
    }
    case 'msrange':
      return range(rows(record, env, suites, impl, shape(), where).map(msOf), formatMs);
    case 'xrange':
      return `${range(ratios(record, env, suites, impl, shape(), where), ratioNumber)}×`;
    case 'frame': {
      // Counts as they are; times and other fractions as every other figure of ms.
      const value = field(one(rows(record, env, suites, impl, {}, where), where), last, where);
      return Number.isInteger(value) ? value.toLocaleString('en') : formatMs(value);
    }
    case 'share': {
      const samples = one(rows(record, env, suites, impl, {}, where), where).samples ?? [];
      if (samples.length === 0) throw new FigureError(`${where}: the row kept no samples`);
      return `${Math.round((samples.filter((s) => s > 16.75).length / samples.length) * 100)}%`;
    }
    default:
      throw new FigureError(`${where}: unknown kind '${kind}'`);
  }
}

function single(values: number[], where: string): number {
  if (values.length !== 1) {
    throw new FigureError(`${where}: ${values.length} shapes match; name one`);
  }
  return values[0]!;
}

/** `template` with every placeholder replaced by its figure. */
export function renderFigures(template: string, records: Records): string {
  return template.replace(PLACEHOLDER, (_, spec: string) => figure(records, spec));
}

/**
 * A figure kept in place in a page that is not rendered from a template: the placeholder's spec
 * in a comment before the figure, `<!--fig:ms|…-->19.9<!--/fig-->`, so the page reads as written.
 */
const IN_PLACE = /<!--fig:([^>]*?)-->([^<]*)<!--\/fig-->/g;

/** `text` with every figure kept in place set to what its spec reads now. */
export function refreshFigures(text: string, records: Records): string {
  return text.replace(
    IN_PLACE,
    (_, spec: string) => `<!--fig:${spec}-->${figure(records, spec)}<!--/fig-->`,
  );
}

/** The result files the figures of `text` read (placeholders and in place), by name part. */
export function filesRead(text: string): string[] {
  const specs = [...text.matchAll(PLACEHOLDER), ...text.matchAll(IN_PLACE)].map((m) => m[1]!);
  return [...new Set(specs.map((spec) => spec.split('|')[1]!))];
}
