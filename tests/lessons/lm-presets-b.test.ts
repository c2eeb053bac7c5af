/** Language-model lesson presets, second half (see lm-presets.ts). */
import { presetTests } from './lm-presets';

presetTests([
  // lr 3e-3 with a k3 KL in the loss (klCoef 0.5): accuracy holds at 0.2–0.36; with the pull
  // all but off (klCoef 1e-6, the reference still scored) the run collapses to 0 by update 12.
  ['grpo-copy-kl', 'reward/accuracy>=0.25', 30, { klCoef: 1e-6 }],
  // Strict accuracy 0 from update 7; passes at update 13–16. Without learning nothing is gamed.
  ['grpo-copy-gamed', 'reward/strict_accuracy<=0.05', 30, { lr: 1e-9 }],
  // Lengths stay at 5.9–6.9 tokens; without the overlong term the gamed run passes 7 by update 7.
  ['grpo-copy-counterweight', 'response_length/mean<=7', 12, { overlongEnable: false }],
  ['dpo-copy', 'reward/success_rate>=0.5', 30, { lr: 1e-9 }],
  // Dynamic sampling trains on informative groups only; without it about half the batch is
  // zero-std groups, so the control never reaches the check.
  ['grpo-copy-dynamic', 'batch/frac_reward_zero_std<=0.05', 20, { dynamicSampling: false }],
]);
