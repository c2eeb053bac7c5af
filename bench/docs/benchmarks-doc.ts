/**
 * docs/benchmarks.md, rendered from its template (bench/docs/benchmarks.template.md) with every
 * measured figure read from bench/results (bench/docs/figures.ts), so that a figure cannot drift
 * from the run it came from. `npm run docs:bench` rewrites the page; `-- --check` only says
 * whether it is current, and tests/bench/benchmarks-doc.test.ts fails when it is not.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { format, resolveConfig } from 'prettier';
import { filesRead, renderFigures, type BenchRecord, type Records } from './figures';

const root = new URL('../../', import.meta.url);
export const TEMPLATE = new URL('bench/docs/benchmarks.template.md', root);
export const PAGE = new URL('docs/benchmarks.md', root);
const RESULTS = new URL('bench/results/', root);

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

export async function main(args: string[]): Promise<number> {
  const page = await renderBenchmarksDoc();
  const current = readFileSync(PAGE, 'utf8') === page;
  if (args.includes('--check')) {
    console.log(current ? 'docs/benchmarks.md is current' : 'docs/benchmarks.md is stale');
    return current ? 0 : 1;
  }
  if (!current) writeFileSync(PAGE, page);
  console.log(current ? 'docs/benchmarks.md was current' : 'docs/benchmarks.md rewritten');
  return 0;
}
