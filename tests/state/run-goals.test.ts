/**
 * A lesson run stops by itself, with no widget on the page (nothing but the run manager here):
 * a language model at its preset's budget, any lesson run when its check first passes; started
 * again, it trains on. Leaving the lesson parks every run that has no such stop ahead of it.
 */
import { describe, expect, it, vi } from 'vitest';
import { parseCheck, type Check } from '../../src/lessons/checks';
import { presetBudget } from '../../src/lessons/presets';
import { goalStopText, lessonGoal, type LessonGoal } from '../../src/state/lesson-goal';
import type { GridInspection, RunMessage, RunSpec } from '../../src/worker/run-protocol';
import { memoryStore, setUp, spec, wait } from './run-fakes';

const lmSpec: RunSpec = {
  algo: 'grpo',
  task: 'reverse',
  seed: 1,
  config: { lr: 1e-3, maxNewTokens: 8 },
  backend: 'cpu',
};

const check = (text: string) => parseCheck(text) as Check;

/** Updates `from` to `to`, each with this accuracy. */
function points(from: number, to: number, accuracy: number) {
  return Array.from({ length: to - from + 1 }, (_, i) => ({
    step: from + i,
    metrics: { 'reward/accuracy': accuracy, 'timing_s/step': 1 },
  }));
}

/** One batch of updates as the run worker sends it. */
function batch(...parts: ReturnType<typeof points>[]): RunMessage {
  return { type: 'update', points: parts.flat(), events: [], config: lmSpec.config };
}

/** Updates `from` to `to` in one batch, each with this accuracy. */
const updates = (from: number, to: number, accuracy: number) => batch(points(from, to, accuracy));

/** A language-model lesson run with a budget of 12 updates and an accuracy check, started. */
async function lessonRun(goal: LessonGoal = { check: check('reward/accuracy>=0.5'), budget: 12 }) {
  const { manager, workers } = setUp();
  const run = await manager.create(lmSpec, { note: 'lesson', origin: 'lesson-a#grpo-copy', goal });
  await manager.start(run);
  return { manager, worker: workers[0]!, run };
}

describe('a lesson run held to its goal', () => {
  it('pauses at its budget without its widget, once: started again it trains on', async () => {
    const { manager, worker, run } = await lessonRun();
    worker.send(updates(1, 11, 0));
    expect(run.status).toBe('running');
    worker.send(updates(12, 13, 0)); // a batch past the budget
    await vi.waitFor(() => expect(run.status).toBe('paused'));
    expect(worker.calls.filter((c) => c === 'pause')).toHaveLength(1);
    expect(run.stoppedBy).toBe('budget');
    expect(goalStopText('budget', run.goal!)).toBe(
      "Paused at its lesson's budget of 12 updates, the check not passed. Start trains on.",
    );
    await manager.start(run);
    expect(run.stoppedBy).toBeUndefined();
    worker.send(updates(14, 20, 0));
    await wait(0);
    expect(run.status).toBe('running');
    expect(worker.calls.filter((c) => c === 'pause')).toHaveLength(1);
  });

  it('pauses when its check first passes, and not again once started past it', async () => {
    const { manager, worker, run } = await lessonRun();
    worker.send(updates(1, 9, 1)); // 9 values: the check reads 10
    expect(run.checkPassedAt).toBeUndefined();
    worker.send(updates(10, 10, 1));
    expect(run.checkPassedAt).toBe(10);
    await vi.waitFor(() => expect(run.status).toBe('paused'));
    expect(run.stoppedBy).toBe('check');
    expect(goalStopText('check', run.goal!, run.checkPassedAt)).toBe(
      'Paused by its lesson: the check passed at update 10. Start trains on.',
    );
    await manager.start(run);
    worker.send(updates(11, 14, 1)); // past the budget too: its goal is met
    await wait(0);
    expect(run.status).toBe('running');
    expect(worker.calls.filter((c) => c === 'pause')).toHaveLength(1);
  });

  it('names the update where its check first passed inside a batch, not where the batch ended', async () => {
    // A tabular run sends hundreds of updates in one batch: the check passes at update 19 (the
    // last 10 hold five 1s from there), the batch runs on to 40.
    const { worker, run } = await lessonRun({ check: check('reward/accuracy>=0.5') });
    worker.send(updates(1, 3, 0));
    worker.send(batch(points(4, 14, 0), points(15, 40, 1)));
    await vi.waitFor(() => expect(run.status).toBe('paused'));
    expect(run.checkPassedAt).toBe(19);
    expect(run.steps).toBe(40);
  });

  it("reads a grid run's path check from its worker and pauses when the path is short enough", async () => {
    const grid: GridInspection = {
      kind: 'grid',
      algorithm: 'q-learning',
      step: 1,
      rows: 1,
      cols: 2,
      cells: ['floor', 'goal'],
      start: 0,
      values: [0, 0],
      moves: [
        [0, 0], // stuck at the start
        [0, 0],
      ],
    };
    const { manager, workers } = setUp({ inspection: grid });
    const goal = lessonGoal('q-learning-cliff', check('path<=13'));
    const run = await manager.create(spec, { note: 'lesson', origin: 'lesson-q#q', goal });
    await manager.start(run);
    const worker = workers[0]!;
    const episode = (step: number): RunMessage => ({
      type: 'update',
      points: [{ step, metrics: { 'charts/episodic_return': -20 } }],
      events: [],
      config: spec.config,
    });
    worker.send(episode(1));
    await vi.waitFor(() => expect(worker.calls).toContain('inspect'));
    await wait(0);
    expect(run.status).toBe('running');
    grid.step = 2;
    grid.moves[0] = [0, 1]; // one step right: the goal
    worker.send(episode(2));
    await vi.waitFor(() => expect(run.status).toBe('paused'));
    expect(run.checkPassedAt).toBe(2);
    expect(run.stoppedBy).toBe('check');
  });

  it('never pauses a run of the lab or of a lesson with no goal', async () => {
    const { manager, workers } = setUp();
    const run = await manager.create(lmSpec);
    await manager.start(run);
    workers[0]!.send(updates(1, 100, 1));
    await wait(0);
    expect(run.status).toBe('running');
    expect(workers[0]!.calls).not.toContain('pause');
  });

  it('trains on when the reader leaves short of its budget; parked when it has no stop ahead', async () => {
    const { manager, worker, run } = await lessonRun();
    worker.send(updates(1, 5, 0));
    await manager.leave(run);
    expect(run.status).toBe('running');
    worker.send(updates(6, 12, 0));
    await vi.waitFor(() => expect(run.status).toBe('paused'));
    await manager.start(run); // the reader trains it on past its budget, then leaves
    await manager.leave(run);
    expect(run.status).toBe('stored');
    expect(worker.calls.slice(-2)).toEqual(['dispose', 'terminate']);

    // A grid run has no budget: left running, it would train on for ever.
    const grid = setUp();
    const goal = lessonGoal('q-learning-cliff', check('path<=13'));
    const tabular = await grid.manager.create(spec, { note: 'lesson', origin: 'lesson-q#q', goal });
    await grid.manager.start(tabular);
    await grid.manager.leave(tabular);
    expect(tabular.status).toBe('stored');
  });

  it('keeps its goal and where its check passed across a reload', async () => {
    const { store } = memoryStore();
    const first = setUp({}, store);
    const goal = { check: check('reward/accuracy>=0.5'), budget: 12 };
    const run = await first.manager.create(lmSpec, { note: 'lesson', origin: 'lesson-a#w', goal });
    await first.manager.start(run);
    first.workers[0]!.send(updates(1, 10, 1));
    await vi.waitFor(() => expect(run.status).toBe('paused'));
    await wait(10);
    const second = setUp({}, store);
    await second.manager.restore();
    const back = second.manager.forOrigin('lesson-a#w')!;
    expect(back.goal).toEqual(goal);
    expect(back.checkPassedAt).toBe(10);
  });

  it('gives a language-model preset its budget and other presets none', () => {
    const accuracy = check('reward/accuracy>=0.5');
    expect(lessonGoal('grpo-copy', accuracy)).toEqual({
      check: accuracy,
      budget: presetBudget('grpo-copy'),
    });
    const converged = check('values/converged>=1');
    expect(lessonGoal('value-iteration-gridworld', converged)).toEqual({ check: converged });
  });
});
