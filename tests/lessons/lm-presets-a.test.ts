/**
 * Language-model lesson presets, part a (see lm-presets.ts). The presets are spread over five
 * small files of about a minute each, so that the CPU layer's workers share them evenly instead of
 * one worker finishing a long file alone.
 */
import { presetTests } from './lm-presets';

presetTests([
  // lr 3e-3 collapses by update 15; the preset's sane lr (3e-4) keeps the groups informative.
  ['grpo-copy-collapse', 'frac_reward_zero_std>=0.9', 40, { lr: 3e-4 }],
]);
