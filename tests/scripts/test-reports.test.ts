import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { firstLine, playwrightCounts, vitestCounts } from '../../scripts/test-reports.mjs';

const dir = mkdtempSync(join(tmpdir(), 'test-reports-'));
function report(name: string, body: unknown): string {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(body));
  return file;
}

describe('test reports', () => {
  it('names each failed Vitest test with its file and first error line', () => {
    const file = report('vitest.json', {
      numPassedTests: 3,
      numFailedTests: 1,
      numFailedTestSuites: 1,
      numPendingTests: 1,
      numTodoTests: 0,
      testResults: [
        {
          name: join(process.cwd(), 'tests/a.test.ts'),
          status: 'failed',
          message: '',
          assertionResults: [
            { fullName: 'a works', status: 'passed', failureMessages: [] },
            {
              fullName: 'a fails',
              status: 'failed',
              failureMessages: ['\u001b[31m\nAssertionError: expected 1 to be 2\n    at x.ts:1'],
            },
          ],
        },
        {
          name: join(process.cwd(), 'tests/b.test.ts'),
          status: 'failed',
          message: 'Error: cannot import b\nstack',
          assertionResults: [],
        },
      ],
    });
    const counts = vitestCounts(file);
    expect(counts).toMatchObject({ passed: 3, failed: 2, skipped: 1 });
    expect(counts.failures).toEqual([
      'tests/a.test.ts > a fails: AssertionError: expected 1 to be 2',
      'tests/b.test.ts: Error: cannot import b',
    ]);
  });

  it('counts a Playwright test that passed on its retry as passed, and names it as flaky', () => {
    const spec = (title: string, status: string, message?: string) => ({
      title,
      file: 'x.spec.ts',
      tests: [{ status, results: [{ errors: message ? [{ message }] : [] }] }],
    });
    const file = report('e2e.json', {
      stats: { expected: 1, unexpected: 1, flaky: 1, skipped: 0 },
      errors: [],
      suites: [
        {
          specs: [spec('steady', 'expected')],
          suites: [
            {
              specs: [
                spec('shaky', 'flaky', 'Timeout 30000ms exceeded'),
                spec('broken', 'unexpected', 'Error: expect(locator).toHaveText'),
              ],
            },
          ],
        },
      ],
    });
    const counts = playwrightCounts(file);
    expect(counts).toMatchObject({ passed: 2, failed: 1, skipped: 0 });
    expect(counts.failures).toEqual(['x.spec.ts > broken: Error: expect(locator).toHaveText']);
    expect(counts.flaky).toEqual(['x.spec.ts > shaky: Timeout 30000ms exceeded']);
  });

  it('keeps the first non-empty line, without colours, cut to 300 characters', () => {
    expect(firstLine(undefined)).toBe('(no message)');
    expect(firstLine('\n\n  \u001b[2mhello\u001b[22m  \nworld')).toBe('hello');
    expect(firstLine('x'.repeat(400))).toHaveLength(300);
  });
});
