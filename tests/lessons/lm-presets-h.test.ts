/** Language-model lesson presets, part h: the shopping curriculum (see lm-presets-a.test.ts). */
import { presetTests } from './lm-presets';

presetTests([
  // Rung 0 (one price lookup) is passed at once; GRPO lifts rung 1 (a lookup, then calc for the
  // quantity) to 3 passing updates in a row and the run reaches rung 2 at update 11 (check at
  // 12). At lr 1e-9 the run also reaches rung 1 but stays there: the climb past it is RL's.
  ['grpo-shopping-curriculum', 'curriculum/level>1', 40, { lr: 1e-9 }],
]);
