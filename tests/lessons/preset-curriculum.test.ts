/** The curriculum lesson's preset: GRPO up the shopping task's rungs (see lm-presets.ts). */
import { presetTests } from './lm-presets';

presetTests([
  // Rung 0 (one price lookup) is the warm-up's; GRPO lifts rung 1 (a lookup, then calc for the
  // quantity) to 3 updates in a row at a pass rate of 0.85 or more and the run reaches rung 2
  // (seed 1: check at update 20; seeds 1–5: 17–30). At lr 1e-9 the run has not left rung 1 by
  // then (bench: by update 40 on seeds 1–5): the climb past it is RL's.
  'grpo-shopping-curriculum',
]);
