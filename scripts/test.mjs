// `npm test`: every test layer and every hygiene check, then one summary.
// Layers: cpu (Vitest, Node) · gpu-node (Vitest, Dawn on SwiftShader) · browser (Vitest browser
// mode in Chromium) · e2e (Playwright against the built app). A failing step does not stop the
// others; the exit code is non-zero if any failed.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { ensureChromium } from './chromium.mjs';
import { nodeSupport } from './node-version.mjs';

const OUT = 'test-output';

/** @typedef {{ passed: number, failed: number, skipped: number, note?: string }} Counts */
/** @typedef {Counts & { layer: string, seconds: string, adapter?: string }} LayerRow */

/**
 * Runs a command, streaming its output, and returns its exit code and captured stdout.
 * @param {string} command
 * @param {string[]} args
 * @returns {Promise<{ code: number, stdout: string }>}
 */
function run(command, args) {
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    let stdout = '';
    child.stdout.on('data', (/** @type {Buffer} */ chunk) => {
      stdout += chunk.toString();
      process.stdout.write(chunk);
    });
    child.on('close', (code) => resolve({ code: code ?? 1, stdout }));
  });
}

/** @param {string} file @returns {Counts} */
function vitestCounts(file) {
  const report = JSON.parse(readFileSync(file, 'utf8'));
  return {
    passed: report.numPassedTests,
    failed: report.numFailedTests + (report.numFailedTestSuites ?? 0),
    skipped: report.numPendingTests + report.numTodoTests,
  };
}

/** @param {string} file @returns {Counts} */
function playwrightCounts(file) {
  const { stats } = JSON.parse(readFileSync(file, 'utf8'));
  return { passed: stats.expected, failed: stats.unexpected + stats.flaky, skipped: stats.skipped };
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

/** @param {string} project @returns {Promise<LayerRow>} */
async function vitestLayer(project) {
  console.log(`\n=== ${project} ===`);
  const report = `${OUT}/vitest-${project}.json`;
  const start = performance.now();
  const { stdout } = await run('npx', [
    'vitest',
    'run',
    '--project',
    project,
    '--reporter=default',
    '--reporter=json',
    `--outputFile.json=${report}`,
  ]);
  const adapter = stdout.match(/\[gpu\] running on (.+)/)?.[1];
  return {
    layer: project,
    ...readCounts(vitestCounts, report),
    seconds: secondsSince(start),
    adapter,
  };
}

/** @returns {Promise<LayerRow>} */
async function e2eLayer() {
  console.log('\n=== e2e ===');
  const start = performance.now();
  const { stdout } = await run('npx', ['playwright', 'test']);
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

  /** @type {LayerRow[]} */
  const rows = [];
  for (const project of ['cpu', 'gpu-node', 'browser']) rows.push(await vitestLayer(project));
  rows.push(await e2eLayer());

  /** @type {{ name: string, ok: boolean }[]} */
  const hygiene = [];
  for (const [name, args] of HYGIENE) {
    console.log(`\n=== ${name} ===`);
    hygiene.push({ name, ok: (await run('npx', args)).code === 0 });
  }

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
