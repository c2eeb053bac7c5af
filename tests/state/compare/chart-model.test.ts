import { describe, expect, it } from 'vitest';
import { chartModel } from '../../../src/state/compare/chart-model';
import { chartRun, tokensAxis } from './helpers';

describe('chartModel', () => {
  // 164 × 138 px: the plot is x 52…152 and y 10…110 (margins 52, 12, 10, 28), 100 px each way.
  const size = { width: 164, height: 138 };
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
    // x: [0, 4] → 52 + 25·x. y: [0, 30] → 110 − 100·y/30.
    // Run 1: (1, 0) → 77, 110; (2, 10) → 102, 76.7; (3, 20) → 127, 43.3; (4, 30) → 152, 10.
    // Run 2: (1, 5) → 77, 93.3; (2, 15) → 102, 60.
    expect(model.lines.map((l) => l.smooth)).toEqual([
      'M77.0 110.0L102.0 76.7L127.0 43.3L152.0 10.0',
      'M77.0 93.3L102.0 60.0',
    ]);
    // Not smoothed: no faint copy underneath.
    expect(model.lines.map((l) => l.raw)).toEqual([[], []]);
    expect(model.lines.map((l) => [l.id, l.points, l.color])).toEqual([
      ['run-1', 4, '#000000'],
      ['run-2', 2, '#D55E00'],
    ]);
    // The epsilon change at update 3 → x 127.
    expect(model.markers).toEqual([
      { x: 127, runId: 'run-1', color: '#000000', title: 'run #1: epsilon → 0.3 at update 3' },
    ]);
    // y ticks: step 20 for a span of 30 in 2 ticks → 0 at 110, 20 at 43.3; x: 0, 2, 4.
    expect(model.yTicks.map((t) => [t.label, Number(t.at.toFixed(1))])).toEqual([
      ['0', 110],
      ['20', 43.3],
    ]);
    expect(model.xTicks.map((t) => [t.label, t.at])).toEqual([
      ['0', 52],
      ['2', 102],
      ['4', 152],
    ]);
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
    // y: [0, 30] → 110 − 100·y/30: 6.667 → 87.8; 14.286 → 62.4; 22.667 → 34.4.
    expect(model.lines[0]!.smooth).toBe('M77.0 110.0L102.0 87.8L127.0 62.4L152.0 34.4');
    expect(model.lines[0]!.raw).toEqual(['M77.0 110.0L102.0 76.7L127.0 43.3L152.0 10.0']);
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
    // Mean and band only (the members' raw curves would hide the band); the band is closed:
    // 2 points along the top, 2 back along the bottom.
    expect(line.raw).toEqual([]);
    expect(line.band!.match(/[ML]/g)).toHaveLength(4);
    expect(line.band!.endsWith('Z')).toBe(true);
    expect(model.summary).toContain(
      'runs #1 and #2 (mean ± 1 std over 2 seeds; drawn up to update 2, where the shortest run ends) rises from 5 to 15',
    );
    // The x range ends where the band does: x [0, 2] → 52 + 50·x, so the mean spans 102…152.
    expect(line.smooth).toMatch(/^M102\.0 [\d.]+L152\.0 [\d.]+$/);
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
    expect(model.lines.map((l) => [l.id, l.band, l.caption])).toEqual([
      ['run-1', undefined, undefined],
      ['run-2', undefined, undefined],
    ]);
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
      width: 664, // a 600 px plot: x 52…652
      height: 238,
    });
    const raw = model.lines[0]!.raw[0]!;
    expect(raw.split(/[ML]/).length - 1).toBeLessThanOrEqual(2 * 600 + 2);
    // The spike, update 77 778 of [0, 100 000], is at x 52 + 600 · 0.77778 = 518.7, and it is
    // the top of the y range: the plot's top edge, y 10.
    expect(raw).toContain('L518.7 10.0');
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
        width: 164,
        height: 138,
      });
      expect(model.lines.map((l) => l.id)).toEqual(['run-1']);
      expect(model.summary).toContain(`run #2 did not log ${metric}.`);
    }
  });
});
