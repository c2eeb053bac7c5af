import { describe, expect, it } from 'vitest';
import { RunDraft } from '../../src/state/run-draft.svelte';
import { MAX_POINTS } from '../../src/state/runs.svelte';
import type { StoredRun } from '../../src/state/run-store';
import type { FieldError, Inspection } from '../../src/worker/run-protocol';
import { TrainingSlots } from '../../src/state/training-slots';
import { checkRunSpec, runCatalog } from '../../src/worker/run-spec';
import { catalog, memoryStore, oneUpdate, setUp, spec, wait } from './run-fakes';

describe('RunManager', () => {
  it('creates a run in its own worker and shows its status and backend', async () => {
    const { manager, workers } = setUp();
    const run = await manager.create(spec);
    expect(run.label).toBe('#1 q-learning on cliffwalking, seed 1');
    expect(run.status).toBe('idle');
    expect(run.backend).toEqual({ kind: 'cpu', line: 'CPU — test' });
    expect(run.error).toBeUndefined();
    expect(workers).toHaveLength(1);
    expect(run.spec).toEqual(spec);
    expect(run.spec).not.toBe(spec);
  });

  it('shows a reward model being trained, hands the run over at once, and forgets it on reset', async () => {
    const { manager, workers } = setUp();
    let added: unknown;
    const run = await manager.create(spec, { onAdded: (r) => (added = r) });
    expect(added).toBe(run); // before the worker was built: its set-up can be shown meanwhile
    workers[0]!.send({ type: 'reward-model', done: 3, total: 30 });
    expect(run.rewardModel).toEqual({ done: 3, total: 30 });
    const report = {
      pairs: 46,
      heldOutPairs: 9,
      firstLoss: 0.67,
      lastLoss: 0.28,
      heldOutAccuracy: 7 / 9,
      mean: 0,
      std: 1.6,
    };
    workers[0]!.send({ type: 'reward-model', done: 30, total: 30, report });
    expect(run.rewardModel).toEqual({ done: 30, total: 30, report });
    await manager.reset(run);
    expect(run.rewardModel).toBeUndefined();
  });

  it('marks a run failed when its worker dies, keeps its data, and resumes it in a new worker', async () => {
    const { manager, workers } = setUp({ pauseHangs: true });
    const run = await manager.create(spec);
    await manager.start(run);
    workers[0]!.send({
      type: 'update',
      points: [1, 2, 3].map((step) => ({ step, metrics: { 'charts/episodic_return': -step } })),
      events: [],
      config: spec.config,
    });
    expect(run.status).toBe('running');
    // Pause waits on a worker that will never answer; then the worker's error event comes.
    const pausing = manager.pause(run);
    expect(run.busy).toBe(true);
    workers[0]!.die('Uncaught RangeError: out of memory');
    await pausing; // settles: the pending call was rejected
    expect(run.busy).toBe(false);
    expect(run.status).toBe('error');
    expect(run.failure).toBe('Uncaught RangeError: out of memory');
    expect(run.error).toBe(
      'Its worker stopped (Uncaught RangeError: out of memory). Its 3 updates are kept; Resume ' +
        'brings it back: it replays its 3 updates.',
    );
    expect(run.port).toBeUndefined();
    expect(workers[0]!.calls.at(-1)).toBe('terminate');
    expect(run.series['charts/episodic_return']).toEqual({ x: [1, 2, 3], y: [-1, -2, -3] });
    // A late message from the dead worker changes nothing.
    workers[0]!.send({ type: 'status', status: 'running' });
    expect(run.status).toBe('error');

    await manager.start(run);
    expect(workers).toHaveLength(2);
    expect(workers[1]!.calls.slice(0, 2)).toEqual([
      'createRun replay {"steps":3,"changes":[]}',
      'start',
    ]);
    expect(run.status).toBe('running');
    expect(run.failure).toBeUndefined();
    expect(run.error).toBeUndefined();
  });

  it('rejects a call made to a worker that died before it', async () => {
    const { manager, workers } = setUp();
    const run = await manager.create(spec);
    const port = run.port!;
    workers[0]!.die('its script failed to load or it crashed');
    await expect(port.api.pause()).rejects.toThrow(/Its worker stopped \(its script failed/);
    expect(workers[0]!.calls).not.toContain('pause');
  });

  it("shows the worker's note on the run's set-up", async () => {
    const { manager, workers } = setUp();
    const run = await manager.create(spec);
    expect(run.note).toBeUndefined();
    workers[0]!.send({ type: 'note', text: 'This ONNX file has no checksum' });
    expect(run.note).toBe('This ONNX file has no checksum');
  });

  it("keeps metrics named after Object.prototype's members as their own series", async () => {
    const { manager, workers } = setUp();
    const run = await manager.create(spec);
    workers[0]!.send({
      type: 'update',
      points: [{ step: 1, metrics: { constructor: 1, toString: 2, hasOwnProperty: 3 } }],
      events: [],
      config: { epsilon: 0.3, initialQ: 0 },
    });
    expect(Object.hasOwn(run.series, 'constructor')).toBe(true);
    expect(run.series.constructor).toEqual({ x: [1], y: [1] });
    expect(run.series.toString).toEqual({ x: [1], y: [2] });
    expect(run.series.hasOwnProperty).toEqual({ x: [1], y: [3] });
  });

  it('accumulates metric batches into per-metric series with x = update', async () => {
    const { manager, workers } = setUp();
    const run = await manager.create(spec);
    const before = run.series;
    workers[0]!.send({
      type: 'update',
      points: [
        { step: 1, metrics: { 'charts/episodic_return': -100, 'losses/td_error': 1 } },
        { step: 2, metrics: { 'charts/episodic_return': -50 } },
      ],
      events: [{ step: 2, kind: 'hyperparams', changes: { epsilon: 0.3 } }],
      config: { epsilon: 0.3, initialQ: 0 },
    });
    expect(run.series).not.toBe(before); // a new container: the chart sees the change
    expect(run.series['charts/episodic_return']).toEqual({ x: [1, 2], y: [-100, -50] });
    expect(run.series['losses/td_error']).toEqual({ x: [1], y: [1] });
    expect(run.steps).toBe(2);
    expect(run.config.epsilon).toBe(0.3);
    workers[0]!.send({
      type: 'update',
      points: [{ step: 3, metrics: { 'charts/episodic_return': -20 } }],
      events: [{ step: 3, kind: 'skipped-update', reason: 'non-finite' }],
      config: { epsilon: 0.3, initialQ: 0 },
    });
    expect(run.series['charts/episodic_return']!.x).toEqual([1, 2, 3]);
    expect(run.events).toHaveLength(2);
    expect(run.changes).toEqual([{ step: 2, kind: 'hyperparams', changes: { epsilon: 0.3 } }]);
  });

  it('keeps long histories bounded by merging neighbours', async () => {
    const { manager, workers } = setUp();
    const run = await manager.create(spec);
    const points = Array.from({ length: MAX_POINTS * 3 }, (_, i) => ({
      step: i + 1,
      metrics: { m: 1 },
    }));
    workers[0]!.send({ type: 'update', points, events: [], config: {} });
    const s = run.series.m!;
    expect(s.x.length).toBeLessThanOrEqual(MAX_POINTS);
    expect(s.x.at(-1)).toBe(MAX_POINTS * 3);
    expect(s.y.every((y) => y === 1)).toBe(true);
    expect(s.x.every((x, i) => i === 0 || x > s.x[i - 1]!)).toBe(true);
  });

  it('runs four at once, each driven independently; a fifth is refused', async () => {
    const { manager, workers } = setUp();
    const runs = [];
    for (let seed = 1; seed <= 4; seed++) runs.push(await manager.create({ ...spec, seed }));
    await manager.start(runs[0]!);
    await manager.start(runs[2]!);
    await manager.pause(runs[2]!);
    await manager.step(runs[3]!);
    expect(runs.map((r) => r.status)).toEqual(['running', 'idle', 'paused', 'idle']);
    expect(workers.map((w) => w.calls.slice(1))).toEqual([
      ['start'],
      [],
      ['start', 'pause'],
      ['step'],
    ]);
    await expect(manager.create(spec)).rejects.toThrow('at most 4 runs at once');
    expect(new Set(runs.map((r) => r.color)).size).toBe(4);
  });

  it('puts a refused run in error with the worker message', async () => {
    const { manager } = setUp({ refuse: 'alpha must be a number in (0, 1], got 2' });
    const run = await manager.create(spec);
    expect(run.status).toBe('error');
    expect(run.error).toBe('alpha must be a number in (0, 1], got 2');
    expect(run.busy).toBe(false);
  });

  it('keeps an error the worker reported during a command', async () => {
    const { manager, workers } = setUp();
    const run = await manager.create(spec);
    workers[0]!.port.api.step = async () => {
      workers[0]!.send({ type: 'status', status: 'error', error: 'run is unhealthy: 5 skipped' });
    };
    await manager.step(run);
    expect(run.status).toBe('error');
    expect(run.error).toBe('run is unhealthy: 5 skipped');
  });

  it('passes live changes through and returns refusals as text', async () => {
    const { manager, workers } = setUp();
    const run = await manager.create(spec);
    expect(await manager.setHyperparams(run, { epsilon: 0.3 })).toEqual({
      ok: true,
      appliesAt: 1,
    });
    expect(await manager.setHyperparams(run, { epsilon: 2 })).toEqual({
      ok: false,
      error: 'q-learning: epsilon must be a number in [0, 1], got 2',
    });
    expect(await manager.setHyperparams(run, { boom: 1 })).toEqual({
      ok: false,
      error: 'worker gone',
    });
    expect(workers[0]!.calls).toContain('set {"epsilon":0.3}');
  });

  it('duplicates a run with one change, leaving the original alone', async () => {
    const { manager } = setUp();
    const run = await manager.create(spec);
    const copy = await manager.duplicate(run, { initialQ: 1 });
    expect(copy.spec.config).toEqual({ epsilon: 0.1, initialQ: 1 });
    expect(run.spec.config).toEqual({ epsilon: 0.1, initialQ: 0 });
    expect(copy.label).toBe('#2 q-learning on cliffwalking, seed 1 (copy of #1, initialQ=1)');
    expect(manager.runs).toEqual([run, copy]);
  });

  it('resets a run to update 0: a fresh worker from its spec, metrics and changes cleared', async () => {
    const { manager, workers } = setUp();
    const run = await manager.create(spec);
    workers[0]!.send({
      type: 'update',
      points: [{ step: 1, metrics: { m: 1 } }],
      events: [{ step: 1, kind: 'hyperparams', changes: { epsilon: 0.3 } }],
      config: { epsilon: 0.3, initialQ: 0 },
    });
    expect(run.steps).toBe(1);
    await manager.reset(run);
    expect(workers[0]!.calls.slice(-2)).toEqual(['dispose', 'terminate']);
    expect(workers).toHaveLength(2);
    expect(workers[1]!.calls).toEqual(['createRun']); // no replay: from scratch
    expect(run.steps).toBe(0);
    expect(run.series).toEqual({});
    expect(run.events).toEqual([]);
    expect(run.config).toEqual({ epsilon: 0.1, initialQ: 0 });
    expect(run.status).toBe('idle');
    expect(manager.runs).toEqual([run]); // the same run, label and colour kept
  });

  it('deletes a run: disposes it, ends its worker, even if dispose fails', async () => {
    const { manager, workers } = setUp({ disposeThrows: true });
    const a = await manager.create(spec);
    const b = await manager.create(spec);
    await manager.remove(a);
    expect(manager.runs).toEqual([b]);
    expect(workers[0]!.calls.slice(-2)).toEqual(['dispose', 'terminate']);
    expect(manager.get(b.id)).toBe(b);
    expect(manager.get(a.id)).toBeUndefined();
  });

  it('hands each worker its turns at training, and a deleted run’s turn goes to the next', async () => {
    const { manager, workers } = setUp({}, undefined, new TrainingSlots(1));
    expect(manager.trainingAtOnce).toBe(1);
    const a = await manager.create(spec);
    await manager.create(spec);
    const [turnsA, turnsB] = workers.map((w) => w.received.turns!);
    expect(await turnsA!.take()).toBe(true);
    let bGranted = false;
    const bTurn = turnsB!.take().then((granted) => (bGranted = granted));
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(bGranted).toBe(false); // the one slot is a's
    await manager.remove(a); // a's worker ends mid-turn
    await bTurn;
    expect(bGranted).toBe(true);
    // Without slots, workers train freely: no turns are passed.
    const free = setUp();
    await free.manager.create(spec);
    expect(free.workers[0]!.received.turns).toBeUndefined();
    expect(free.manager.trainingAtOnce).toBeUndefined();
  });

  it('loads the catalog once', async () => {
    const { manager } = setUp();
    await manager.loadCatalog();
    expect(manager.catalog?.algorithms.map((a) => a.name)).toEqual(['q-learning', 'grpo']);
  });
});

describe('RunDraft', () => {
  it('starts from an algorithm and its defaults, and resets them on a new pick', () => {
    const draft = new RunDraft(catalog, { algo: 'q-learning', env: 'cliffwalking' });
    draft.config.epsilon = 0.5;
    expect(draft.spec).toEqual({ ...spec, config: { epsilon: 0.5, initialQ: 0 } });
    draft.select('grpo');
    expect(draft.spec).toEqual({
      algo: 'grpo',
      task: 'reverse',
      taskOptions: { maxLength: 6 },
      sftSteps: 100,
      seed: 1,
      config: { lr: 1e-3, maxNewTokens: 8 },
      backend: 'auto',
    });
  });

  it('names the reference engine only when the run scores a reference (KL on)', () => {
    const draft = new RunDraft(catalog, { algo: 'grpo' });
    draft.reference = 'ort';
    expect(draft.usesReference).toBe(false);
    expect(draft.spec.reference).toBeUndefined();
    draft.config.klCoef = 0.05;
    expect(draft.usesReference).toBe(true);
    expect(draft.spec.reference).toBe('ort');
    draft.select('q-learning');
    expect(draft.usesReference).toBe(false);
  });

  it('trains a reward model only when asked, and weighs its score while it is on', () => {
    const draft = new RunDraft(catalog, { algo: 'grpo' });
    draft.config.rewardModelWeight = 0; // as the real catalog's default
    expect(draft.offersRewardModel).toBe(true);
    expect(draft.spec.rewardModel).toBeUndefined();
    draft.useRewardModel(true);
    draft.rewardModel.steps = 10;
    expect(draft.config.rewardModelWeight).toBe(1); // trained to be used
    expect(draft.spec.rewardModel).toEqual({
      prompts: 128,
      samplesPerPrompt: 4,
      labelNoise: 0,
      steps: 10,
      pairsPerStep: 32,
      lr: 1e-3,
    });
    draft.config.rewardModelWeight = 0.5;
    draft.useRewardModel(true);
    expect(draft.config.rewardModelWeight).toBe(0.5); // a weight the user set is kept
    draft.useRewardModel(false);
    expect(draft.config.rewardModelWeight).toBe(0); // a run without one must weigh it 0
    expect(draft.spec.rewardModel).toBeUndefined();
    draft.select('q-learning');
    expect(draft.offersRewardModel).toBe(false);
  });

  it('keeps a retained task, with the options a shipped start was warmed up on for it', () => {
    const real = runCatalog();
    const draft = new RunDraft(real, { algo: 'grpo' });
    draft.selectTask('shopping');
    expect(draft.offersRetained).toBe(true);
    expect(draft.spec.retained).toBeUndefined();
    draft.useRetained('multiply');
    expect(draft.config.retainedEvalPrompts).toBe(32); // kept to be watched
    expect(draft.spec.retained).toEqual({ task: 'multiply' }); // a new model: the defaults
    draft.selectStart('shipped:shopping');
    const warmUp = real.startingModels.find((m) => m.name === 'shopping')!.warmUp!;
    expect(warmUp.map((p) => p.task)).toEqual(['shopping', 'shopping', 'multiply']);
    expect(draft.spec.retained).toEqual({
      task: 'multiply',
      taskOptions: warmUp.find((p) => p.task === 'multiply')!.taskOptions,
    });
    expect(draft.spec.retained?.taskOptions).toMatchObject({ minDigits: 1, maxDigits: 2 });
    draft.config.ptxCoef = 1;
    expect(checkRunSpec(draft.spec)).toEqual([]);
    draft.useRetained('');
    expect([draft.config.ptxCoef, draft.config.retainedEvalPrompts]).toEqual([0, 0]);
    expect(draft.spec.retained).toBeUndefined();
    expect(checkRunSpec(draft.spec)).toEqual([]);
    draft.select('dpo');
    expect(draft.offersRetained).toBe(false);
  });

  it('offers a curriculum where the algorithm has one and the task has rungs', () => {
    const draft = new RunDraft(catalog, { algo: 'grpo' });
    draft.selectTask('reverse');
    expect(draft.offersCurriculum).toBe(true);
    expect(draft.spec.curriculum).toBeUndefined();
    expect(draft.spec.taskOptions).toEqual({ maxLength: 6 });
    draft.curriculumOn = true;
    draft.curriculum.threshold = 0.6;
    draft.curriculum.patience = 3;
    // The rungs set the task's options, so the spec carries none.
    expect(draft.spec.curriculum).toEqual({ threshold: 0.6, patience: 3 });
    expect(draft.spec.taskOptions).toBeUndefined();
    // One rung only (multiply here): nothing to climb, so no curriculum even if it was ticked.
    draft.selectTask('multiply');
    expect(draft.offersCurriculum).toBe(false);
    expect(draft.spec.curriculum).toBeUndefined();
    draft.selectTask('reverse');
    draft.select('q-learning');
    expect(draft.offersCurriculum).toBe(false);
  });

  it('falls back to the first environment the algorithm accepts', () => {
    expect(new RunDraft(catalog, { algo: 'q-learning', env: 'cartpole' }).env).toBe('gridworld');
  });

  it('keeps only the latest check, and reports errors by field', async () => {
    const draft = new RunDraft(catalog);
    let resolveSlow: (errors: FieldError[]) => void = () => {};
    const slow = draft.validate(() => new Promise((resolve) => (resolveSlow = resolve)));
    const fresh = draft.validate(async () => [{ field: 'epsilon', message: 'epsilon bad' }]);
    expect(await fresh).toBe(false);
    resolveSlow([]);
    await slow;
    expect(draft.errorOf('epsilon')).toBe('epsilon bad');
    expect(draft.errorOf('initialQ')).toBeUndefined();
  });
});

const storedRun: StoredRun = {
  version: 1,
  id: 'run-3',
  label: '#3 q-learning on cliffwalking, seed 1',
  color: '#2f5bea',
  spec,
  series: { 'charts/episodic_return': { x: [1, 2, 3], y: [-100, -60, -30] } },
  events: [{ step: 2, kind: 'hyperparams', changes: { epsilon: 0.3 } }],
  config: { epsilon: 0.3, initialQ: 0 },
  steps: 3,
  backendLine: 'CPU — test',
  savedAt: '2026-12-02T00:00:00.000Z',
};

describe('RunManager: keeping runs', () => {
  it('saves a run after its updates, and forgets it when deleted', async () => {
    const { store, runs, removed } = memoryStore();
    const { manager, workers } = setUp({}, store);
    const run = await manager.create(spec);
    workers[0]!.send(oneUpdate(-80));
    await wait(10);
    expect(runs.get(run.id)).toMatchObject({
      id: 'run-1',
      steps: 1,
      spec,
      series: { 'charts/episodic_return': { x: [1], y: [-80] } },
      backendLine: 'CPU — test',
    });
    await manager.remove(run);
    expect(removed).toEqual(['run-1']);
    expect(runs.size).toBe(0);
  });

  it('saves at once when a run pauses, not after the wait between saves of a running run', async () => {
    const { store, runs } = memoryStore();
    const { manager, workers } = setUp({}, store, undefined, 60_000);
    const run = await manager.create(spec);
    await wait(10);
    await manager.start(run);
    workers[0]!.send(oneUpdate(-80));
    await wait(10);
    expect(runs.get(run.id)!.steps).toBe(0); // the update's save waits its 60 s
    await manager.pause(run);
    await wait(10);
    expect(runs.get(run.id)!.steps).toBe(1);
  });

  it('a pause resolves only once the last update is stored, however slow the inspection', async () => {
    const { store, runs } = memoryStore();
    const { manager, workers } = setUp({ inspectMs: 1500 }, store, undefined, 60_000);
    const run = await manager.create(spec);
    await manager.start(run);
    workers[0]!.send(oneUpdate(-80));
    workers[0]!.send({
      ...oneUpdate(-70),
      points: [{ step: 2, metrics: { 'charts/episodic_return': -70 } }],
    });
    expect(run.steps).toBe(2);
    await manager.pause(run);
    // No wait: a reload now must find both updates, though the inspection is 1.5 s away.
    expect(runs.get(run.id)).toMatchObject({ steps: 2 });
    expect(runs.get(run.id)!.series['charts/episodic_return']!.y).toEqual([-80, -70]);
  });

  it('stores a run with its last update’s inspection the moment it says paused', async () => {
    const { store, runs } = memoryStore();
    const last: Inspection = {
      kind: 'grid',
      algorithm: 'q-learning',
      step: 2,
      rows: 1,
      cols: 2,
      cells: ['floor', 'goal'],
      start: 0,
      values: [0.5, 0],
      moves: [
        [0, 1],
        [0, 0],
      ],
    };
    // A worker slow to answer inspect(): the page must not need to ask.
    const { manager, workers } = setUp({ inspectMs: 1500 }, store, undefined, 60_000);
    const run = await manager.create(spec);
    await manager.start(run);
    workers[0]!.send(oneUpdate(-80));
    workers[0]!.send({
      ...oneUpdate(-70),
      points: [{ step: 2, metrics: { 'charts/episodic_return': -70 } }],
    });
    // A lesson goal pauses the run in its worker: no pause() from the page to wait on.
    workers[0]!.send({ type: 'inspections', last, earlier: [] });
    workers[0]!.send({ type: 'status', status: 'paused' });
    expect(run.status).toBe('paused');
    // A reload in the same breath finds the update it showed, and its samples.
    expect(runs.get(run.id)).toMatchObject({ steps: 2, inspection: { step: 2 } });
  });

  it('restores stored runs without workers, and replays one when it is started', async () => {
    const { store } = memoryStore([storedRun]);
    const { manager, workers } = setUp({}, store);
    await manager.restore();
    const [run] = manager.runs;
    expect(run!.status).toBe('stored');
    expect(run!.series).toEqual(storedRun.series);
    expect(workers).toHaveLength(0);
    await manager.start(run!);
    expect(workers).toHaveLength(1);
    expect(workers[0]!.calls).toEqual([
      'createRun replay {"steps":3,"changes":[{"step":2,"changes":{"epsilon":0.3}}]}',
      'start',
    ]);
    expect(run!.status).toBe('running');
    // New runs number on after the stored ones.
    expect((await manager.create(spec)).id).toBe('run-4');
  });

  it('forks at a step: metrics and events up to it, replayed from there when started', async () => {
    const { store } = memoryStore([storedRun]);
    const { manager, workers } = setUp({}, store);
    await manager.restore();
    const fork = manager.fork(manager.runs[0]!, 1);
    expect(fork.label).toBe('#4 fork of #3 at update 1');
    expect(fork.status).toBe('stored');
    expect(fork.series).toEqual({ 'charts/episodic_return': { x: [1], y: [-100] } });
    expect(fork.events).toEqual([]);
    expect(fork.config).toEqual({ epsilon: 0.1, initialQ: 0 });
    await manager.step(fork);
    expect(workers[0]!.calls).toEqual(['createRun replay {"steps":1,"changes":[]}', 'step']);
    expect(() => manager.fork(manager.runs[0]!, 4)).toThrow(/\[0, 3\], got 4/);
  });

  it('counts only runs with workers against the limit', async () => {
    const stored = [1, 2, 3, 4, 5].map((n) => ({ ...storedRun, id: `run-${n}` }));
    const { store } = memoryStore(stored);
    const { manager } = setUp({}, store);
    await manager.restore();
    expect(manager.runs).toHaveLength(5);
    const run = await manager.create(spec);
    expect(run.status).toBe('idle');
  });

  it('parks a run: its worker ends, it stays as a stored run, and its place is free', async () => {
    const { store, runs: saved } = memoryStore();
    const { manager, workers } = setUp({}, store);
    const runs = [];
    for (let seed = 1; seed <= 4; seed++) runs.push(await manager.create({ ...spec, seed }));
    workers[0]!.send(oneUpdate(-90));
    await manager.start(runs[0]!);
    await expect(manager.create(spec)).rejects.toThrow('at most 4 runs at once');
    await manager.park(runs[0]!);
    expect(workers[0]!.calls.slice(-2)).toEqual(['dispose', 'terminate']);
    expect(runs[0]!.status).toBe('stored');
    expect(runs[0]!.series['charts/episodic_return']).toEqual({ x: [1], y: [-90] });
    await wait(10);
    expect(saved.get(runs[0]!.id)).toMatchObject({ steps: 1 });
    // The freed place takes a new run; the parked one trains again by replay.
    await manager.create({ ...spec, seed: 5 });
    await manager.park(runs[1]!);
    await manager.step(runs[0]!);
    expect(workers.at(-1)!.calls).toEqual(['createRun replay {"steps":1,"changes":[]}', 'step']);
    // Parking a run without a worker does nothing.
    await manager.park(runs[1]!);
    expect(runs[1]!.status).toBe('stored');
  });

  it("keeps a lesson widget's run by its origin: parked, reloaded, it is still the widget's", async () => {
    const { store, runs: saved } = memoryStore();
    const first = setUp({}, store);
    const run = await first.manager.create(spec, { note: 'lesson', origin: 'lesson-a#w1' });
    await first.manager.create({ ...spec, seed: 2 }, { note: 'lesson', origin: 'lesson-b#w1' });
    expect(first.manager.forOrigin('lesson-a#w1')).toBe(run);
    first.workers[0]!.send(oneUpdate(-70));
    await first.manager.park(run);
    expect(first.manager.forOrigin('lesson-a#w1')).toBe(run); // parked, still found
    await wait(10);
    expect(saved.get(run.id)).toMatchObject({ origin: 'lesson-a#w1', steps: 1 });
    // A reload: a new manager finds it among the stored runs, with its updates.
    const second = setUp({}, store);
    await second.manager.restore();
    const back = second.manager.forOrigin('lesson-a#w1');
    expect(back).toMatchObject({ id: run.id, status: 'stored', steps: 1, origin: 'lesson-a#w1' });
    expect(back!.series['charts/episodic_return']).toEqual({ x: [1], y: [-70] });
    expect(second.manager.forOrigin('lesson-c#w1')).toBeUndefined();
  });

  it("keeps the last update's inspection with a parked run, saved, and shows it once stored", async () => {
    const inspection: Inspection = {
      kind: 'grid',
      algorithm: 'q-learning',
      step: 1,
      rows: 1,
      cols: 2,
      cells: ['floor', 'goal'],
      start: 0,
      values: [0.5, 0],
      moves: [
        [0, 1],
        [0, 0],
      ],
    };
    const { store, runs: saved } = memoryStore();
    const first = setUp({ inspection }, store);
    const run = await first.manager.create(spec);
    first.workers[0]!.send(oneUpdate(-70));
    await first.manager.park(run); // reads the last update before ending the worker
    expect(first.workers[0]!.calls.slice(-3)).toEqual(['inspect', 'dispose', 'terminate']);
    expect(run.inspection).toEqual(inspection);
    expect(await first.manager.inspect(run)).toEqual(inspection); // stored: what it kept
    await wait(10);
    expect(saved.get(run.id)!.inspection).toEqual(inspection);
    const second = setUp({}, store);
    await second.manager.restore();
    expect(await second.manager.inspect(second.manager.runs[0]!)).toEqual(inspection);
    // Back to update 0: nothing of the old history is kept.
    await second.manager.reset(second.manager.runs[0]!);
    expect(second.manager.runs[0]!.inspection).toBeUndefined();
  });

  it('keeps the inspection an imported run file carried, saved with the run', async () => {
    const inspection: Inspection = {
      kind: 'cartpole',
      algorithm: 'ppo-mlp',
      step: 1,
      x: [0, 0.01],
      theta: [0.02, 0.03],
      steps: 1,
      end: 'fell',
    };
    const { store, runs: saved } = memoryStore();
    const { manager } = setUp({}, store);
    const data = { series: {}, events: [], config: { ...spec.config }, steps: 1 };
    const run = manager.addStored(spec, (n) => `#${n} imported`, { ...data, inspection });
    expect(run.inspection).toEqual(inspection);
    expect(await manager.inspect(run)).toEqual(inspection); // stored: no worker asked
    await wait(10);
    expect(saved.get(run.id)!.inspection).toEqual(inspection);
    expect(manager.addStored(spec, (n) => `#${n} plain`, data).inspection).toBeUndefined();
  });

  it('parks the oldest idle lesson run when a lesson opens one at the limit', async () => {
    const { manager, workers } = setUp();
    const lessonRuns = [];
    for (let n = 1; n <= 3; n++) {
      lessonRuns.push(
        await manager.create({ ...spec, seed: n }, { note: 'lesson', origin: `l#w${n}` }),
      );
    }
    await manager.start(lessonRuns[0]!); // trains on: an idle one goes first
    await manager.create({ ...spec, seed: 9 }); // the lab's own run: never parked for a lesson
    await expect(manager.create(spec)).rejects.toThrow('at most 4 runs at once');
    const opened = await manager.create(spec, { note: 'lesson', origin: 'l#w9' });
    expect(opened.status).toBe('idle');
    expect(lessonRuns.map((r) => r.status)).toEqual(['running', 'stored', 'idle']);
    expect(workers[1]!.calls.slice(-2)).toEqual(['dispose', 'terminate']);
  });

  it('shows which part of an update is under way, cleared when the run stops', async () => {
    const { manager, workers } = setUp();
    const run = await manager.create(spec);
    await manager.start(run);
    workers[0]!.send({ type: 'phase', phase: 'generating', update: 1 });
    expect(run.phase).toEqual({ phase: 'generating', update: 1 });
    workers[0]!.send({ type: 'phase', phase: 'updating', update: 1 });
    expect(run.phase).toEqual({ phase: 'updating', update: 1 });
    await manager.pause(run);
    expect(run.phase).toBeUndefined();
  });

  it('says why runs are not kept when storage is unavailable', () => {
    const { manager } = setUp({}, { ...memoryStore().store, unavailable: 'no IndexedDB' });
    expect(manager.storageNote).toBe('no IndexedDB');
  });
});

describe('RunDraft: task options', () => {
  it('fills the task options from their defaults and applies what an agent task needs', () => {
    const draft = new RunDraft(catalog, { algo: 'grpo' });
    expect(draft.spec).toMatchObject({ task: 'reverse', taskOptions: { maxLength: 6 } });
    expect(draft.config.maxNewTokens).toBe(8);
    draft.selectTask('multiply');
    expect(draft.spec).toMatchObject({
      task: 'multiply',
      taskOptions: { useTools: true },
      sftSteps: 400,
      config: { maxNewTokens: 32 },
    });
    draft.selectTask('reverse');
    expect(draft.sftSteps).toBe(100);
    expect(draft.spec.taskOptions).toEqual({ maxLength: 6 });
  });
});
