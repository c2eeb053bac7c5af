/** Language-model lesson presets, part j: the same run with the ptx term (see FORGETTING_LESSON). */
import { describe, expect, it } from 'vitest';
import { FORGETTING_LESSON as L, firstPass, presetSeries } from './lm-presets';

describe('the forgetting lesson on CPU', () => {
  it('with the ptx term, multiplication still holds at update 20', async () => {
    const retained = (await presetSeries('grpo-shopping-ptx', [L.retained], 20))[L.retained]!;
    console.log(`grpo-shopping-ptx: hold check passed at update ${firstPass(L.holds(), retained)}`);
    expect(firstPass(L.holds(), retained)).toBe(20);
    expect(firstPass(L.forgets(), retained)).toBe(Infinity);
  }, 600_000);
});
