/**
 * The collapse lesson's presets (see lm-presets.ts): a learning rate that collapses the policy, and
 * the same run held by a KL to the start. Each preset's check, budget and control are its own in
 * src/lessons/presets.ts.
 */
import { presetTests } from './lm-presets';

presetTests([
  // lr 4e-3 collapses the noisy-copy start: the policy turns deterministic and the share of
  // groups with no signal rises by 0.3; at grpo-copy's lr (1e-3) it does not.
  'grpo-copy-collapse',
  // The same run with a k3 KL in the loss (klCoef 3): the entropy has not fallen at update 20;
  // with the pull all but off (klCoef 1e-6, the reference still scored) the run collapses.
  'grpo-copy-kl',
]);
