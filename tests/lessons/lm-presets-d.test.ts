/** Language-model lesson presets, part d (see lm-presets-a.test.ts). */
import { presetTests } from './lm-presets';

presetTests([
  // Dynamic sampling trains on informative groups only; without it about half the batch is
  // zero-std groups, so the control never reaches the check.
  ['grpo-copy-dynamic', 'batch/frac_reward_zero_std<=0.05', 15, { dynamicSampling: false }],
]);
