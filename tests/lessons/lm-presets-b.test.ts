/** Language-model lesson presets, part b (see lm-presets-a.test.ts). */
import { presetTests } from './lm-presets';

presetTests([
  ['grpo-copy-drgrpo', 'reward/accuracy>=0.5', 30, { lr: 1e-9 }],
  ['dpo-copy', 'reward/success_rate>=0.5', 30, { lr: 1e-9 }],
]);
