/**
 * A PlotSpec as uPlot's options and data. uPlot wants one x array shared by every series: each
 * line and band brings its own x (runs log at different updates, tokens or seconds), so they are
 * joined (uPlot.join), where a value missing at another line's x is `undefined` (skipped: the line
 * goes on) and a non-finite value is `null` (a gap). Lines arrive already thinned to the chart's
 * width where they are long, and uPlot thins again per pixel column, so a join stays small.
 */
import uPlot from 'uplot';
import { formatTick } from '../../state/chart';
import {
  WHOLE_NUMBER_STEPS,
  withAlpha,
  xIsWholeNumbers,
  type PlotSpec,
} from '../../state/charts/plot-spec';

const FONT = '12px system-ui, -apple-system, "Segoe UI", sans-serif';
const TITLE_FONT = `600 ${FONT}`;
const TEXT = '#333';
const GRID = '#e3e6ec';

/** y values as uPlot reads them: null for a gap. */
const gaps = (ys: readonly number[]) => ys.map((v) => (Number.isFinite(v) ? v : null));

/** The aligned data: x, then one column per line, then per band its upper and lower edge. */
export function plotData(spec: PlotSpec): uPlot.AlignedData {
  const tables: uPlot.AlignedData[] = [
    ...spec.lines.map((l) => [l.x as number[], gaps(l.y)] as uPlot.AlignedData),
    ...spec.bands.map((b) => [b.x as number[], gaps(b.hi), gaps(b.lo)] as uPlot.AlignedData),
  ];
  if (tables.length === 0) return [[]];
  return tables.length === 1 ? tables[0]! : uPlot.join(tables);
}

/**
 * [min, max] that uPlot can split into ticks: its splits step from min by an increment until
 * max, and an increment below the float resolution of the values never gets there (an endless
 * loop that ends in "Invalid array length"). y-scale.ts already widens such ranges; this guards
 * every range handed to uPlot, x included.
 */
export function safeRange(min: number, max: number): [number, number] {
  if (!Number.isFinite(min) || !Number.isFinite(max)) return [0, 1];
  const scale = Math.max(Math.abs(min), Math.abs(max));
  if (max - min > 1e-9 * scale && max > min) return [min, max];
  const pad = scale === 0 ? 0.5 : scale * 0.05;
  return [min - pad, max + pad];
}

/**
 * A key of what the options depend on beyond the data and ranges: a chart whose key is unchanged
 * only gets new data (setData), otherwise it is built anew.
 */
export function optionsKey(spec: PlotSpec, height: number): string {
  const lines = spec.lines.map(
    (l) => `${l.color} ${l.dash.join(',')} ${l.width} ${l.alpha} ${l.x.length <= 2}`,
  );
  const bands = spec.bands.map((b) => b.color);
  return [
    spec.y.kind,
    spec.xTitle,
    xIsWholeNumbers(spec),
    spec.yTitle,
    height,
    ...lines,
    '|',
    ...bands,
  ].join(';');
}

/**
 * A log axis splits at powers of ten only (every other one past eight decades): uPlot's default
 * also splits at 2–9 × 10^k, which crowds a short axis with ticks.
 */
export function decades(min: number, max: number): number[] {
  const from = Math.round(Math.log10(min));
  const to = Math.round(Math.log10(max));
  const every = to - from > 8 ? 2 : 1;
  const out: number[] = [];
  for (let k = from; k <= to; k += every) out.push(Number(`1e${k}`));
  return out;
}

/** Wide enough for the longest tick label at 12 px (about 7 px a character), and the title. */
const ySize = (_u: uPlot, values: string[] | null) =>
  Math.max(36, 14 + 7 * Math.max(0, ...(values ?? []).map((v) => v.length)));

/**
 * uPlot's options for `spec`. `ranges` is read on every redraw, so new ranges apply with the
 * next setData without building the chart again.
 */
export function plotOptions(
  spec: PlotSpec,
  size: { width: number; height: number },
  ranges: { current: PlotSpec },
  hooks: uPlot.Hooks.Arrays,
): uPlot.Options {
  const axis = (label: string, values?: uPlot.Axis['values']): uPlot.Axis => ({
    label,
    labelFont: TITLE_FONT,
    labelSize: 18,
    font: FONT,
    stroke: TEXT,
    grid: { stroke: GRID, width: 1 },
    ticks: { stroke: GRID, width: 1, size: 4 },
    ...(values ? { values } : {}),
  });
  const series: uPlot.Series[] = [
    { label: spec.xTitle },
    ...spec.lines.map((l): uPlot.Series => ({
      label: l.label,
      stroke: withAlpha(l.color, l.alpha),
      width: l.width,
      dash: [...l.dash],
      points: { show: false },
      spanGaps: false,
    })),
    ...spec.bands.flatMap((b): uPlot.Series[] =>
      ['upper', 'lower'].map((edge) => ({
        label: `${edge} edge`,
        stroke: withAlpha(b.color, 0),
        width: 0,
        points: { show: false },
      })),
    ),
  ];
  const first = spec.lines.length + 1;
  return {
    ...size,
    series,
    bands: spec.bands.map((b, k) => ({
      series: [first + 2 * k, first + 2 * k + 1],
      fill: withAlpha(b.color, 0.25),
    })),
    scales: {
      x: { time: false, range: () => safeRange(ranges.current.x.min, ranges.current.x.max) },
      y: {
        distr: spec.y.kind === 'log' ? 3 : 1,
        log: 10,
        range: () => safeRange(ranges.current.y.min, ranges.current.y.max),
      },
    },
    axes: [
      {
        ...axis(spec.xTitle, (_u, splits) => splits.map(formatTick)),
        size: 30,
        ...(xIsWholeNumbers(spec) ? { incrs: [...WHOLE_NUMBER_STEPS] } : {}),
      },
      {
        ...axis(spec.yTitle, (_u, splits) => splits.map(formatTick)),
        size: ySize,
        // uPlot rounds log splits to the linear increment's decimals (0.001 → 0): label the
        // decades from their exponents instead.
        ...(spec.y.kind === 'log'
          ? {
              splits: () => decades(ranges.current.y.min, ranges.current.y.max),
              values: () => decades(ranges.current.y.min, ranges.current.y.max).map(formatTick),
            }
          : {}),
      },
    ],
    legend: { show: false },
    cursor: { drag: { x: false, y: false }, points: { show: false }, y: false },
    hooks,
  };
}
