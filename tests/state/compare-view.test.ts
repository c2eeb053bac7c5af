import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  axisNotes,
  bandGrid,
  chartMetrics,
  chartModel,
  COLORBLIND_SAFE_PALETTE,
  dashStyle,
  describeSmoothing,
  describeTrend,
  finalTableModel,
  groupLabel,
  minMaxIndices,
  moreMetrics,
  parseWindow,
  pointsOnAxis,
  resample,
  runAxis,
  runRecord,
  shortName,
  preparedSeries,
  Smoother,
  sortedRowOrder,
  thinnedSeries,
  thinningEnd,
  UPDATE_AXIS,
  type ChartRun,
  type RunAxis,
  type RunView,
} from '../../src/state/compare-view';
import { smooth, type Smoothing } from '../../src/compare/smoothing';
import { catalog, defaultsOf } from '../compare/fixtures';

const UPDATE = UPDATE_AXIS;

/** An axis from per-update x values (index u − 1 = update u). */
const tokensAxis = (values: number[], note?: string): RunAxis => ({
  ok: true,
  axis: 'tokens',
  at: (step) => values[step - 1] ?? NaN,
  source: 'test',
  ...(note ? { note } : {}),
  key: `tokens ${values.join(' ')}`,
  stable: true,
});

/** A q-learning run on cliffwalking as the compare view reads it. */
function view(n: number, overrides: Partial<RunView> = {}): RunView & { dash: string } {
  return {
    id: `run-${n}`,
    label: `#${n} q-learning on cliffwalking, seed ${n}`,
    color: '#000000',
    dash: '',
    spec: { algo: 'q-learning', env: 'cliffwalking', seed: n, config: defaultsOf('q-learning') },
    series: {},
    events: [],
    ...overrides,
  };
}

function chartRun(n: number, overrides: Partial<ChartRun> = {}): ChartRun {
  const v = view(n);
  return { ...v, axis: UPDATE, ...overrides };
}

describe('palette and dash styles', () => {
  // WCAG 2 relative luminance and contrast, written out here so the test does not trust the
  // module: L = 0.2126 R + 0.7152 G + 0.0722 B of linearised channels; contrast (1.05)/(L + 0.05).
  const contrastOnWhite = (hex: string) => {
    const channel = (i: number) => {
      const c = parseInt(hex.slice(i, i + 2), 16) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    };
    const l = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
    return 1.05 / (l + 0.05);
  };

  it('every colour has at least 3:1 contrast on white, and no two are equal', () => {
    for (const c of COLORBLIND_SAFE_PALETTE) expect(contrastOnWhite(c)).toBeGreaterThanOrEqual(3);
    expect(new Set(COLORBLIND_SAFE_PALETTE.map((c) => c.toLowerCase())).size).toBe(6);
  });

  it('cycles solid, dashed, dotted, dash-dot by creation order', () => {
    expect([0, 1, 2, 3, 4, 5, 12].map((i) => dashStyle(i).name)).toEqual([
      'solid',
      'dashed',
      'dotted',
      'dash-dot',
      'solid',
      'dashed',
      'solid',
    ]);
    // A bad index (a run id without a number gives −1) falls back to solid.
    expect(dashStyle(-1).dash).toBe('');
    expect(dashStyle(1.5).dash).toBe('');
  });

  it('gives the first 12 runs 12 different colour and dash pairs', () => {
    const pairs = Array.from(
      { length: 12 },
      (_, i) =>
        `${COLORBLIND_SAFE_PALETTE[i % COLORBLIND_SAFE_PALETTE.length]} ${dashStyle(i).dash}`,
    );
    expect(new Set(pairs).size).toBe(12);
  });
});

describe('chartMetrics and moreMetrics', () => {
  const present = new Set([
    'losses/td_error',
    'actor/entropy',
    'charts/episodic_return',
    'reward/mean',
    'charts/epsilon',
  ]);

  it('keeps the key metrics some run logged, in the key order', () => {
    expect(chartMetrics(present)).toEqual([
      'reward/mean',
      'charts/episodic_return',
      'actor/entropy',
    ]);
  });

  it('adds the picked extra metric last, once, and only when logged', () => {
    expect(chartMetrics(present, 'losses/td_error').at(-1)).toBe('losses/td_error');
    expect(chartMetrics(present, 'reward/mean')).toHaveLength(3);
    expect(chartMetrics(present, 'critic/vf_loss')).toHaveLength(3);
  });

  it('offers the metrics without a chart, sorted', () => {
    expect(moreMetrics(present)).toEqual(['charts/epsilon', 'losses/td_error']);
  });
});

describe('minMaxIndices', () => {
  it('keeps every point when there are at most 2 per bucket', () => {
    expect(minMaxIndices([1, 2, 3, 4], [4, 3, 2, 1], 0, 4, 2)).toEqual([0, 1, 2, 3]);
  });

  it('keeps the min and max of each bucket, in order, plus the first and last point', () => {
    // x 0…9 over [0, 10] in 2 buckets: bucket = floor(x / 5) → indices 0–4 and 5–9.
    // Bucket 0: y 0 5 1 1 9 → min at 0 (0), max at 4 (9).
    // Bucket 1: y 1 −3 1 2 0 → min at 6 (−3), max at 8 (2); the last point, 9, is added.
    const xs = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];
    const ys = [0, 5, 1, 1, 9, 1, -3, 1, 2, 0];
    expect(minMaxIndices(xs, ys, 0, 10, 2)).toEqual([0, 4, 6, 8, 9]);
  });

  it('puts a later max before a later min when it comes first', () => {
    // One bucket: max 7 at index 1 comes before min −1 at index 3.
    expect(minMaxIndices([0, 1, 2, 3, 4], [2, 7, 3, -1, 2], 0, 5, 1)).toEqual([0, 1, 3, 4]);
  });

  it('lets a single spike in 100k points survive, with at most 2 points per pixel column', () => {
    const n = 100_000;
    const xs = Array.from({ length: n }, (_, i) => i + 1);
    const ys = new Array<number>(n).fill(0);
    ys[54_321] = 1e6;
    const kept = minMaxIndices(xs, ys, 0, n, 600);
    expect(kept).toContain(54_321);
    expect(kept.length).toBeLessThanOrEqual(2 * 600 + 2);
    expect(kept[0]).toBe(0);
    expect(kept.at(-1)).toBe(n - 1);
  });

  it('property: increasing indices, bounded count, the extremes and both ends kept', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -1e6, max: 1e6, noNaN: true }), { minLength: 1, maxLength: 800 }),
        fc.integer({ min: 1, max: 60 }),
        (ys, buckets) => {
          const xs = ys.map((_, i) => i);
          const kept = minMaxIndices(xs, ys, 0, xs.length, buckets);
          for (let i = 1; i < kept.length; i++) expect(kept[i]!).toBeGreaterThan(kept[i - 1]!);
          expect(kept.length).toBeLessThanOrEqual(Math.min(ys.length, 2 * buckets + 2));
          expect(kept).toContain(ys.indexOf(Math.min(...ys)));
          expect(kept).toContain(ys.indexOf(Math.max(...ys)));
          expect(kept[0]).toBe(0);
          expect(kept.at(-1)).toBe(ys.length - 1);
        },
      ),
    );
  });
});

describe('Smoother and preparedSeries', () => {
  const smoothings: fc.Arbitrary<Smoothing> = fc.oneof(
    fc.constant<Smoothing>({ kind: 'none' }),
    fc
      .double({ min: 0, max: 0.999, noNaN: true })
      .map((weight): Smoothing => ({ kind: 'ema', weight })),
    fc
      .integer({ min: 1, max: 40 })
      .map((window): Smoothing => ({ kind: 'moving-average', window })),
  );
  const values = fc.array(
    fc.oneof(fc.double({ min: -1e6, max: 1e6, noNaN: true }), fc.constant(NaN)),
    { maxLength: 300 },
  );

  it('property: point by point gives exactly what smooth() gives for the whole series', () => {
    fc.assert(
      fc.property(values, smoothings, (ys, smoothing) => {
        const smoother = new Smoother(smoothing);
        expect(ys.map((y) => smoother.push(y))).toEqual(smooth(ys, smoothing));
      }),
    );
  });

  it('refuses a bad setting as smooth() does', () => {
    expect(() => new Smoother({ kind: 'ema', weight: 1 })).toThrow(/weight must be in \[0, 1\)/);
    expect(() => new Smoother({ kind: 'moving-average', window: 0 })).toThrow(/window must be/);
  });

  it('property: a series grown in place is extended to what a fresh computation gives', () => {
    fc.assert(
      fc.property(values, fc.integer({ min: 0, max: 300 }), smoothings, (ys, cut, smoothing) => {
        const series = { x: [] as number[], y: [] as number[] };
        const grow = (to: number) => {
          for (let i = series.x.length; i < to; i++) {
            series.x.push(i + 1);
            series.y.push(ys[i]!);
          }
        };
        grow(Math.min(cut, ys.length));
        preparedSeries(series, UPDATE_AXIS, smoothing);
        grow(ys.length);
        const extended = preparedSeries(series, UPDATE_AXIS, smoothing);
        const finite = ys.flatMap((y, i) => (Number.isFinite(y) ? [[i + 1, y] as const] : []));
        expect(extended.x).toEqual(finite.map(([x]) => x));
        expect(extended.s).toEqual(
          smooth(
            finite.map(([, y]) => y),
            smoothing,
          ),
        );
      }),
    );
  });

  it('recomputes when the lab merged points or the smoothing changed', () => {
    const series = { x: [1, 2, 3, 4], y: [0, 10, 20, 30] };
    const ema = { kind: 'ema', weight: 0.5 } as const;
    expect(preparedSeries(series, UPDATE_AXIS, ema).s).toEqual(smooth([0, 10, 20, 30], ema));
    // Merged in place as halveSeries does: (1, 2) → (2, 5), (3, 4) → (4, 25).
    series.x.splice(0, 4, 2, 4);
    series.y.splice(0, 4, 5, 25);
    expect(preparedSeries(series, UPDATE_AXIS, ema).x).toEqual([2, 4]);
    expect(preparedSeries(series, UPDATE_AXIS, ema).s).toEqual(smooth([5, 25], ema));
    expect(preparedSeries(series, UPDATE_AXIS, { kind: 'none' }).s).toEqual([5, 25]);
  });
});

describe('thinning a growing series', () => {
  it('rounds the grid end up to a quarter octave of the span', () => {
    // Span 64 = 2^6 already is one; span 100: log2 100 = 6.64, × 4 = 26.6 → 27 → 2^6.75 = 107.6.
    expect(thinningEnd(0, 64)).toBe(64);
    expect(thinningEnd(0, 100)).toBeCloseTo(2 ** 6.75, 12);
    expect(thinningEnd(10, 74)).toBe(74);
    expect(thinningEnd(5, 5)).toBe(6);
  });

  it('property: extending the thinning gives what thinning everything at once gives', () => {
    fc.assert(
      fc.property(
        fc.array(fc.double({ min: -1e3, max: 1e3, noNaN: true }), { minLength: 1, maxLength: 600 }),
        fc.array(fc.integer({ min: 0, max: 600 }), { maxLength: 4 }),
        fc.integer({ min: 1, max: 40 }),
        (ys, cuts, buckets) => {
          const end = thinningEnd(0, ys.length);
          const live = { x: [] as number[], y: [] as number[] };
          const smoothing = { kind: 'ema', weight: 0.7 } as const;
          for (const cut of [...cuts.sort((a, b) => a - b), ys.length]) {
            for (let i = live.x.length; i < Math.min(cut, ys.length); i++) {
              live.x.push(i + 1);
              live.y.push(ys[i]!);
            }
            thinnedSeries(preparedSeries(live, UPDATE_AXIS, smoothing), 0, end, buckets);
          }
          const fresh = { x: live.x.slice(), y: live.y.slice() };
          const once = thinnedSeries(
            preparedSeries(fresh, UPDATE_AXIS, smoothing),
            0,
            end,
            buckets,
          );
          const grown = thinnedSeries(
            preparedSeries(live, UPDATE_AXIS, smoothing),
            0,
            end,
            buckets,
          );
          expect(grown).toEqual(once);
          const idx = minMaxIndices(fresh.x, fresh.y, 0, end, buckets);
          expect(once.raw.x).toEqual(idx.map((i) => fresh.x[i]));
        },
      ),
    );
  });
});

describe('resample and bandGrid', () => {
  it('interpolates linearly inside the run and gives NaN outside', () => {
    // Between (1, 10) and (3, 30): x 2 → 20; between (3, 30) and (4, 0): x 3.5 → 15.
    expect(resample([1, 3, 4], [10, 30, 0], [0, 1, 2, 3, 3.5, 4, 5])).toEqual([
      NaN,
      10,
      20,
      30,
      15,
      0,
      NaN,
    ]);
    expect(resample([], [], [1])).toEqual([NaN]);
  });

  it('property: resampling at the run’s own x gives its values back', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: 10_000 }), { minLength: 1, maxLength: 100 }),
        (raw) => {
          const xs = [...raw].sort((a, b) => a - b);
          const ys = xs.map((x) => x * 0.5 - 3);
          expect(resample(xs, ys, xs)).toEqual(ys);
        },
      ),
    );
  });

  it('uses the reference x when few enough, else evenly spaced points', () => {
    expect(bandGrid([1, 2, 3, 4, 5], 2, 4, 10)).toEqual([2, 3, 4]);
    // 3 points inside, room for 2: the two ends of [2, 4].
    expect(bandGrid([1, 2, 3, 4, 5], 2, 4, 2)).toEqual([2, 4]);
    // 5 inside [0, 8], room for 3: 0, 4, 8.
    expect(bandGrid([0, 2, 4, 6, 8], 0, 8, 3)).toEqual([0, 4, 8]);
    // No reference point inside [5, 6] (it has 1 and 10): the two ends.
    expect(bandGrid([1, 10], 5, 6, 10)).toEqual([5, 6]);
    expect(bandGrid([1, 10], 5, 5, 10)).toEqual([5]);
  });
});

describe('runs as records and axes', () => {
  it('adds task options as task.<name> and the warm-up as sftSteps, task from env or task', () => {
    const lm = view(1, {
      spec: {
        algo: 'grpo',
        task: 'reverse',
        seed: 4,
        config: { lr: 0.01 },
        taskOptions: { maxLength: 5 },
        sftSteps: 100,
      },
      series: { 'reward/mean': { x: [1, 3], y: [0.5, 0.7] } },
    });
    const record = runRecord(lm, ['reward/mean', 'not/logged']);
    expect(record).toEqual({
      algorithm: 'grpo',
      task: 'reverse',
      seed: 4,
      config: { lr: 0.01, 'task.maxLength': 5, sftSteps: 100 },
      metrics: { 'reward/mean': [0.5, NaN, 0.7] },
      events: [],
    });
    expect(runRecord(view(2)).task).toBe('cliffwalking');
  });

  it('env steps of Q-learning: running sum of episode lengths; update needs no metric', () => {
    // Episode lengths 5, 3, 4 → environment steps 5, 8, 12.
    const run = view(1, {
      series: {
        'charts/episodic_length': { x: [1, 2, 3], y: [5, 3, 4] },
        'charts/episodic_return': { x: [1, 2, 3], y: [-10, -7, -4] },
      },
    });
    const axis = runAxis(run, 'env_steps');
    expect(axis.ok && [1, 2, 3, 4].map(axis.at)).toEqual([5, 8, 12, NaN]);
    expect(pointsOnAxis(run.series['charts/episodic_return']!, axis)).toEqual({
      x: [5, 8, 12],
      y: [-10, -7, -4],
    });
    const update = runAxis(view(2), 'update');
    expect(update.ok && update.at(7)).toBe(7);
  });

  it('reads a run the lab thinned in blocks, with totals and markers at the right updates', () => {
    // 30 000 episodes; the lab kept updates 2, 4, …, 30 000, each with the mean length of its
    // two episodes (2 and 4 alternate, so every mean is 3). Blocks span 2 updates, so environment
    // steps at kept update u are 3 · u, exactly (6 per block of two episodes).
    const x = Array.from({ length: 15_000 }, (_, i) => 2 * (i + 1));
    const lengths = { x, y: x.map(() => 3) };
    const returns = { x, y: x.map(() => -1) };
    const run = view(1, {
      series: { 'charts/episodic_length': lengths, 'charts/episodic_return': returns },
    });
    const axis = runAxis(run, 'env_steps');
    if (!axis.ok) throw new Error(axis.reason);
    const points = pointsOnAxis(returns, axis);
    expect(points.x.slice(0, 3)).toEqual([6, 12, 18]);
    expect(points.x.at(-1)).toBe(90_000);
    // Update 3 lies between kept updates 2 (x 6) and 4 (x 12): interpolated, 9.
    expect(axis.at(3)).toBe(9);
    expect(axis.at(30_001)).toBeNaN();
    expect(axis.note).toBe(
      'approximate: the lab merged older updates into means to keep at most 10000 points, so totals over them are estimates',
    );
  });

  it('names real updates in the notes of a long run, and is exact when every update is kept', () => {
    // 12 000 updates, all kept (an imported run): no merging, so no "approximate" note; episode
    // length unknown at update 11 000 → the total is unknown from there on.
    const x = Array.from({ length: 12_000 }, (_, i) => i + 1);
    const y = x.map((u) => (u === 11_000 ? NaN : 1));
    const run = view(1, { series: { 'charts/episodic_length': { x, y } } });
    const axis = runAxis(run, 'env_steps');
    if (!axis.ok) throw new Error(axis.reason);
    expect(axis.at(10_999)).toBe(10_999);
    expect(axis.at(11_000)).toBeNaN();
    expect(axis.note).toBe('unknown from update 11000 on: that update has no known episode length');
  });

  it('gives the reason when a long run has no axis', () => {
    const x = Array.from({ length: 10_001 }, (_, i) => i + 1);
    const run = view(1, { series: { 'timing_s/step': { x, y: x.map(() => 0.01) } } });
    expect(runAxis(run, 'tokens')).toEqual({
      ok: false,
      axis: 'tokens',
      reason: 'q-learning is not a language-model algorithm: it samples no tokens',
    });
    // Σ seconds per update: 0.01 · 10 001 at the last update.
    const wall = runAxis(run, 'wall_time');
    expect(wall.ok && wall.at(10_001)).toBeCloseTo(100.01, 9);
  });

  it('pointsOnAxis drops points whose x or y is not finite', () => {
    const axis = tokensAxis([10, NaN, 30, 40]);
    const series = { x: [1, 2, 3, 4], y: [1, 2, NaN, 4] };
    // Update 2 has no x, update 3 no value: left (10, 1) and (40, 4).
    expect(pointsOnAxis(series, axis)).toEqual({ x: [10, 40], y: [1, 4] });
    expect(pointsOnAxis(series, UPDATE)).toEqual({ x: [1, 2, 4], y: [1, 2, 4] });
    expect(pointsOnAxis(series, { ok: false, axis: 'tokens', reason: 'no' })).toEqual({
      x: [],
      y: [],
    });
  });
});

describe('words', () => {
  it.each([
    [0.12, 0.85, 0, 1, 'rises from 0.12 to 0.85'],
    [30, -13, -100, -13 + 100, 'falls from 30 to -13'],
    // |4.97 − 5| = 0.03 ≤ 5 % of the span 1: flat.
    [5, 4.97, 4.5, 5.5, 'stays near 4.97'],
    [2, 2, 2, 2, 'stays near 2'],
  ])('describeTrend(%d, %d, %d, %d)', (first, last, lo, hi, expected) => {
    expect(describeTrend(first, last, lo, hi)).toBe(expected);
  });

  it('names runs and seed groups', () => {
    expect(shortName('#12 grpo on reverse, seed 3')).toBe('run #12');
    expect(shortName('imported run')).toBe('imported run');
    expect(
      groupLabel([
        { label: '#1 q-learning on cliffwalking, seed 1' },
        { label: '#4 q-learning on cliffwalking, seed 7' },
      ]),
    ).toBe('runs #1, #4: q-learning on cliffwalking, seeds 1, 7');
  });

  it('merges the same axis note of several runs', () => {
    const approx = tokensAxis([1], 'approximate');
    expect(
      axisNotes([
        { label: '#1 a', axis: approx },
        { label: '#2 b', axis: tokensAxis([1], 'unknown from update 3 on') },
        { label: '#3 c', axis: approx },
        { label: '#4 d', axis: UPDATE },
        { label: '#5 e', axis: { ok: false, axis: 'tokens', reason: 'none' } },
      ]),
    ).toEqual(['runs #1 and #3: approximate', 'run #2: unknown from update 3 on']);
  });

  it('describes the smoothing', () => {
    expect(describeSmoothing({ kind: 'none' })).toBe('not smoothed');
    expect(describeSmoothing({ kind: 'ema', weight: 0.6 })).toBe('debiased EMA, weight 0.6');
    expect(describeSmoothing({ kind: 'moving-average', window: 1 })).toBe(
      'moving average of 1 point',
    );
  });
});

describe('parseWindow', () => {
  it('accepts whole numbers in [1, 1000], from the number field or text', () => {
    expect(parseWindow(10)).toEqual({ ok: true, value: 10 });
    expect(parseWindow(' 1000 ')).toEqual({ ok: true, value: 1000 });
  });

  it.each([
    [0, 'got 0'],
    [1001, 'got 1001'],
    [2.5, 'got 2.5'],
    [NaN, 'got NaN'],
    [null, 'got nothing'],
    ['', 'got nothing'],
    ['ten', 'got "ten"'],
  ])('refuses %s, naming the range', (value, got) => {
    const r = parseWindow(value);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toBe(`window must be a whole number in [1, 1000], ${got}`);
  });
});

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

describe('finalTableModel', () => {
  it('takes the mean of the last k values and lists settings that differ (live changes too)', () => {
    const a = view(1, {
      spec: {
        algo: 'q-learning',
        env: 'cliffwalking',
        seed: 1,
        config: { ...defaultsOf('q-learning'), alpha: 0.5 },
      },
      series: { 'charts/episodic_return': { x: [1, 2, 3], y: [-30, -20, -10] } },
      events: [{ step: 3, kind: 'hyperparams', changes: { epsilon: 0.3 } }],
    });
    const b = view(2, { series: { 'charts/episodic_return': { x: [1], y: [-100] } } });
    const model = finalTableModel([a, b], ['charts/episodic_return', 'reward/mean'], catalog, 2);
    // Run 1: (−20 + −10) / 2 = −15 from 2 values; run 2: −100 from its only value.
    expect(model.rows.map((r) => r.finals)).toEqual([
      [
        { value: -15, count: 2 },
        { value: NaN, count: 0 },
      ],
      [
        { value: -100, count: 1 },
        { value: NaN, count: 0 },
      ],
    ]);
    // alpha (0.5 vs 0.1) and epsilon (0.3 at the end vs 0.1), in the spec's order.
    expect(model.diffKeys).toEqual(['alpha', 'epsilon']);
    expect(model.rows.map((r) => r.settings)).toEqual([
      [{ text: '0.5' }, { text: '0.3', changed: 'changed live at update 3 (was 0.1)' }],
      [{ text: '0.1' }, { text: '0.1' }],
    ]);
    expect(model.window).toBe(2);
  });

  it('counts a key changed live as differing even when both runs end equal', () => {
    const a = view(1, { events: [{ step: 5, kind: 'hyperparams', changes: { alpha: 0.1 } }] });
    const model = finalTableModel([a, view(2)], [], catalog);
    expect(model.diffKeys).toEqual(['alpha']);
    expect(model.rows[0]!.settings).toEqual([
      { text: '0.1', changed: 'changed live at update 5 (was 0.1)' },
    ]);
  });

  it('works before the catalog has loaded (keys in the order met)', () => {
    const a = view(1, { spec: { ...view(1).spec, config: { gamma: 0.9, alpha: 0.2 } } });
    const b = view(2, { spec: { ...view(2).spec, config: { gamma: 0.99, alpha: 0.2 } } });
    expect(finalTableModel([a, b], [], undefined).diffKeys).toEqual(['gamma']);
  });
});

describe('sortedRowOrder', () => {
  it('sorts numbers either way, rows without a value last, ties in their order', () => {
    const keys = [3, NaN, 1, undefined, 2, 1];
    expect(sortedRowOrder(keys, false)).toEqual([2, 5, 4, 0, 1, 3]);
    expect(sortedRowOrder(keys, true)).toEqual([0, 4, 2, 5, 1, 3]);
  });

  it('compares numbers inside text as numbers', () => {
    expect(sortedRowOrder(['#10 a', '#9 b', '#2 c'], false)).toEqual([2, 1, 0]);
  });
});
