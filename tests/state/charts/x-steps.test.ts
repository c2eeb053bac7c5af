/** Whole-number x axes (updates, tokens) step by whole numbers; other axes keep uPlot's steps. */
import { describe, expect, it } from 'vitest';
import {
  WHOLE_NUMBER_STEPS,
  xIsWholeNumbers,
  type PlotSpec,
} from '../../../src/state/charts/plot-spec';

function spec(lineXs: number[][], bandXs: number[][] = []): PlotSpec {
  return {
    xTitle: 'update',
    yTitle: 'reward/accuracy',
    x: { min: 0, max: 10 },
    y: { kind: 'linear', min: 0, max: 1 },
    lines: lineXs.map((x) => ({ x, y: x.map(() => 0.5) })) as unknown as PlotSpec['lines'],
    bands: bandXs.map((x) => ({
      x,
      hi: x.map(() => 1),
      lo: x.map(() => 0),
    })) as unknown as PlotSpec['bands'],
    markers: [],
  };
}

describe('x-axis steps', () => {
  it('are 1, 2 and 5 × 10^k: no 2.5 or fraction to label an update axis with', () => {
    expect(WHOLE_NUMBER_STEPS.slice(0, 7)).toEqual([1, 2, 5, 10, 20, 50, 100]);
    expect(WHOLE_NUMBER_STEPS.every(Number.isInteger)).toBe(true);
    expect(WHOLE_NUMBER_STEPS.at(-1)).toBe(5e9);
  });

  it('apply to updates and tokens, lines and bands alike', () => {
    expect(
      xIsWholeNumbers(
        spec([
          [1, 2, 3],
          [1, 2],
        ]),
      ),
    ).toBe(true);
    expect(xIsWholeNumbers(spec([[640, 1280]], [[640, 1280]]))).toBe(true);
  });

  it('do not apply to seconds, or to a chart with no points yet', () => {
    expect(xIsWholeNumbers(spec([[0.4, 0.9, 1.3]]))).toBe(false);
    expect(xIsWholeNumbers(spec([[1, 2, 3]], [[1.5, 2.5]]))).toBe(false);
    expect(xIsWholeNumbers(spec([[]]))).toBe(false);
    expect(xIsWholeNumbers(spec([]))).toBe(false);
  });
});
