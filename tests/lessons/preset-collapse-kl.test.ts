/**
 * The collapse and KL lessons' presets (see lm-presets.ts): a learning rate that collapses the
 * policy, the same run held by a KL to the start, and a gameable reward whose run a KL keeps
 * right. Each preset's check, budget and control are its own in
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
  // A length bonus and a prefix verifier with a k3 KL in the loss (klCoef 1): strict success has
  // not fallen by 0.1 at update 20; without the KL (klCoef 0) the run pads and it falls to 0.
  'grpo-copy-gamed-kl',
]);
