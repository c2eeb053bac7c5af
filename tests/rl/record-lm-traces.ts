/**
 * Records the language-model trainers' traces (lm-trace.ts) into tests/rl/traces/lm-trainers.json:
 *   node scripts/run-ts.mjs tests/rl/record-lm-traces.ts [case name …]
 * With names, only those cases are recorded again; the others keep their recorded values.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { recordTrace, TRACE_CASES, TRACE_FILE, type Trace } from './lm-trace';

export async function main(args: string[]): Promise<number> {
  const unknown = args.filter((name) => !TRACE_CASES.some((c) => c.name === name));
  if (unknown.length) {
    console.error(`unknown case(s): ${unknown.join(', ')}`);
    return 2;
  }
  const trace: Trace = existsSync(TRACE_FILE)
    ? (JSON.parse(readFileSync(TRACE_FILE, 'utf8')) as Trace)
    : {};
  for (const c of TRACE_CASES) {
    if (args.length && !args.includes(c.name)) continue;
    const started = performance.now();
    trace[c.name] = await recordTrace(c);
    const seconds = (performance.now() - started) / 1000;
    console.log(`${c.name}: ${trace[c.name]!.length} updates, ${seconds.toFixed(1)} s`);
  }
  const ordered = Object.fromEntries(TRACE_CASES.map((c) => [c.name, trace[c.name]]));
  writeFileSync(TRACE_FILE, `${JSON.stringify(ordered, null, 1)}\n`);
  return 0;
}
