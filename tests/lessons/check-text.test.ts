import { describe, expect, it } from 'vitest';
import { parseCheck, type MetricCheck } from '../../src/lessons/checks';
import {
  checkEtaText,
  faithfulDigits,
  passedText,
  standingText,
  targetText,
  updatesToCheck,
} from '../../src/lessons/check-text';

function metric(text: string): MetricCheck {
  const check = parseCheck(text);
  if (typeof check === 'string' || check.kind !== 'metric') throw new Error(String(check));
  return check;
}
const at = (level: number, n: number) => Array.from({ length: n }, () => level);
/** n values rising by `step` from `from`. */
const ramp = (from: number, step: number, n: number) =>
  Array.from({ length: n }, (_, i) => from + step * i);

describe('numbers shown on the side of the target they are on', () => {
  it('adds decimals until the rounded value compares with the target as the exact one does', () => {
    expect(faithfulDigits(0.32, '>=', 0.3)).toBe(2);
    expect(faithfulDigits(0.2996, '>=', 0.3)).toBe(4); // 0.300 would read as met
    expect(faithfulDigits(0.298, '>=', 0.3)).toBe(3); // 0.30 would read as met
    expect(faithfulDigits(0.301, '<', 0.3)).toBe(2); // 0.30 < 0.30 reads as not met: true
    expect(faithfulDigits(0.304, '>', 0.3)).toBe(3);
  });

  it('writes a target with the decimals it has', () => {
    expect(targetText(0.3)).toBe('0.30');
    expect(targetText(0.125)).toBe('0.125');
    expect(targetText(-0.5)).toBe('-0.50');
    expect(targetText(195)).toBe('195');
  });
});

describe('standingText: where a run stands while its check is not met', () => {
  const gain = metric('r gain>=0.3');
  const start = [0.2, 0.3, 0.2, 0.3, 0.25]; // mean 0.25

  it('states the start, the window and the gain against the target', () => {
    expect(standingText(gain, [...start, ...at(0.45, 10)])).toBe(
      'start 0.25, last 10 0.45 — gain +0.20, target ≥ +0.30',
    );
  });

  it('never rounds a gain short of its target up to it', () => {
    // Last 10 at 0.5498: gain 0.2998, which two decimals would show as +0.30.
    const line = standingText(gain, [...start, ...at(0.5498, 10)]);
    expect(line).toBe('start 0.2500, last 10 0.5498 — gain +0.2998, target ≥ +0.30');
    expect(line).not.toContain('gain +0.30,');
  });

  it('before the check can be judged: the updates so far of those it needs, and the target', () => {
    expect(standingText(gain, start)).toBe(
      'latest 0.25 — 5 of the 15 updates the check needs, target gain ≥ +0.30',
    );
    expect(standingText(gain, [])).toBe('0 of the 15 updates the check needs, target gain ≥ +0.30');
    expect(standingText(metric('r>=0.5 after 30'), at(0.6, 12))).toBe(
      'latest 0.60 — 12 of the 30 updates the check needs, target ≥ 0.50',
    );
  });

  it('states a level check by its window', () => {
    expect(standingText(metric('r>=0.5'), at(0.4, 10))).toBe('last 10 0.40, target ≥ 0.50');
    expect(standingText(metric('r>=0.5'), at(0.4996, 10))).toBe('last 10 0.4996, target ≥ 0.50');
  });
});

describe('passedText: the standing kept after the pass', () => {
  const gain = metric('r gain>=0.3');

  it('states the start, window and gain at the update that passed', () => {
    const values = [...at(0.4, 7), ...at(0.72, 10)]; // 17 values; start 0.40, last 10 0.72
    const updates = ramp(1, 1, 17);
    expect(passedText(gain, updates, values, 17)).toBe(
      'passed at update 17: start 0.40, last 10 0.72, gain +0.32',
    );
  });

  it('shows the gain of a check that passed at its first judgeable update', () => {
    const values = [...at(0.1, 5), ...at(0.6, 10)];
    expect(passedText(gain, ramp(1, 1, 15), values, 15)).toBe(
      'passed at update 15: start 0.10, last 10 0.60, gain +0.50',
    );
  });

  it('judges the values up to the pass, and adds where a run that trained on is now', () => {
    const values = [...at(0.4, 7), ...at(0.72, 10), ...at(0.9, 10)];
    expect(passedText(gain, ramp(1, 1, 27), values, 17)).toBe(
      'passed at update 17: start 0.40, last 10 0.72, gain +0.32 · now last 10 0.90, gain +0.50',
    );
  });

  it('states a level check by its window', () => {
    expect(passedText(metric('r>=0.5'), ramp(1, 1, 12), at(0.75, 12), 12)).toBe(
      'passed at update 12: last 10 0.75',
    );
  });
});

describe('the time to the check from the run’s own trend', () => {
  const gain = metric('r gain>=0.3');

  it('projects a steady rise to the update where the window reaches the target', () => {
    // 0.2 + 0.02 per update from update 1: baseline (first 5) 0.24, so the window must reach 0.54.
    // The window of the last 10 ending at value i (0-based) averages 0.2 + 0.02 (i − 4.5); it
    // reaches 0.54 at i = 21.5, so i = 22: the 23rd value. With 15 values, 8 updates to go.
    const values = ramp(0.2, 0.02, 15);
    expect(updatesToCheck(gain, values)).toBe(8);
    expect(checkEtaText(gain, values, at(2.5, 15))).toBe(
      'check in about 20 s at this trend (8 updates at 2.5 s each)',
    );
    expect(checkEtaText(gain, values, [3])).toBe('check in about 8 updates at this trend');
  });

  it('never estimates fewer updates than the check still needs', () => {
    const values = ramp(0.2, 0.1, 8); // steep, but the check is judged from 15 values on
    expect(updatesToCheck(gain, values)).toBe(7);
  });

  it('says when the trend leads nowhere near the target', () => {
    const flat = [...at(0.3, 10), ...at(0.31, 10)].map((v, i) => (i % 2 ? v + 0.01 : v));
    expect(updatesToCheck(gain, at(0.3, 20))).toBeUndefined();
    expect(updatesToCheck(gain, ramp(0.8, -0.01, 20))).toBeUndefined();
    expect(checkEtaText(gain, flat.slice(0, 6), [])).toBe(
      'no rise toward the target yet: no time to the check to estimate',
    );
    expect(checkEtaText(gain, at(0.3, 5), [])).toBeUndefined(); // too few values for a trend
  });

  it('says when the trend reaches the target only past the budget', () => {
    const values = ramp(0.2, 0.005, 20); // window must gain 0.3 at 0.005 per update: far
    // Start 0.21, so the window must reach 0.51; it averages 0.2 + 0.005 (i − 4.5) at value i and
    // gets there at i = 67: 48 updates after the 20th value.
    expect(updatesToCheck(gain, values)).toBe(48);
    expect(checkEtaText(gain, values, at(1, 20), 40)).toBe(
      'at this trend the check needs about 48 updates, more than the 40 left in the budget',
    );
  });

  it('follows a falling check the same way', () => {
    const falls = metric('r<=0.2');
    const values = ramp(0.8, -0.05, 10); // window mean at value i: 0.8 − 0.05 (i − 4.5)
    // ≤ 0.2 from i = 16.5, so i = 17: the 18th value, 8 updates after the 10th.
    expect(updatesToCheck(falls, values)).toBe(8);
  });
});
