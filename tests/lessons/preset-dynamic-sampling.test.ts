/** The dynamic-sampling lesson's preset (see lm-presets.ts). */
import { presetTests } from './lm-presets';

presetTests([
  // Dynamic sampling trains on informative groups only; without it about half the batch is
  // zero-std groups, so the control never reaches the check.
  'grpo-copy-dynamic',
]);
