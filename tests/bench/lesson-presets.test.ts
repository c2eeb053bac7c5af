/**
 * The headless lesson-widget timer (bench/learn/lesson-presets.ts) on the CPU, with budgets far
 * too small for any check: it must select the language-model widgets of the lessons asked for,
 * drive each through the run host for exactly its budget, and report what it did.
 */
import { describe, expect, it } from 'vitest';
import { lessonPresetTimes } from '../../bench/learn/lesson-presets';

const quiet = () => {};

describe('lessonPresetTimes', () => {
  it('steps each language-model widget of the selected lessons for its budget', async () => {
    const { rows, table } = await lessonPresetTimes('cpu', {
      maxUpdates: 2,
      maxSeconds: 120,
      lessons: ['04-grpo/06'],
      log: quiet,
    });
    // The PPO vs GRPO lesson opens two runs; its checks need 10 updates at least (a window of 10).
    expect(rows.map((r) => r.preset)).toEqual(['ppo-copy', 'grpo-copy']);
    for (const row of rows) {
      expect(row.lesson).toBe('04-grpo/06-ppo-vs-grpo');
      expect(row.check).toBe('reward/accuracy>=0.5');
      expect(row.passedAt).toBeNull();
      expect(row.updates).toBe(2);
      expect(row.seconds).toBeGreaterThanOrEqual(row.setupSeconds);
      expect(row.backendLine).toMatch(/^CPU/);
      expect(table).toContain(`| ${row.lesson} | ${row.preset} | ${row.check} | not in 2 |`);
    }
  }, 120_000);

  it('leaves out environment algorithms, which always train on the CPU', async () => {
    // The CartPole lesson's only widget is PPO on an MLP: an environment algorithm.
    const { rows } = await lessonPresetTimes('cpu', {
      maxUpdates: 1,
      maxSeconds: 60,
      lessons: ['03-ppo/02', '01-mdp'],
      log: quiet,
    });
    expect(rows).toEqual([]);
  });
});
