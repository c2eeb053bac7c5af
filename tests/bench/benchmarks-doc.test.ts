/**
 * docs/benchmarks.md is rendered from its template with every figure read from bench/results
 * (bench/docs/): the committed page must be what the committed results render, so a figure that
 * drifts from its run fails here; and the figures of a small hand-written result, against values
 * worked out by hand.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  FIGURE_PAGES,
  PAGE,
  refreshPage,
  renderBenchmarksDoc,
  TEMPLATE,
} from '../../bench/docs/benchmarks-doc';
import {
  figure,
  FigureError,
  filesRead,
  refreshFigures,
  renderFigures,
  type BenchRecord,
  type Records,
} from '../../bench/docs/figures';
import type { Measurement } from '../../bench/core/types';

describe('docs/benchmarks.md', () => {
  it('is what the template renders from the committed results', async () => {
    expect(
      readFileSync(PAGE, 'utf8'),
      'docs/benchmarks.md is not what bench/results renders: run npm run docs:bench',
    ).toBe(await renderBenchmarksDoc());
  });

  it.each(FIGURE_PAGES.map((page) => [page.pathname.split('/').slice(-2).join('/'), page]))(
    '%s keeps in place the figures its results read now',
    (_name, page) => {
      const text = readFileSync(page, 'utf8');
      expect(filesRead(text).length).toBeGreaterThan(0);
      expect(text, 'a figure is stale: run npm run docs:bench').toBe(refreshPage(page));
    },
  );

  it('takes its figures from result files, each named by one placeholder part', () => {
    const template = readFileSync(TEMPLATE, 'utf8');
    expect(filesRead(template).length).toBeGreaterThan(5);
    // A decimal figure typed by hand next to a unit reads as a measurement: outside placeholders
    // there are only the definitions (the frame target, the vsync grid's jitter, the threshold
    // of the share of late intervals).
    const prose = template.replace(/\{\{[^}]*\}\}/g, '');
    expect(prose.match(/\b\d+\.\d+\s?(ms|s|×|%|TB\/s)/g)).toEqual([
      '16.7 ms',
      '0.2 ms',
      '16.75 ms',
    ]);
  });
});

const row = (impl: string, shape: Record<string, number>, ms: number, more = {}): Measurement => ({
  impl,
  shape,
  status: 'ok',
  ms,
  bytes: 1000,
  ...more,
});

const RECORDS: Records = {
  '2026-01-01T00-00-00-000Z-node-dawn': {
    host: { loadAverageAtEnd: [1.25, 1, 1] },
    environments: [
      {
        env: { name: 'node-dawn', software: true, runtime: 'node', notes: [] },
        seconds: 1,
        suites: [
          {
            suite: 'op',
            title: 'op',
            notes: [],
            baseline: 'ours',
            measurements: [
              row('ours (kernel)', { N: 1 }, 0.5, { gpuMs: 0.25 }),
              row('copy (ceiling)', { N: 1 }, 0.8, { bytes: 2000 }),
              row('peer', { N: 1 }, 8),
              row('ours (kernel)', { N: 2 }, 2),
              row('peer', { N: 2 }, 30),
              { ...row('peer', { N: 3 }, 1), status: 'failed' },
            ],
          },
        ],
      },
      {
        env: { name: 'chromium-ui', software: true, runtime: 'chromium', notes: [] },
        seconds: 1,
        suites: [
          {
            suite: 'ui',
            title: 'ui',
            notes: [],
            baseline: 'idle',
            measurements: [
              row('  · idle', {}, 16.7, {
                samples: [16.7, 16.8, 16.7, 33.3],
                frames: { p95: 33.3, droppedFrames: 1234, details: { cores: 1.366 } },
              }),
            ],
          },
        ],
      },
    ],
  } as unknown as BenchRecord,
};

const at = (spec: string) => figure(RECORDS, spec);

describe('figure', () => {
  it.each([
    ['ms|2026-01-01|node-dawn|op|ours|N=1', '0.500'],
    ['ms|2026-01-01|node-dawn|op|peer|N=2', '30.0'],
    ['gpums|2026-01-01|node-dawn|op|ours|N=1', '0.250'],
    // 1000 bytes in 0.25 ms: 4e6 B/s = 4e-6 TB/s.
    ['tbs|2026-01-01|node-dawn|op|ours|N=1', '0.0'],
    ['x|2026-01-01|node-dawn|op|peer/ours|N=1', '16×'],
    ['x|2026-01-01|node-dawn|op|ours/peer|N=1', '0.06×'],
    // ours 1000 B / 0.5 ms against the copy's 2000 B / 0.8 ms: 2 / 2.5.
    ['pct|2026-01-01|node-dawn|op|ours/copy|N=1', '80%'],
    // The failed N=3 row of the peer is no figure.
    ['msrange|2026-01-01|node-dawn|op|peer|', '8.00–30.0'],
    ['xrange|2026-01-01|node-dawn|op|peer/ours|', '15–16×'],
    ['frame|2026-01-01|chromium-ui|ui|· idle|p95', '33.3'],
    ['frame|2026-01-01|chromium-ui|ui|· idle|droppedFrames', '1,234'],
    ['frame|2026-01-01|chromium-ui|ui|· idle|details.cores', '1.37'],
    ['share|2026-01-01|chromium-ui|ui|· idle', '50%'],
    ['load|2026-01-01', '1.3'],
  ])('%s → %s', (spec, text) => {
    expect(at(spec)).toBe(text);
  });

  it('replaces each placeholder of a text and leaves the rest', () => {
    expect(renderFigures('a {{ms|2026-01-01|node-dawn|op|peer|N=1}} ms b', RECORDS)).toBe(
      'a 8.00 ms b',
    );
  });

  it('sets a figure kept in place to what its spec reads, keeping the spec', () => {
    const spec = 'ms|2026-01-01|node-dawn|op|peer|N=1';
    expect(refreshFigures(`took <!--fig:${spec}-->7.5<!--/fig--> ms`, RECORDS)).toBe(
      `took <!--fig:${spec}-->8.00<!--/fig--> ms`,
    );
    // Placeholders first, then figures in place.
    expect(filesRead(`<!--fig:${spec}-->1<!--/fig--> {{load|2026-02}}`)).toEqual([
      '2026-02',
      '2026-01-01',
    ]);
  });

  it.each([
    ['ms|2027|node-dawn|op|ours|N=1', "'2027' names 0 result files"],
    ['ms|2026-01-01|chromium|op|ours|N=1', "no environment 'chromium'"],
    ['ms|2026-01-01|node-dawn|nope|ours|N=1', "no suite 'nope' in node-dawn"],
    ['ms|2026-01-01|node-dawn|op|ours|', '2 rows match; name the shape of one'],
    ['ms|2026-01-01|node-dawn|op|peer|N=3', "no timed row of 'peer'"],
    ['ms|2026-01-01|node-dawn|op|ours|N', "shape 'N' is not K=v,…"],
    ['x|2026-01-01|node-dawn|op|ours|N=1', "a ratio names two implementations, 'a/b'"],
    ['frame|2026-01-01|chromium-ui|ui|· idle|p99', "no number at 'p99'"],
    ['mean|2026-01-01|node-dawn|op|ours|N=1', "unknown kind 'mean'"],
  ])('refuses {{%s}}: %s', (spec, says) => {
    expect(() => at(spec)).toThrow(FigureError);
    expect(() => at(spec)).toThrow(`{{${spec}}}: ${says}`);
  });
});
