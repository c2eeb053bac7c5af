/** Language-model lesson presets, part d (see lm-presets-a.test.ts). */
import { presetTests } from './lm-presets';

presetTests([
  // No control: the check is the habit the warm-up gave (one call per episode; a control at lr
  // 1e-9 holds it too, as the lesson says). It fails if calls stop parsing or running.
  ['grpo-multiply-tools', 'tools/call_frequency>=0.9', 12, null],
  // Dynamic sampling trains on informative groups only; without it about half the batch is
  // zero-std groups, so the control never reaches the check.
  ['grpo-copy-dynamic', 'batch/frac_reward_zero_std<=0.05', 20, { dynamicSampling: false }],
]);
