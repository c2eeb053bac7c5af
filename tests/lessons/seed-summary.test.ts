/**
 * The seeds block's table, on hand-worked series. Check `m gain>=0.3`: the mean of the last 10
 * values minus the mean of the first 5, judged from update 15 on. A run whose values are 0 for its
 * first k updates and 1 after has, at update n ≥ k, (n − k) ones in its last 10 (at most 10) and a
 * start of 0, so its gain reaches 0.3 at n = max(15, k + 3).
 */
import { describe, expect, it } from 'vitest';
import { parseCheck } from '../../src/lessons/checks';
import type { RunRecord } from '../../src/compare/run-record';
import {
  backendCaption,
  difference,
  differenceCell,
  formatStat,
  passCell,
  presetSummary,
  runOutcome,
  seedStat,
} from '../../src/lessons/seed-summary';
import type { MetricCheck } from '../../src/lessons/checks';

const check = parseCheck('m gain>=0.3') as MetricCheck;

/** `length` updates: m = 0 for the first k, then 1; 100 tokens and 0.5 s per update. */
function run(k: number, length = 30, seed = 1): RunRecord {
  return {
    algorithm: 'grpo',
    task: 'copy',
    seed,
    config: {},
    metrics: {
      m: Array.from({ length }, (_, i) => (i < k ? 0 : 1)),
      'perf/generated_tokens': Array.from({ length }, () => 100),
      'timing_s/step': Array.from({ length }, () => 0.5),
    },
    events: [],
  };
}

describe('runOutcome', () => {
  it.each([
    // k, length, passedAt, tokens, seconds, gain on the first 30 updates
    [14, 30, 17, 1700, 8.5, 1],
    [10, 30, 15, 1500, 7.5, 1],
    // Last 10 of 30 (updates 21–30) hold 8 ones.
    [22, 30, 25, 2500, 12.5, 0.8],
    // Not yet: update 17 has not come.
    [14, 16, null, null, null, null],
    // Never within the budget of 30 (the 31st update would pass, but the budget ends at 30).
    [28, 40, null, null, null, 0.2],
  ])('k=%i over %i updates → passes at %s', (k, length, at, tokens, seconds, gain) => {
    const o = runOutcome(run(k, length), check, 30);
    expect(o.updates).toBe(length);
    expect(o.passedAt).toBe(at);
    expect(o.tokensToPass).toBe(tokens);
    expect(o.secondsToPass).toBe(seconds);
    if (gain === null) expect(o.atBudget).toBeNull();
    else expect(o.atBudget).toBeCloseTo(gain, 12);
  });

  it('leaves tokens and seconds unknown when the run logged neither', () => {
    const r = run(10);
    r.algorithm = 'q-learning';
    r.metrics = { m: r.metrics.m! };
    const o = runOutcome(r, check, 30);
    expect([o.passedAt, o.tokensToPass, o.secondsToPass]).toEqual([15, null, null]);
  });
});

describe('seedStat and difference', () => {
  it('mean and sample std (n − 1), non-finite values left out', () => {
    // 17, 18, 25: mean 20, deviations −3, −2, 5, Σ² = 38, std √(38 / 2) = √19.
    const s = seedStat([17, null, 18, NaN, 25])!;
    expect(s.n).toBe(3);
    expect(s.mean).toBe(20);
    expect(s.std).toBeCloseTo(Math.sqrt(19), 12);
    expect(seedStat([4])).toEqual({ n: 1, mean: 4, std: 0 });
    expect(seedStat([null])).toBeUndefined();
  });

  it('a − b ± √(sd_a²/n_a + sd_b²/n_b), only with 2 values or more on each side', () => {
    // 15, 15, 16: mean 15⅓, std √(1/3); 20 − 15⅓ = 4⅔ ± √(19/3 + 1/9) = √(58/9).
    const d = difference(seedStat([17, 18, 25]), seedStat([15, 15, 16]))!;
    expect(d.diff).toBeCloseTo(14 / 3, 12);
    expect(d.se).toBeCloseTo(Math.sqrt(58 / 9), 12);
    expect(difference(seedStat([1]), seedStat([2, 3]))).toBeUndefined();
    expect(difference(undefined, seedStat([2, 3]))).toBeUndefined();
  });
});

describe('presetSummary and its cells', () => {
  const slow = presetSummary([run(14), run(22), run(15)], check, 30);
  const fast = presetSummary([run(10), run(12), run(13)], check, 30);

  it('counts and summarizes what passing took', () => {
    expect([slow.passed, slow.pending, slow.failed]).toEqual([3, 0, 0]);
    // 17, 25, 18 updates; 100 tokens and 0.5 s each.
    expect(slow.updates!.mean).toBe(20);
    expect(slow.tokens!.mean).toBeCloseTo(2000, 9);
    expect(slow.tokens!.std).toBeCloseTo(100 * Math.sqrt(19), 9);
    expect(slow.seconds!.mean).toBeCloseTo(10, 12);
    // Gains at update 30: 1, 0.8, 1 → mean 14/15, std √((2·(1/15)² + (2/15)²) / 2) = √3 / 15.
    expect(slow.atBudget!.mean).toBeCloseTo(14 / 15, 12);
    expect(slow.atBudget!.std).toBeCloseTo(Math.sqrt(3) / 15, 12);
    expect(passCell(slow, slow.updates)).toBe('20 ± 4.4');
    expect(passCell(slow, slow.tokens)).toBe('2000 ± 440');
    expect(differenceCell(slow, fast, (s) => s.updates)).toBe('+4.67 ± 2.5');
    expect(differenceCell(fast, slow, (s) => s.seconds)).toBe('−2.33 ± 1.3');
    expect(differenceCell(slow, fast, (s) => s.atBudget, false)).toBe('−0.0667 ± 0.067');
  });

  it('says "not yet" while a seed may still pass, and how many did not once none can', () => {
    const running = presetSummary([run(10), run(14, 16), run(14, 12)], check, 30);
    expect([running.passed, running.pending, running.failed]).toEqual([1, 2, 0]);
    expect(passCell(running, running.updates)).toBe('not yet (1 of 3)');
    expect(differenceCell(running, fast, (s) => s.updates)).toBe('not yet');
    expect(differenceCell(running, fast, (s) => s.atBudget, false)).toBe('not yet');
    const none = presetSummary([run(14, 16), run(14, 12)], check, 30);
    expect(passCell(none, none.updates)).toBe('not yet');

    const ended = presetSummary([run(10), run(12), run(30)], check, 30);
    expect([ended.passed, ended.pending, ended.failed]).toEqual([2, 0, 1]);
    // 15 and 15: the mean over the two that passed, and the one that did not.
    expect(passCell(ended, ended.updates)).toBe('15 ± 0 over 2; 1 of 3 did not pass');
    // No difference of means that leaves out a seed that did not pass.
    expect(differenceCell(ended, fast, (s) => s.updates)).toBe('—');
  });
});

describe('formatting', () => {
  it.each([
    [20, 4.358898, false, '20 ± 4.4'],
    [-4.6667, 2.5386, true, '−4.67 ± 2.5'],
    [0.4123, 0.05, true, '+0.412 ± 0.05'],
    [12_345, 678, false, '12.3k ± 680'],
    [12_345, 15_432, false, '12.3k ± 15k'],
  ])('formatStat(%d, %d, %s) = %s', (mean, spread, signed, text) => {
    expect(formatStat(mean, spread, signed)).toBe(text);
  });

  it.each([
    [['cpu', 'cpu', undefined], 'CPU'],
    [['webgpu'], 'WebGPU'],
    [['webgpu', 'cpu'], 'CPU and WebGPU'],
    [[undefined], 'backend not reported yet'],
  ])('backendCaption(%j) = %s', (kinds, text) => {
    expect(backendCaption(kinds)).toBe(text);
  });
});
