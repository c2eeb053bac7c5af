/** The forgetting lesson: the same run with the ptx term (see FORGETTING_LESSON). */
import { describe, expect, it } from 'vitest';
import { metricCheckPassed, parseCheck, type MetricCheck } from '../../src/lessons/checks';
import { FORGETTING_LESSON as L, firstPass, presetSeries } from './lm-presets';

describe('the forgetting lesson on CPU', () => {
  it('with the ptx term, the one-digit products hold at update 25 and the calculator is learned', async () => {
    const series = await presetSeries('grpo-calc-ptx', [L.retained, L.trained], 25);
    const retained = series[L.retained]!;
    console.log(`grpo-calc-ptx: hold check passed at update ${firstPass(L.holds(), retained)}`);
    expect(firstPass(L.holds(), retained)).toBe(25);
    expect(firstPass(L.forgets(), retained)).toBe(Infinity);
    const learns = parseCheck(`${L.trained} gain>=0.1`) as MetricCheck;
    expect(metricCheckPassed(learns, series[L.trained]!)).toBe(true);
  }, 600_000);
});
