// Reads the JSON reports of Vitest and Playwright into counts and the names of what failed, so
// that `npm test` can end its log with them (a log cut to its tail still says what failed).
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';

/**
 * @typedef {{ passed: number, failed: number, skipped: number, note?: string,
 *   failures?: string[], flaky?: string[] }} Counts
 */

/** @param {string} file @returns {Counts} */
export function vitestCounts(file) {
  const report = JSON.parse(readFileSync(file, 'utf8'));
  /** @type {string[]} */
  const failures = [];
  for (const suite of report.testResults ?? []) {
    const where = relative(process.cwd(), suite.name);
    if (suite.status === 'failed' && suite.assertionResults.length === 0)
      failures.push(`${where}: ${firstLine(suite.message)}`);
    for (const test of suite.assertionResults)
      if (test.status === 'failed')
        failures.push(`${where} > ${test.fullName}: ${firstLine(test.failureMessages?.[0])}`);
  }
  return {
    passed: report.numPassedTests,
    failed: report.numFailedTests + (report.numFailedTestSuites ?? 0),
    skipped: report.numPendingTests + report.numTodoTests,
    failures,
  };
}

/** The first non-empty line of an error text, without terminal colours, cut to 300 characters. */
/** @param {string | undefined} text */
export function firstLine(text) {
  // eslint-disable-next-line no-control-regex
  const plain = (text ?? '').replace(/\u001b\[[0-9;]*m/g, '');
  const line = plain.split('\n').find((l) => l.trim() !== '') ?? '(no message)';
  return line.trim().slice(0, 300);
}

/** @param {string} file @returns {Counts} */
export function playwrightCounts(file) {
  const report = JSON.parse(readFileSync(file, 'utf8'));
  /** @type {string[]} */
  const failures = [];
  /** @type {string[]} */
  const flaky = [];
  /** @param {any} suite */
  const walk = (suite) => {
    for (const child of suite.suites ?? []) walk(child);
    for (const spec of suite.specs ?? [])
      for (const test of spec.tests) {
        const errors = test.results.flatMap((/** @type {any} */ r) => r.errors ?? []);
        const line = `${spec.file} > ${spec.title}: ${firstLine(errors[0]?.message)}`;
        if (test.status === 'unexpected') failures.push(line);
        if (test.status === 'flaky') flaky.push(line);
      }
  };
  for (const suite of report.suites ?? []) walk(suite);
  for (const error of report.errors ?? []) failures.push(`e2e: ${firstLine(error.message)}`);
  const { stats } = report;
  // A test that failed once and passed on its retry is named below and counted as passed: the
  // retry absorbs a loaded CI machine's timing, the name keeps the flake visible.
  return {
    passed: stats.expected + stats.flaky,
    failed: stats.unexpected,
    skipped: stats.skipped,
    failures,
    flaky,
  };
}
