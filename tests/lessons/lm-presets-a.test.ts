/** Language-model lesson presets, first half (see lm-presets.ts). */
import { presetTests } from './lm-presets';

presetTests([
  // Measured on CPU (seed 4): passes at update 16; at lr 1e-9 the window never reaches 0.5.
  ['grpo-copy', 'reward/accuracy>=0.5', 30, { lr: 1e-9 }],
  // lr 3e-3 collapses by update 15; the preset's sane lr (3e-4) keeps the groups informative.
  ['grpo-copy-collapse', 'frac_reward_zero_std>=0.9', 40, { lr: 3e-4 }],
  ['grpo-copy-drgrpo', 'reward/accuracy>=0.5', 30, { lr: 1e-9 }],
  // Measured on CPU (seed 4): passes at update 13; at lr 1e-9 the window stays ≤ 0.47.
  ['ppo-copy', 'reward/accuracy>=0.5', 30, { lr: 1e-9 }],
  // No control: the check is the habit the warm-up gave (one call per episode; a control at lr
  // 1e-9 holds it too, as the lesson says). It fails if calls stop parsing or running.
  ['grpo-multiply-tools', 'tools/call_frequency>=0.9', 12, null],
]);
