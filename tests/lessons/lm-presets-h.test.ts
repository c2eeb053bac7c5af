/** Language-model lesson presets, part h: the shopping curriculum (see lm-presets-a.test.ts). */
import { presetTests } from './lm-presets';

presetTests([
  // Rung 0 (one price lookup) passes at 0.8 for 3 updates in a row, the run moves to rung 1
  // (a lookup, then calc for the quantity) and stays there for the check's 10 updates.
  ['grpo-shopping-curriculum', 'curriculum/level>=1', 40, null],
]);
