import { describe, expect, it } from 'vitest';
import { fileStem } from '../../src/ui/lab/share/download';

describe('fileStem', () => {
  it.each([
    ['#2 grpo on reverse, seed 1', 'run-2-grpo-on-reverse-seed-1'],
    ['#12 fork of #3 at update 40', 'run-12-fork-of-3-at-update-40'],
    ['', 'run-export'],
    ['Ünïcode ✓', 'run-n-code'],
  ])('%j → %s', (label, stem) => expect(fileStem(label)).toBe(stem));
});
