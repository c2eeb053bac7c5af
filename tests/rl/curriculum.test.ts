import { describe, expect, it } from 'vitest';
import { CurriculumScheduler } from '../../src/rl/curriculum';

describe('CurriculumScheduler', () => {
  it('moves up after `patience` passing updates in a row, and the streak restarts per rung', () => {
    const s = new CurriculumScheduler(3, { threshold: 0.8, patience: 2 });
    // 0.9 pass, 0.5 fail (streak 0), 0.8 pass (≥ threshold), 0.85 pass → level 1.
    expect([0.9, 0.5, 0.8].map((r) => s.observe(r))).toEqual([false, false, false]);
    expect(s.level).toBe(0);
    expect(s.observe(0.85)).toBe(true);
    expect(s.level).toBe(1);
    // The streak that raised level 0 does not count on level 1.
    expect(s.observe(0.95)).toBe(false);
    expect(s.observe(0.95)).toBe(true);
    expect(s.level).toBe(2);
  });

  it('stays on the last rung and never goes down', () => {
    const s = new CurriculumScheduler(2, { threshold: 0.5, patience: 1 }, 1);
    expect(s.observe(1)).toBe(false);
    expect(s.observe(0)).toBe(false);
    expect(s.level).toBe(1);
  });

  it('counts NaN as failing', () => {
    const s = new CurriculumScheduler(2, { threshold: 0.5, patience: 2 });
    s.observe(1);
    s.observe(NaN);
    expect(s.observe(1)).toBe(false);
    expect(s.level).toBe(0);
  });

  it.each([
    [0, { threshold: 0.8, patience: 5 }, 0, /levels/],
    [3, { threshold: 0, patience: 5 }, 0, /threshold/],
    [3, { threshold: 0.8, patience: 0 }, 0, /patience/],
    [3, { threshold: 0.8, patience: 5 }, 3, /start.*\[0, 2\]/],
  ])('refuses levels=%s config=%o start=%s', (levels, config, start, message) => {
    expect(() => new CurriculumScheduler(levels, config, start)).toThrow(message);
  });
});
