/** Language-model lesson presets, part i: forgetting without the ptx term (see FORGETTING_LESSON). */
import { describe, expect, it } from 'vitest';
import { FORGETTING_LESSON as L, firstPass, presetSeries } from './lm-presets';

describe('the forgetting lesson on CPU', () => {
  it('at lr 3e-3 the shopping run loses multiplication, which it never trains on', async () => {
    const retained = (await presetSeries('grpo-shopping-forgetting', [L.retained], 20))[
      L.retained
    ]!;
    console.log(
      `grpo-shopping-forgetting: forget check passed at update ${firstPass(L.forgets(), retained)}`,
    );
    expect(retained[0]).toBeGreaterThanOrEqual(0.8); // it knew multiplication as RL began
    expect(firstPass(L.forgets(), retained)).toBeLessThanOrEqual(20);
    expect(firstPass(L.holds(), retained)).toBe(Infinity);
  }, 600_000);
});
