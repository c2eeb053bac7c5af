/**
 * Language-model lesson presets, part a (see lm-presets.ts). The presets are spread over small
 * files of about a minute each, so that the CPU layer's workers share them evenly instead of one
 * worker finishing a long file alone.
 */
import { presetTests } from './lm-presets';

presetTests([
  // lr 4e-3 collapses the noisy-copy start: the policy turns deterministic and the share of
  // groups with no signal rises by 0.3; at grpo-copy's lr (1e-3) it does not.
  ['grpo-copy-collapse', 'frac_reward_zero_std gain>=0.3', 30, { lr: 1e-3 }],
  // The same run with a k3 KL in the loss (klCoef 3): the entropy has not fallen at update 20;
  // with the pull all but off (klCoef 1e-6, the reference still scored) the run collapses.
  ['grpo-copy-kl', 'actor/entropy gain>=0 after 20', 25, { klCoef: 1e-6 }],
]);
