// `npm test`: every test layer and every hygiene check, then one summary.
// Layers: cpu (Vitest, Node) · gpu-node (Vitest, Dawn on SwiftShader) · browser (Vitest browser
// mode in Chromium) · e2e (Playwright against the built app). A failing step does not stop the
// others; the exit code is non-zero if any failed.
//
// The cpu layer keeps both cores busy (one Vitest worker per core), so it runs alone. What
// follows is mostly one core each — gpu-node and browser run their files one after another, e2e
// has one Playwright worker, the hygiene checks are single-threaded — so after the cpu layer two
// lanes run side by side: gpu-node then browser, and e2e; then each lane takes hygiene checks from
// one queue until none is left. Held output (e2e's, the checks') prints as each step ends.
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { playwrightCounts, vitestCounts } from './test-reports.mjs';
import { ensureChromium } from './chromium.mjs';
import { nodeSupport } from './node-version.mjs';

const OUT = 'test-output';

/** @typedef {import('./test-reports.mjs').Counts} Counts */
/** @typedef {Counts & { layer: string, seconds: string, adapter?: string }} LayerRow */

/**
 * Runs a command and returns its exit code and captured stdout. `stream` true: its output goes
 * to the terminal as it comes; false: stdout and stderr are held and printed, under `title`, when
 * it ends (so that two lanes' output never interleaves).
 * @param {string} command
 * @param {string[]} args
 * @param {{ stream: boolean, title: string }} how
 * @returns {Promise<{ code: number, stdout: string }>}
 */
function run(command, args, { stream, title }) {
  if (stream) console.log(`\n=== ${title} ===`);
  else
    console.log(`\n=== ${title}: running beside the other lane; its output follows when done ===`);
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let held = '';
    const take = (/** @type {NodeJS.WriteStream} */ sink) => (/** @type {Buffer} */ chunk) => {
      if (stream) sink.write(chunk);
      else held += chunk.toString();
    };
    child.stdout.on('data', (/** @type {Buffer} */ chunk) => {
      stdout += chunk.toString();
      take(process.stdout)(chunk);
    });
    child.stderr.on('data', take(process.stderr));
    child.on('close', (code) => {
      if (!stream) process.stdout.write(`\n=== ${title} (output) ===\n${held}`);
      resolve({ code: code ?? 1, stdout });
    });
  });
}

/** A missing or unreadable report counts as a failure, never as zero tests passed. */
/** @param {(file: string) => Counts} read @param {string} file @returns {Counts} */
function readCounts(read, file) {
  try {
    return read(file);
  } catch {
    return { passed: 0, failed: 1, skipped: 0, note: `no report at ${file}` };
  }
}

/** @param {number} start */
const secondsSince = (start) => ((performance.now() - start) / 1000).toFixed(1);

/**
 * One layer: the Vitest projects named `project` or `project-…` (the cpu layer is two projects
 * that share its workers; see vite.config.ts), one report.
 * @param {string} project @param {boolean} stream @returns {Promise<LayerRow>}
 */
async function vitestLayer(project, stream) {
  const report = `${OUT}/vitest-${project}.json`;
  const start = performance.now();
  const { stdout } = await run(
    'npx',
    [
      'vitest',
      'run',
      '--project',
      project,
      '--project',
      `${project}-*`,
      '--reporter=default',
      '--reporter=json',
      `--outputFile.json=${report}`,
    ],
    { stream, title: project },
  );
  const adapter = stdout.match(/\[gpu\] running on (.+)/)?.[1];
  return {
    layer: project,
    ...readCounts(vitestCounts, report),
    seconds: secondsSince(start),
    adapter,
  };
}

/** @param {boolean} stream @returns {Promise<LayerRow>} */
async function e2eLayer(stream) {
  const start = performance.now();
  const { stdout } = await run('npx', ['playwright', 'test'], { stream, title: 'e2e' });
  const adapter = stdout.match(/\[e2e\] backend line: (.+)/)?.[1];
  const counts = readCounts(playwrightCounts, `${OUT}/e2e-results.json`);
  return { layer: 'e2e', ...counts, seconds: secondsSince(start), adapter };
}

/** @type {[string, string[]][]} */
const HYGIENE = [
  ['prettier', ['prettier', '--check', '.']],
  ['eslint', ['eslint', '.']],
  ['svelte-check', ['svelte-check', '--fail-on-warnings', '--tsconfig', './tsconfig.json']],
  ['tsc', ['tsc', '--noEmit', '-p', '.']],
];

async function main() {
  // First, so an unsupported Node fails with what to install, not with a dependency's stack trace.
  const node = nodeSupport(process.version);
  if (node.level === 'error') {
    console.error(`\n${node.message}\n`);
    process.exit(1);
  }
  console.log(node.level === 'warn' ? `\nwarning: ${node.message}\n` : node.message);
  mkdirSync(OUT, { recursive: true });
  const started = performance.now();
  try {
    ensureChromium();
  } catch (error) {
    console.error(`\n${error instanceof Error ? error.message : error}\n`);
    process.exit(1);
  }

  const cpu = await vitestLayer('cpu', true);
  // The hygiene checks are one queue that both lanes take from once their test layers are done,
  // so that neither lane idles while the other still has checks to run.
  const queue = [...HYGIENE];
  /** @type {Map<string, boolean>} */
  const checked = new Map();
  const takeChecks = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const [name, args] = next;
      checked.set(name, (await run('npx', args, { stream: false, title: name })).code === 0);
    }
  };
  const gpuLane = async () => {
    const rows = [await vitestLayer('gpu-node', true), await vitestLayer('browser', true)];
    await takeChecks();
    return rows;
  };
  const e2eLane = async () => {
    const e2e = await e2eLayer(false);
    await takeChecks();
    return e2e;
  };
  const [gpuRows, e2e] = await Promise.all([gpuLane(), e2eLane()]);
  const hygiene = HYGIENE.map(([name]) => ({ name, ok: checked.get(name) === true }));
  /** @type {LayerRow[]} */
  const rows = [cpu, ...gpuRows, e2e];

  console.log(`\nTest summary (${secondsSince(started)} s in all)`);
  for (const row of rows) {
    const skipped = row.skipped ? `, ${row.skipped} skipped` : '';
    const counts = `${row.passed} passed, ${row.failed} failed${skipped}`;
    const where = row.adapter ? `  on ${row.adapter}` : '';
    const note = row.note ? `  (${row.note})` : '';
    console.log(
      `  ${row.layer.padEnd(9)} ${counts.padEnd(26)} ${row.seconds.padStart(6)} s${where}${note}`,
    );
  }
  const checks = hygiene.map((h) => `${h.name} ${h.ok ? 'clean' : 'FAILED'}`).join(' · ');
  console.log(`  hygiene   ${checks}`);
  // Named last, so that a log cut to its tail still says what failed and why.
  for (const row of rows) {
    for (const line of row.failures ?? []) console.log(`  FAILED ${row.layer}: ${line}`);
    for (const line of row.flaky ?? [])
      console.log(`  flaky (passed on retry) ${row.layer}: ${line}`);
  }

  const total = (/** @type {'passed' | 'failed' | 'skipped'} */ key) =>
    rows.reduce((n, row) => n + row[key], 0);
  const failed = total('failed') + hygiene.filter((h) => !h.ok).length;
  const skipped = total('skipped');
  console.log(
    `${total('passed')} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`,
  );
  process.exit(failed > 0 ? 1 : 0);
}

await main();
