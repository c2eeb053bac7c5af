import { describe, expect, it } from 'vitest';
import { chartModel } from '../../../src/state/compare-view/chart-model';
import { chartRun, tokensAxis } from './helpers';

describe('chartModel', () => {
  // A plot 100 px wide: series of up to 200 points are drawn whole.
  const size = { width: 100 };
  /** The main (smoothed or mean) lines as [x, y] pairs, y rounded to 3 decimals. */
  const mainLines = (model: ReturnType<typeof chartModel>) =>
    model.spec.lines
      .filter((l) => l.main)
      .map((l) => l.x.map((x, i) => [x, Number(l.y[i]!.toFixed(3))]));
  const twoRuns = () => [
    chartRun(1, {
      series: { 'reward/mean': { x: [1, 2, 3, 4], y: [0, 10, 20, 30] } },
      events: [{ step: 3, kind: 'hyperparams', changes: { epsilon: 0.3 } }],
    }),
    chartRun(2, { color: '#D55E00', series: { 'reward/mean': { x: [1, 2], y: [5, 15] } } }),
  ];

  it('draws each run on shared scales (hand-worked pixels)', () => {
    const model = chartModel({
      metric: 'reward/mean',
      axis: 'update',
      entries: twoRuns().map((run) => ({ runs: [run] })),
      smoothing: { kind: 'none' },
      ignoreOutliers: false,
      ...size,
    });
    expect(mainLines(model)).toEqual([
      [
        [1, 0],
        [2, 10],
        [3, 20],
        [4, 30],
      ],
      [
        [1, 5],
        [2, 15],
      ],
    ]);
    // Not smoothed: no faint copy underneath.
    expect(model.spec.lines.filter((l) => !l.main)).toEqual([]);
    expect(model.lines.map((l) => [l.id, l.points, l.color])).toEqual([
      ['run-1', 4, '#000000'],
      ['run-2', 2, '#D55E00'],
    ]);
    // The epsilon change at update 3.
    expect(model.spec.markers).toEqual([
      { x: 3, runId: 'run-1', color: '#000000', title: 'run #1: epsilon → 0.3 at update 3' },
    ]);
    // One x range for both runs, from 0 to the last update; y spans 0–30 on a linear scale.
    expect(model.spec.x).toEqual({ min: 0, max: 4 });
    expect(model.spec.y).toEqual({ kind: 'linear', min: 0, max: 30 });
    expect([model.spec.xTitle, model.spec.yTitle]).toEqual(['update', 'reward/mean']);
    expect(model.summary).toBe(
      'reward/mean over updates (not smoothed): ' +
        'run #1 rises from 0 to 30; raw values from 0 to 30, 4 points. ' +
        'run #2 rises from 5 to 15; raw values from 5 to 15, 2 points.',
    );
  });

  it('smooths causally and keeps the raw curve as a faint path', () => {
    // Debiased EMA, weight 0.5, of 0, 10, 20, 30:
    //   m1 = 0 → 0 / 0.5 = 0; m2 = 5 → 5 / 0.75 = 6.667; m3 = 12.5 → 12.5 / 0.875 = 14.286;
    //   m4 = 21.25 → 21.25 / 0.9375 = 22.667.
    const model = chartModel({
      metric: 'reward/mean',
      axis: 'update',
      entries: [{ runs: [twoRuns()[0]!] }],
      smoothing: { kind: 'ema', weight: 0.5 },
      ignoreOutliers: false,
      ...size,
    });
    expect(mainLines(model)).toEqual([
      [
        [1, 0],
        [2, 6.667],
        [3, 14.286],
        [4, 22.667],
      ],
    ]);
    const raw = model.spec.lines.filter((l) => !l.main);
    expect(raw.map((l) => [l.y, l.alpha < 1])).toEqual([[[0, 10, 20, 30], true]]);
    expect(model.summary).toMatch(
      /^reward\/mean over updates \(debiased EMA, weight 0.5\): run #1 rises from 0 to 22.67;/,
    );
  });

  it('draws seed groups as mean and band over the updates all runs have', () => {
    const [a, b] = twoRuns();
    const model = chartModel({
      metric: 'reward/mean',
      axis: 'update',
      entries: [
        {
          runs: [a!, { ...b!, series: { 'reward/mean': { x: [1, 2], y: [10, 20] } } }],
          unit: 'seed',
        },
      ],
      smoothing: { kind: 'none' },
      ignoreOutliers: false,
      ...size,
    });
    const line = model.lines[0]!;
    // Updates 1–2 are common: means (0 + 10) / 2 = 5 and (10 + 20) / 2 = 15.
    expect(line.caption).toBe(
      'mean ± 1 std over 2 seeds; drawn up to update 2, where the shortest run ends',
    );
    expect(line.runIds).toEqual(['run-1', 'run-2']);
    expect(line.points).toBe(6);
    expect(line.label).toBe('runs #1, #2: q-learning on cliffwalking, seeds 1, 2');
    // Mean and band only (the members' raw curves would hide the band): at updates 1 and 2,
    // mean ∓ std, std = |a − b| / √2 = 5 / √2 · √2 = 7.071 (n − 1 sample std of two values).
    expect(model.spec.lines.map((l) => l.main)).toEqual([true]);
    const band = model.spec.bands[0]!;
    expect(band.x).toEqual([1, 2]);
    expect(band.lo.map((v) => Number(v.toFixed(3)))).toEqual([-2.071, 7.929]);
    expect(band.hi.map((v) => Number(v.toFixed(3)))).toEqual([12.071, 22.071]);
    expect(model.summary).toContain(
      'runs #1 and #2 (mean ± 1 std over 2 seeds; drawn up to update 2, where the shortest run ends) rises from 5 to 15',
    );
    // The x range ends where the band does.
    expect(model.spec.x).toEqual({ min: 0, max: 2 });
    expect(mainLines(model)).toEqual([
      [
        [1, 5],
        [2, 15],
      ],
    ]);
  });

  it('draws the runs of a group one by one when they share no x range', () => {
    const [a, b] = twoRuns();
    const model = chartModel({
      metric: 'reward/mean',
      axis: 'update',
      entries: [{ runs: [a!, { ...b!, series: { 'reward/mean': { x: [7, 8], y: [1, 2] } } }] }],
      smoothing: { kind: 'none' },
      ignoreOutliers: false,
      ...size,
    });
    expect(model.lines.map((l) => [l.id, l.caption])).toEqual([
      ['run-1', undefined],
      ['run-2', undefined],
    ]);
    expect(model.spec.bands).toEqual([]);
  });

  it('leaves out a run whose axis is unavailable, with the reason, and notes partial axes', () => {
    const model = chartModel({
      metric: 'reward/mean',
      axis: 'tokens',
      entries: [
        {
          runs: [
            chartRun(1, {
              series: { 'reward/mean': { x: [1, 2, 3], y: [1, 2, 3] } },
              axis: tokensAxis([8, 16, NaN], 'unknown from update 3 on'),
            }),
          ],
        },
        {
          runs: [
            chartRun(2, {
              series: { 'reward/mean': { x: [1], y: [1] } },
              axis: { ok: false, axis: 'tokens', reason: 'q-learning samples no tokens' },
            }),
          ],
        },
        { runs: [chartRun(3, { series: { other: { x: [1], y: [1] } } })] },
      ],
      smoothing: { kind: 'none' },
      ignoreOutliers: false,
      ...size,
    });
    expect(model.lines.map((l) => [l.id, l.points])).toEqual([['run-1', 2]]);
    expect(model.excluded).toEqual([
      { label: '#2 q-learning on cliffwalking, seed 2', reason: 'q-learning samples no tokens' },
    ]);
    expect(model.notes).toEqual(['run #1: unknown from update 3 on']);
    expect(model.summary).toContain(
      'Not on this axis: run #2 (q-learning samples no tokens). run #3 did not log reward/mean.',
    );
  });

  it('thins a 100k-point series to the pixel width and still shows its spike', () => {
    const n = 100_000;
    const y = Array.from({ length: n }, (_, i) => Math.sin(i / 500));
    y[77_777] = 50;
    const model = chartModel({
      metric: 'reward/mean',
      axis: 'update',
      entries: [
        {
          runs: [chartRun(1, { series: { 'reward/mean': { x: y.map((_, i) => i + 1), y } } })],
        },
      ],
      smoothing: { kind: 'ema', weight: 0.9 },
      ignoreOutliers: false,
      width: 600,
    });
    const raw = model.spec.lines.find((l) => !l.main)!;
    expect(raw.x.length).toBeLessThanOrEqual(2 * 600 + 2);
    // The spike at update 77 778 survives thinning and sets the top of the y range.
    expect(raw.y[raw.x.indexOf(77_778)]).toBe(50);
    expect(model.spec.y).toEqual({ kind: 'linear', min: -10, max: 50 });
    expect(model.summary).toContain('raw values from -1 to 50, 100000 points');
  });
});

describe("chartModel with metrics named after Object.prototype's members", () => {
  it('draws the run that logged it and lists the others as silent (an imported run)', () => {
    for (const metric of ['toString', 'constructor', 'hasOwnProperty', 'valueOf']) {
      const model = chartModel({
        metric,
        axis: 'update',
        entries: [
          { runs: [chartRun(1, { series: { [metric]: { x: [1, 2], y: [3, 4] } } })] },
          { runs: [chartRun(2)] },
        ],
        smoothing: { kind: 'none' },
        ignoreOutliers: false,
        width: 100,
      });
      expect(model.lines.map((l) => l.id)).toEqual(['run-1']);
      expect(model.summary).toContain(`run #2 did not log ${metric}.`);
    }
  });
});
