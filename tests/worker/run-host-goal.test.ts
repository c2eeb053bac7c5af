import { describe, expect, it } from 'vitest';
import { parseCheck, type MetricCheck } from '../../src/lessons/checks';
import { metricCheckPassed } from '../../src/worker/metric-check';
import { createRunHost } from '../../src/worker/run-host';
import type { RunMessage, RunSpec } from '../../src/worker/run-protocol';
import { runCatalog } from '../../src/worker/run-spec';

const defaults = (algo: string) => runCatalog().algorithms.find((a) => a.name === algo)!.defaults;

function host() {
  const messages: RunMessage[] = [];
  const api = createRunHost({ flushMs: 50 });
  const statuses = () => messages.flatMap((m) => (m.type === 'status' ? [m.status] : []));
  const points = () => messages.flatMap((m) => (m.type === 'update' ? m.points : []));
  return { api, messages, statuses, points, listener: (m: RunMessage) => messages.push(m) };
}

/** Resolves once the run has said 'paused' `count` times (or fails after `ms`). */
async function pausedTimes(statuses: () => string[], count: number, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (statuses().filter((s) => s === 'paused').length < count) {
    if (Date.now() > until) throw new Error(`not paused ${count} times within ${ms} ms`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

const valueIteration: RunSpec = {
  algo: 'value-iteration',
  env: 'gridworld',
  seed: 0,
  config: { ...defaults('value-iteration'), gamma: 0.9, theta: 1e-6 },
  backend: 'cpu',
};

const qLearning: RunSpec = {
  algo: 'q-learning',
  env: 'cliffwalking',
  seed: 1,
  config: defaults('q-learning'),
  backend: 'cpu',
};

describe('a lesson goal judged in the worker', () => {
  it('value iteration stops at the very update where its check first passes', async () => {
    const check = parseCheck('values/converged>=1') as MetricCheck;
    const { api, listener, statuses, points } = host();
    await api.createRun(valueIteration, listener);
    await api.start({ check, history: [] });
    await pausedTimes(statuses, 1);
    const values = points().map((p) => p.metrics['values/converged']!);
    const steps = points().map((p) => p.step);
    expect(steps).toEqual(values.map((_, i) => i + 1)); // every update sent, none skipped
    expect(metricCheckPassed(check, values)).toBe(true);
    expect(metricCheckPassed(check, values.slice(0, -1))).toBe(false);
    expect(statuses()).toEqual(['warming', 'idle', 'running', 'paused']);
    await api.dispose();
  });

  it('without a goal the same run trains on far past that update', async () => {
    const check = parseCheck('values/converged>=1') as MetricCheck;
    const goal = host();
    await goal.api.createRun(valueIteration, goal.listener);
    await goal.api.start({ check });
    await pausedTimes(goal.statuses, 1);
    const stoppedAt = goal.points().at(-1)!.step;
    const free = host();
    await free.api.createRun(valueIteration, free.listener);
    await free.api.start();
    await new Promise((resolve) => setTimeout(resolve, 500));
    await free.api.pause();
    // 33 updates with the goal; about 170 in 300 ms without it on a loaded 2-core machine.
    expect(free.points().at(-1)!.step).toBeGreaterThan(stoppedAt + 50);
    await Promise.all([goal.api.dispose(), free.api.dispose()]);
  });

  it('counts the values the run had before this start toward the check', async () => {
    // A check of the last 10 values that the 10 earlier values alone do not pass: stopping at
    // the first update means the history counted (the window then holds 9 earlier values).
    const check = parseCheck('charts/episodic_return>=-1000000') as MetricCheck;
    const { api, listener, statuses, points } = host();
    await api.createRun(qLearning, listener);
    await api.start({ check, history: new Array(9).fill(0) });
    await pausedTimes(statuses, 1);
    expect(points().map((p) => p.step)).toEqual([1]);
    await api.dispose();
  });

  it('stops at its budget, and a start past the budget trains on', async () => {
    const { api, listener, statuses, points } = host();
    await api.createRun(qLearning, listener);
    await api.start({ budget: 7 });
    await pausedTimes(statuses, 1);
    expect(points().at(-1)!.step).toBe(7);
    await api.start({ budget: 7 });
    await new Promise((resolve) => setTimeout(resolve, 100));
    await api.pause();
    expect(points().at(-1)!.step).toBeGreaterThan(7);
    await api.dispose();
  });

  it('a pause asked for while the goal pauses the run waits for the last update', async () => {
    const { api, listener, statuses, points } = host();
    await api.createRun(qLearning, listener);
    await api.start({ budget: 3 });
    await api.pause(); // at once: the run may be training or already pausing by itself
    expect(statuses().at(-1)).toBe('paused');
    const last = points().at(-1)!.step;
    expect(last).toBeGreaterThanOrEqual(1);
    expect(last).toBeLessThanOrEqual(3);
    await api.dispose();
  });

  it.each([
    [{ budget: 0 }, 'goal.budget must be a whole number ≥ 1, got 0'],
    [{ budget: 2.5 }, 'goal.budget must be a whole number ≥ 1, got 2.5'],
    [{ history: [1, Number.NaN] }, 'goal.history must be an array of finite numbers'],
    [
      { check: { ...(parseCheck('x>=1') as MetricCheck), op: '==' as never } },
      'goal.check.op must be one of >=, <=, >, <, got ==',
    ],
  ])('refuses the goal %o', async (goal, message) => {
    const { api, listener, statuses } = host();
    await api.createRun(qLearning, listener);
    await expect(api.start(goal)).rejects.toThrow(message);
    expect(statuses()).toEqual(['warming', 'idle']); // not started
    await api.dispose();
  });
});
