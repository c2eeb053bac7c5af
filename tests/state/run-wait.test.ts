import { describe, expect, it } from 'vitest';
import {
  phaseText,
  timeLeftText,
  waitLine,
  type TimedRun,
  type WaitingRun,
} from '../../src/state/run-wait';
import { parseCheck } from '../../src/lessons/checks';

const waiting = (over: Partial<WaitingRun>): WaitingRun => ({
  status: 'warming',
  phase: undefined,
  steps: 0,
  warmup: undefined,
  rewardModel: undefined,
  replay: undefined,
  ...over,
});

describe('phaseText', () => {
  it.each<[Partial<WaitingRun>, boolean, string | undefined]>([
    [{}, true, 'loading the model'],
    [{}, false, 'building the run'],
    [{ rewardModel: { done: 3, total: 40 } }, true, 'training the reward model: step 3 of 40'],
    [
      { rewardModel: { done: 40, total: 40, report: {} }, warmup: { done: 5, total: 100 } },
      true,
      'warm-up: supervised step 5 of 100',
    ],
    [{ warmup: { done: 100, total: 100 } }, true, 'loading the model'],
    [{ replay: { done: 7, total: 25 } }, true, 'catching up: update 7 of 25 replayed'],
    [{ status: 'running' }, true, 'starting the first update'],
    [
      { status: 'running', phase: { phase: 'generating', update: 5 }, steps: 4 },
      true,
      'update 5: generating answers',
    ],
    // The update's own number: the metrics of the one before may not have come yet.
    [
      { status: 'running', phase: { phase: 'updating', update: 6 }, steps: 4 },
      true,
      'update 6: updating the policy',
    ],
    [{ status: 'running', steps: 4 }, false, undefined],
    [{ status: 'stored', steps: 25 }, true, 'kept from before: Start goes on from update 25'],
    [{ status: 'stored' }, true, undefined],
    [{ status: 'idle', steps: 3 }, true, undefined],
    [{ status: 'paused', phase: { phase: 'updating', update: 4 }, steps: 3 }, true, undefined],
  ])('%o (language model: %s) → %s', (over, lm, text) => {
    expect(phaseText(waiting(over), lm)).toBe(text);
  });
});

describe('timeLeftText', () => {
  it('waits for two measured updates', () => {
    expect(timeLeftText([], 0, 30)).toBeUndefined();
    expect(timeLeftText([2], 1, 30)).toBeUndefined();
    expect(timeLeftText([2, 2], 2, 30)).toBe('about 56 s left: 28 updates to 30 at 2.0 s each');
  });

  it('averages the latest five updates and says minutes past 90 s', () => {
    // The first two (10 s) are older than the latest five (4 s each).
    expect(timeLeftText([10, 10, 4, 4, 4, 4, 4], 7, 60)).toBe(
      'about 4 min left: 53 updates to 60 at 4.0 s each',
    );
    expect(timeLeftText([0.2, 0.2], 29, 30)).toBe('about 1 s left: 1 update to 30 at 0.2 s each');
  });

  it('says nothing once the budget is reached', () => {
    expect(timeLeftText([1, 1, 1], 30, 30)).toBeUndefined();
    expect(timeLeftText([1, 1, 1], 45, 30)).toBeUndefined();
  });
});

describe('waitLine: one line for a lesson widget and a lab run card', () => {
  const running = (over: Partial<TimedRun>): TimedRun => ({
    ...waiting({ status: 'running', steps: 2, phase: { phase: 'generating', update: 3 } }),
    spec: { task: 'copy' },
    series: { 'timing_s/step': { y: [2, 2] } },
    goal: undefined,
    checkPassedAt: undefined,
    ...over,
  });

  it('gives a lab run, which has no budget, its phase alone', () => {
    expect(waitLine(running({}))).toEqual({ phase: 'update 3: generating answers' });
  });

  it("adds the time left to a lesson run's budget until its check passes", () => {
    expect(waitLine(running({ goal: { budget: 30 } }))).toEqual({
      phase: 'update 3: generating answers',
      timeLeft: 'about 56 s left: 28 updates to 30 at 2.0 s each',
    });
    expect(waitLine(running({ goal: { budget: 30 }, checkPassedAt: 2 }))).toEqual({
      phase: 'update 3: generating answers',
    });
  });

  it("adds the time to a metric check at the run's trend, the budget left bounding it", () => {
    const check = parseCheck('reward/accuracy gain>=0.3');
    if (typeof check === 'string') throw new Error(check);
    // Rising 0.02 per update: 8 updates to the check (tests/lessons/check-text.test.ts), 45 left.
    const rising = Array.from({ length: 15 }, (_, i) => 0.2 + 0.02 * i);
    const series = {
      'timing_s/step': { y: Array.from({ length: 15 }, () => 2) },
      'reward/accuracy': { y: rising },
    };
    const run = running({ steps: 15, series, goal: { budget: 60, check } });
    expect(waitLine(run)).toEqual({
      phase: 'update 3: generating answers',
      toCheck: 'check in about 16 s at this trend (8 updates at 2.0 s each)',
      timeLeft: 'about 2 min left: 45 updates to 60 at 2.0 s each',
    });
    // Five updates left in the budget: the trend reaches the check only past it.
    expect(waitLine({ ...run, steps: 55 }).toCheck).toBe(
      'at this trend the check needs about 8 updates, more than the 5 left in the budget',
    );
    expect(waitLine({ ...run, checkPassedAt: 15 })).toEqual({
      phase: 'update 3: generating answers',
    });
  });

  it('says nothing of a paused run, and no time left for a run without a task', () => {
    expect(waitLine(running({ status: 'paused', goal: { budget: 30 } }))).toEqual({});
    expect(waitLine(running({ spec: {}, phase: undefined, goal: { budget: 30 } }))).toEqual({});
  });
});
