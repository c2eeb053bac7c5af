/**
 * The lessons' claims bench (bench/learn/lesson-effects.ts) on the CPU, with a budget far too small
 * for any check: it must select the language-model widgets of the lessons asked for, run each
 * preset and its control on every seed for exactly that budget, and report what happened.
 */
import { describe, expect, it } from 'vitest';
import { lessonEffects, renderEffects } from '../../bench/learn/lesson-effects';

describe('lessonEffects', () => {
  it('runs each widget of the selected lessons and its control on every seed', async () => {
    const { rows, table } = await lessonEffects({
      backend: 'cpu',
      seeds: [1, 2],
      budget: 2,
      lessons: ['04-grpo/06'],
      presets: ['grpo-copy', 'grpo-copy-kl'],
    });
    // The PPO vs GRPO lesson opens two runs, ppo-copy and grpo-copy, each from the noisy-copy
    // start with lr 1e-9 as its control; the preset filter keeps grpo-copy (grpo-copy-kl is in
    // another lesson). A gain check needs 15 updates, so nothing passes in 2.
    expect(rows.map((r) => r.preset)).toEqual(['grpo-copy']);
    for (const row of rows) {
      expect(row.check).toBe('reward/accuracy gain>=0.3');
      expect(row.control).toBe('lr 1e-9');
      expect(row.start?.groupSize).toBe(8);
      expect(row.runs.map((r) => [r.seed, r.passedAt, r.updates])).toEqual([
        [1, null, 2],
        [2, null, 2],
      ]);
      expect(row.controls.map((r) => [r.seed, r.passedAt, r.updates])).toEqual([
        [1, null, 2],
        [2, null, 2],
      ]);
      expect(row.backendLine).toMatch(/^CPU/);
      // Two updates of 64 answers of 1–8 tokens each.
      for (const r of row.runs) expect(r.tokens).toBeGreaterThanOrEqual(2 * 64);
      expect(table).toContain(`| ${row.lesson} | ${row.preset} | ${row.check} |`);
    }
    // Nothing passed: the claim does not hold in this budget, and the table says so.
    expect(table.split('\n').filter((l) => l.endsWith('| NO |'))).toHaveLength(1);
  }, 300_000);

  it('refuses a preset name that is not a preset, naming it', async () => {
    await expect(
      lessonEffects({ backend: 'cpu', seeds: [1], presets: ['grpo-copy', 'grpo-cpoy'] }),
    ).rejects.toThrow(/--presets names no preset: grpo-cpoy/);
  });

  it('refuses a preset that no lesson opens as a language-model widget, naming it', async () => {
    await expect(
      lessonEffects({ backend: 'cpu', seeds: [1], presets: ['grpo-copy', 'ppo-cartpole'] }),
    ).rejects.toThrow(/--presets names ppo-cartpole, which no language-model widget/);
  });

  it('a claim holds only when every seed passed and no control did', () => {
    const run = (passedAt: number | null) => ({
      seed: 1,
      passedAt,
      updates: 20,
      value: 0.4,
      start: 0.2,
      end: 0.6,
      tokens: 1000,
      seconds: 1,
      cpuSeconds: 0.9,
      setupSeconds: 0.1,
    });
    const row = {
      lesson: 'l',
      preset: 'grpo-copy' as const,
      check: 'reward/accuracy gain>=0.3',
      budget: 60,
      control: 'lr 1e-9',
      start: null,
      backendLine: 'CPU',
    };
    const verdict = (runs: (number | null)[], controls: (number | null)[]) =>
      renderEffects([{ ...row, runs: runs.map(run), controls: controls.map(run) }])
        .split('\n')[2]!
        .split('|')
        .at(-2)!
        .trim();
    expect(verdict([20, 30], [null, null])).toBe('yes');
    expect(verdict([20, null], [null, null])).toBe('NO');
    expect(verdict([20, 30], [null, 40])).toBe('NO');
    // A second control: a line of its own, and a pass of either control fails the claim.
    const withAlso = (also: (number | null)[]) =>
      renderEffects([
        {
          ...row,
          runs: [20, 30].map(run),
          controls: [null, null].map(run),
          also: { control: 'the tool taken away', controls: also.map(run) },
        },
      ])
        .split('\n')
        .slice(2)
        .map((line) => [line.split('|')[10]!.trim(), line.split('|').at(-2)!.trim()]);
    expect(withAlso([null, null])).toEqual([
      ['lr 1e-9', 'yes'],
      ['the tool taken away', 'yes'],
    ]);
    expect(withAlso([null, 25])).toEqual([
      ['lr 1e-9', 'NO'],
      ['the tool taken away', 'NO'],
    ]);
  });
});
