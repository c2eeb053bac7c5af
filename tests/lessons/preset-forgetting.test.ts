/** The forgetting lesson: RL without the ptx term (see FORGETTING_LESSON). */
import { describe, expect, it } from 'vitest';
import { metricCheckPassed, parseCheck, type MetricCheck } from '../../src/lessons/checks';
import { FORGETTING_LESSON as L, firstPass, presetSeries } from './lm-presets';

describe('the forgetting lesson on CPU', () => {
  it('RL that teaches the calculator loses the products the start knew by heart', async () => {
    const series = await presetSeries('grpo-calc-forgetting', [L.retained, L.trained], 25);
    const retained = series[L.retained]!;
    console.log(
      `grpo-calc-forgetting: forget check passed at update ${firstPass(L.forgets(), retained)}`,
    );
    expect(retained[0]).toBeGreaterThanOrEqual(0.7); // it knew them as RL began
    expect(firstPass(L.forgets(), retained)).toBeLessThanOrEqual(20);
    expect(firstPass(L.holds(), retained)).toBe(Infinity);
    // …while the task it trains on learns: forgetting, not a run that broke.
    const learns = parseCheck(`${L.trained} gain>=0.15`) as MetricCheck;
    expect(metricCheckPassed(learns, series[L.trained]!)).toBe(true);
  }, 600_000);
});
