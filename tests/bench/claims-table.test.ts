/**
 * The README's tables of lesson claims (bench/learn/claims-table.ts): rendered from the committed
 * lessons results, they must equal what README.md holds between its markers; and the renderer on
 * a small hand-written set of result files, against Markdown written out by hand.
 */
import { readFileSync } from 'node:fs';
import { format } from 'prettier';
import { describe, expect, it } from 'vitest';
import {
  claimWidgets,
  lessonResults,
  readmeBlock,
  renderClaimsTable,
  renderClaimsTables,
  replaceReadmeBlock,
  resultTime,
  tableBlock,
  TABLES,
  type ClaimWidget,
} from '../../bench/learn/claims-table';
import { parseCheck, type MetricCheck } from '../../src/lessons/checks';

const REGENERATE = 'npm run bench:learn -- --readme && npx prettier --write README.md';

describe('README claims tables', () => {
  it('equal the rendering of the newest committed result of each widget', () => {
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const tables = renderClaimsTables();
    for (const name of TABLES) {
      const block = readmeBlock(readme, name);
      expect(block, `README.md lacks the markers of the claims table '${name}'`).toBeDefined();
      expect(
        block,
        `README.md's claims table '${name}' is not what bench/results renders: run ${REGENERATE}`,
      ).toBe(tableBlock(tables[name]));
    }
  });

  it('hold each widget once, the learning claims as effects only', () => {
    const widgets = claimWidgets();
    const all = [...widgets.learning, ...widgets['failure-modes']];
    expect(new Set(all.map((w) => `${w.preset} ${w.check.text}`)).size).toBe(all.length);
    for (const w of widgets.learning) expect(w.check.gain, w.preset).toBe(true);
    // Two lessons open ppo-copy with the same check: one row naming both.
    expect(widgets.learning.find((w) => w.preset === 'ppo-copy')?.lessons).toEqual([
      '03-ppo/03-ppo-on-tokens',
      '04-grpo/06-ppo-vs-grpo',
    ]);
  });
});

const check = (text: string) => parseCheck(text) as MetricCheck;

const run = (seed: number, passedAt: number | null, value: number, cpuSeconds?: number) => ({
  seed,
  passedAt,
  updates: passedAt ?? 30,
  value,
  start: 0.3,
  end: 0.3 + value,
  seconds: 10,
  ...(cpuSeconds === undefined ? {} : { cpuSeconds }),
  setupSeconds: 0.1,
});

const START = { passAt1: 0.2333984375, passAtG: 0.74609375, groupSize: 8 };

const row = (preset: string, checkText: string, fields: object) => ({
  lesson: 'x',
  preset,
  check: checkText,
  budget: 30,
  control: 'lr 1e-9',
  start: null,
  backendLine: 'CPU',
  ...fields,
});

const lessons = (backend: string, rows: object[], quick = false) => ({
  machine: {},
  quick,
  results: { lessons: { backend, rows, table: '' } },
});

/** Five result files; which of them each row may come from is the point of the fixture. */
const FILES = {
  // The oldest run of grpo-copy-rm: a newer one below replaces it.
  'learn-2026-12-04T10-00-00-000Z.json': lessons('cpu', [
    row('grpo-copy-rm', 'reward/strict_accuracy gain<=-0.3', {
      runs: [run(1, 20, -0.5, 1)],
      controls: [run(1, null, 0, 1)],
    }),
  ]),
  // Merged by hand (no milliseconds in the name), before the bench recorded CPU time.
  'learn-lessons-2026-12-05T11-20-00Z.json': lessons('cpu', [
    row('grpo-copy', 'reward/accuracy gain>=0.3', {
      start: START,
      runs: [run(1, 18, 0.31), run(2, 20, 0.33)],
      controls: [run(1, null, -0.02), run(2, null, 0.04)],
    }),
    // The dynamic-sampling widget's check has changed since: this row is no longer its claim.
    row('grpo-copy-dynamic', 'batch/frac_reward_zero_std<=0.1', {
      runs: [run(1, 10, 0)],
      controls: [run(1, null, 0.5)],
    }),
  ]),
  'learn-2026-12-05T17-29-39-948Z.json': lessons('cpu', [
    row('grpo-copy-rm', 'reward/strict_accuracy gain<=-0.3', {
      runs: [run(1, 15, -0.4, 6), run(2, 16, -0.35, 7), run(3, null, -0.2, 9)],
      controls: [run(1, null, 0.02), run(2, null, -0.04), run(3, null, 0.01)],
      also: {
        control: 'klCoef 0',
        controls: [run(1, 14, -0.5), run(2, null, -0.1), run(3, null, -0.2)],
      },
    }),
  ]),
  // Newer, but on a WebGPU adapter, and a --quick run: neither is a CPU claim at the budget.
  'learn-2026-12-05T18-02-11-034Z.json': lessons('webgpu', [
    row('grpo-copy', 'reward/accuracy gain>=0.3', {
      runs: [run(1, 25, 0.3, 100)],
      controls: [run(1, null, 0, 100)],
    }),
  ]),
  'learn-2026-12-05T19-00-00-000Z.json': lessons(
    'cpu',
    [
      row('grpo-copy', 'reward/accuracy gain>=0.3', {
        runs: [run(1, null, 0.1, 1)],
        controls: [run(1, null, 0, 1)],
      }),
    ],
    true,
  ),
  // Another bench's results and a series file: no lessons rows.
  'learn-2026-12-05T11-23-57-283Z.json': { machine: {}, quick: false, results: { defaults: {} } },
  'learn-lessons-2026-12-05T16-10-00Z-failure-mode-series.json': { what: 'series', runs: [] },
};

const WIDGETS: ClaimWidget[] = [
  {
    lessons: ['04-grpo/01-group-relative-advantages', '04-grpo/06-ppo-vs-grpo'],
    preset: 'grpo-copy',
    check: check('reward/accuracy gain>=0.3'),
  },
  {
    lessons: ['05-reward-engineering/02-learned-reward-models'],
    preset: 'grpo-copy-rm',
    check: check('reward/strict_accuracy gain<=-0.3'),
  },
  {
    lessons: ['04-grpo/05-dynamic-sampling-and-clip-higher'],
    preset: 'grpo-copy-dynamic',
    check: check('batch/frac_reward_zero_std<=0.05'),
  },
];

// Written out by hand: grpo-copy from the hand-merged file (no CPU times recorded: "—"), the
// control's largest gain (a `>=` check); grpo-copy-rm from the newest CPU file, 2 of 3 seeds
// passing at 15 and 16, its two controls' smallest values (a `<=` check), the second passing
// once; grpo-copy-dynamic's current check never run.
const EXPECTED = `\
| lesson widget             | check                                        | start pass@1 / pass@G | passed | updates to check (median, range) | CPU s to check (median) | control           | control passed | control Δ (mean ± sd, max or min)                  | result file                        |
| ------------------------- | -------------------------------------------- | --------------------- | ------ | -------------------------------- | ----------------------- | ----------------- | -------------- | -------------------------------------------------- | ---------------------------------- |
| 04/01, 04/06 \`grpo-copy\`  | \`reward/accuracy gain>=0.3\`                  | 0.23 / 0.75 (G 8)     | 2/2    | 19 (18–20)                       | —                       | lr 1e-9           | 0/2            | 0.01 ± 0.04 (max 0.04)                             | learn-lessons-2026-12-05T11-20-00Z |
| 05/02 \`grpo-copy-rm\`      | \`reward/strict_accuracy gain<=-0.3\`          | —                     | 2/3    | 15.5 (15–16)                     | 6.5                     | lr 1e-9; klCoef 0 | 0/3; 1/3       | -0.00 ± 0.03 (min -0.04); -0.27 ± 0.21 (min -0.50) | learn-2026-12-05T17-29-39-948Z     |
| 04/05 \`grpo-copy-dynamic\` | \`batch/frac_reward_zero_std<=0.05\` (a level) | —                     | —      | —                                | —                       | —                 | —              | —                                                  | no run of this check yet           |`;

describe('renderClaimsTable', () => {
  const files = lessonResults(FILES);

  it('keeps the CPU lessons runs at full budget, newest first', () => {
    expect(files.map((f) => f.name)).toEqual([
      'learn-2026-12-05T17-29-39-948Z',
      'learn-lessons-2026-12-05T11-20-00Z',
      'learn-2026-12-04T10-00-00-000Z',
    ]);
  });

  it("renders each widget from the newest file that ran its preset's check", () => {
    expect(renderClaimsTable(WIDGETS, files)).toBe(EXPECTED);
  });

  it('renders a table prettier leaves as it is', async () => {
    const md = `${tableBlock(EXPECTED).trim()}\n`;
    expect(await format(md, { parser: 'markdown', printWidth: 100 })).toBe(md);
  });

  it('reads the time from both forms of result name', () => {
    expect(resultTime('learn-2026-12-05T17-29-39-948Z')).toBe(
      Date.parse('2026-12-05T17:29:39.948Z'),
    );
    expect(resultTime('learn-lessons-2026-12-05T16-35-00Z-multiply-tools-cpu')).toBe(
      Date.parse('2026-12-05T16:35:00.000Z'),
    );
    expect(resultTime('learn-latest')).toBeUndefined();
    expect(() => lessonResults({ 'learn-latest.json': {} })).toThrow(/no timestamp/);
  });
});

describe('replaceReadmeBlock', () => {
  const text = [
    'before',
    '<!-- claims-table:learning:start -->',
    '',
    '| old |',
    '',
    '<!-- claims-table:learning:end -->',
    'after',
  ].join('\n');

  it('replaces only what stands between the markers', () => {
    const next = replaceReadmeBlock(text, 'learning', '| new |');
    expect(next).toBe(
      [
        'before',
        '<!-- claims-table:learning:start -->',
        '',
        '| new |',
        '',
        '<!-- claims-table:learning:end -->',
        'after',
      ].join('\n'),
    );
    expect(readmeBlock(next, 'learning')).toBe('\n\n| new |\n\n');
  });

  it('refuses a README without the markers, naming them', () => {
    expect(() => replaceReadmeBlock(text, 'failure-modes', '| new |')).toThrow(
      /<!-- claims-table:failure-modes:start -->/,
    );
  });
});
