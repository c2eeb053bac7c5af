/** Language-model lesson presets, part c (see lm-presets-a.test.ts). */
import { presetTests } from './lm-presets';

presetTests([
  // Lengths stay at 5.9–6.9 tokens; without the overlong term the gamed run passes 7 by update 7.
  ['grpo-copy-counterweight', 'response_length/mean<=7', 12, { overlongEnable: false }],
]);
