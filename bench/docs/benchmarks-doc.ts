/**
 * docs/benchmarks.md, rendered from its template (bench/docs/benchmarks.template.md) with every
 * measured figure read from bench/results (bench/docs/figures.ts), so that a figure cannot drift
 * from the run it came from; and the figures kept in place in other pages (FIGURE_PAGES), set
 * from the same files. `npm run docs:bench` rewrites them; `-- --check` only says whether they
 * are current, and tests/bench/benchmarks-doc.test.ts fails when they are not.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { format, resolveConfig } from 'prettier';
import {
  filesRead,
  refreshFigures,
  renderFigures,
  type BenchRecord,
  type Records,
} from './figures';

const root = new URL('../../', import.meta.url);
export const TEMPLATE = new URL('bench/docs/benchmarks.template.md', root);
export const PAGE = new URL('docs/benchmarks.md', root);
const RESULTS = new URL('bench/results/', root);
/** Pages written by hand whose measured figures are kept in place (`<!--fig:…-->`). */
export const FIGURE_PAGES = [new URL('docs/cli.md', root)];

const HEADER =
  '<!-- Rendered by `npm run docs:bench` from bench/docs/benchmarks.template.md and the result ' +
  'files in bench/results: edit the template, not this page. -->\n\n';

/** The result files `template` reads, parsed, by name without `.json`. */
export function readRecords(template: string, dir: URL = RESULTS): Records {
  const names = readdirSync(dir).filter((name) => name.endsWith('.json'));
  const records: Record<string, BenchRecord> = {};
  for (const part of filesRead(template)) {
    for (const name of names.filter((n) => n.includes(part))) {
      records[name.slice(0, -'.json'.length)] = JSON.parse(
        readFileSync(new URL(name, dir), 'utf8'),
      ) as BenchRecord;
    }
  }
  return records;
}

/** The page as `npm run docs:bench` writes it (formatted as prettier formats the repository). */
export async function renderBenchmarksDoc(): Promise<string> {
  const template = readFileSync(TEMPLATE, 'utf8');
  const text = HEADER + renderFigures(template, readRecords(template));
  const options = await resolveConfig(PAGE);
  return format(text, { ...options, filepath: PAGE.pathname });
}

/** A hand-written page with its in-place figures set from the committed results. */
export function refreshPage(page: URL): string {
  const text = readFileSync(page, 'utf8');
  return refreshFigures(text, readRecords(text));
}

export async function main(args: string[]): Promise<number> {
  const pages: [URL, string][] = [
    [PAGE, await renderBenchmarksDoc()],
    ...FIGURE_PAGES.map((page): [URL, string] => [page, refreshPage(page)]),
  ];
  let stale = 0;
  for (const [page, text] of pages) {
    const name = page.pathname.slice(root.pathname.length);
    const current = readFileSync(page, 'utf8') === text;
    if (!current) stale++;
    if (!current && !args.includes('--check')) writeFileSync(page, text);
    console.log(
      `${name}: ${current ? 'current' : args.includes('--check') ? 'stale' : 'rewritten'}`,
    );
  }
  return args.includes('--check') && stale > 0 ? 1 : 0;
}
