/** Language-model lesson presets, part e (see lm-presets-a.test.ts). */
import { presetTests } from './lm-presets';

presetTests([
  // lr 3e-3 with a k3 KL in the loss (klCoef 0.5): accuracy holds at 0.2–0.36; with the pull
  // all but off (klCoef 1e-6, the reference still scored) the run collapses to 0 by update 12.
  ['grpo-copy-kl', 'reward/accuracy>=0.25', 30, { klCoef: 1e-6 }],
  // Strict accuracy 0 from update 7; passes at update 13–16. Without learning nothing is gamed.
  ['grpo-copy-gamed', 'reward/strict_accuracy<=0.05', 30, { lr: 1e-9 }],
]);
