/**
 * One training run inside a worker: builds the trainer from the registry, trains in slices so
 * control messages (pause, live changes) get through between updates, and streams metrics to the
 * UI in batches. run.worker.ts exposes it; tests drive it directly in Node.
 */
import { algorithm } from '../rl/registry';
import { timedUpdate, type Metrics, type Trainer } from '../rl/trainer';
import { GoalWatch } from './run-goal';
import { keepUpdate } from './kept-updates';
import { checkpointProblem, type RunCheckpoint } from './run-checkpoint';
import { envCheckpointTaker, resumeEnvRun } from './env-checkpoint';
import { envOnnxExporter } from './env-export';
import { setUpLmRun, type LmRun, type LmRunOptions } from './lm-setup';
import { bucketPoints } from './metric-buckets';
import type {
  HyperparamResult,
  Inspection,
  KeptInspection,
  MetricPoint,
  ReplayPlan,
  RunListener,
  RunMessage,
  RunGoal,
  RunSpec,
  RunWorkerApi,
  Settings,
  TrainingTurns,
} from './run-protocol';
import { checkRunSpec, withDefaultSettings } from './run-spec';
import { hasTrainer, RunLife, type RunActivity } from './run-state';
import { errorText } from '../util/error-text';

export interface RunHostOptions {
  /** Metrics are sent at most once per this many ms (20 messages/s at the default 50). */
  flushMs?: number;
  /** Train this long before yielding to the worker's message loop. */
  sliceMs?: number;
  /** Most points per message; faster runs are averaged into this many buckets. */
  maxPoints?: number;
  /**
   * Language-model runs: where onnxruntime-web (`reference: 'ort'`) and shipped checkpoints come
   * from. Browsers leave it out (Vite serves both); Node passes nodeOrtOptions() and a file reader.
   */
  lm?: LmRunOptions;
}

const macrotask = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** The checks a checkpoint passes before any model is built. */
function checkCheckpoint(checkpoint: RunCheckpoint, replay: ReplayPlan | undefined): void {
  const problem = checkpointProblem(checkpoint);
  if (problem) throw new Error(`checkpoint: ${problem}`);
  const target = replay?.steps ?? checkpoint.step;
  if (checkpoint.step > target) {
    throw new Error(`checkpoint: taken at update ${checkpoint.step}, after the run's ${target}`);
  }
}

export function createRunHost({
  flushMs = 50,
  sliceMs = 12,
  maxPoints = 200,
  lm,
}: RunHostOptions = {}): RunWorkerApi {
  let trainer: Trainer<Settings> | undefined;
  let listener: RunListener | undefined;
  let disposeModel = () => {};
  let exportModel: (() => Promise<Uint8Array>) | undefined;
  let takeCheckpoint: LmRun['checkpoint'] | undefined;
  /** The run's life (run-state.ts): every command reads and moves it. */
  const life = new RunLife();
  // Read through a call: the state changes across every await, so it must never be narrowed.
  const state = () => life.state;
  /** What the run's thread is doing now: a live change during an update waits for the next. */
  let activity: RunActivity = 'idle';
  let loop: Promise<void> = Promise.resolve();
  let points: MetricPoint[] = [];
  let sentEvents = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  /** The lesson goal of the current start, judged after each of its updates. */
  let goal: GoalWatch | undefined;
  /** When metrics were last sent (performance.now()). */
  let lastFlush = -Infinity;
  // Work that must not interleave with an update (it may use the model): run between updates.
  let betweenUpdates: (() => Promise<void>)[] = [];
  /** The lab's turns at training (none: train freely, as in Node). */
  let turns: TrainingTurns | undefined;
  /** Between-update work started while the loop waited for a turn. */
  let boundaryWork: Promise<void> = Promise.resolve();
  /** Language models: updates kept for the inspector besides the last (kept-updates.ts). */
  let keepsUpdates = false;
  let kept: KeptInspection[] = [];
  /** The metric whose rise is kept: a lesson goal's, else the mean reward. */
  let keptMetric = 'reward/mean';
  /** That metric at the update before. */
  let keptPrevious: number | undefined;

  /** Offers the update just made to the kept updates: read (between updates) only if kept. */
  function keepThisUpdate(active: Trainer<Settings>, metrics: Metrics): void {
    if (!keepsUpdates || !active.inspect) return;
    const value = metrics[keptMetric];
    const gain =
      keptPrevious === undefined || value === undefined ? undefined : value - keptPrevious;
    if (value !== undefined) keptPrevious = value;
    kept = keepUpdate(
      kept,
      active.step,
      gain,
      () => {
        const read = active.inspect!();
        // A language model's inspection is read at once; one that is awaited is not kept.
        return read instanceof Promise ? undefined : (read as Inspection | undefined);
      },
      keptMetric,
    );
  }

  async function drainBetweenUpdates(): Promise<void> {
    const queued = betweenUpdates;
    betweenUpdates = [];
    for (const task of queued) await task();
  }

  /**
   * Runs `fn` when no update is in progress: now if idle or waiting for a turn (the loop awaits
   * it before its next update), else after the current update.
   */
  function atBoundary<T>(fn: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      betweenUpdates.push(() => fn().then(resolve, reject));
      if (state() !== 'training') void loop.then(drainBetweenUpdates);
      else if (activity === 'awaiting-turn') boundaryWork = boundaryWork.then(drainBetweenUpdates);
    });
  }

  const emit = (message: RunMessage) => {
    // A comlink-proxied listener returns a promise; a closed page must not break training.
    void Promise.resolve(listener?.(message)).catch(() => {});
  };

  function flush(): void {
    if (timer !== undefined) clearTimeout(timer);
    timer = undefined;
    lastFlush = performance.now();
    if (!trainer) return;
    const events = trainer.events.slice(sentEvents);
    if (points.length === 0 && events.length === 0) return;
    sentEvents = trainer.events.length;
    const sent = bucketPoints(points, maxPoints);
    emit({ type: 'update', points: sent, events, config: { ...trainer.config } });
    points = [];
  }

  async function updateOnce(active: Trainer<Settings>): Promise<Metrics> {
    activity = 'updating';
    let metrics;
    try {
      metrics = await timedUpdate(active);
    } finally {
      activity = 'idle';
    }
    points.push({ step: active.step, metrics });
    keepThisUpdate(active, metrics);
    // Sent now once flushMs has passed since the last batch. A timer cannot fire while the next
    // update holds the worker's thread: a language model's second-long update would then reach
    // the page only after the next one had finished too, and the reader, seeing an update behind,
    // made live changes that landed two or three updates after the one on the screen.
    const since = performance.now() - lastFlush;
    if (since >= flushMs) flush();
    else timer ??= setTimeout(flush, flushMs - since);
    return metrics;
  }

  /** The end of a pause, once the training loop has stopped: the last metrics, then 'paused'. */
  function finishPause(): void {
    flush();
    life.move('stopped');
    emit({ type: 'status', status: 'paused' });
  }

  /** An update or a step threw: the run fails (unless it is being disposed) and says why. */
  function fail(error: unknown): void {
    if (!life.can('fail')) return;
    life.move('fail');
    life.failure = errorText(error);
    flush();
    emit({ type: 'status', status: 'error', error: errorText(error) });
  }

  /**
   * Trains slice by slice until paused: a slice is updates until `sliceMs` has passed (at least
   * one), then a yield to the message loop. Where the lab hands out turns, each slice waits for
   * one, and its time is counted when it passes the turn on.
   */
  async function train(active: Trainer<Settings>): Promise<void> {
    try {
      let granted = await nextTurn();
      while (granted) {
        const sliceStart = performance.now();
        do {
          const metrics = await updateOnce(active);
          if (goal?.reached(active.step, metrics)) {
            goal = undefined; // reached: a later start brings its own
            life.move('pause'); // it pauses itself, as pause() would
          }
          await drainBetweenUpdates();
        } while (state() === 'training' && performance.now() - sliceStart <= sliceMs);
        const ms = performance.now() - sliceStart;
        await macrotask(); // a pause, an inspection or a live change comes in here
        granted = await nextTurn(ms);
      }
    } catch (error) {
      fail(error);
    } finally {
      activity = 'idle';
      await drainBetweenUpdates();
    }
    // Paused (by pause() or by the goal) rather than failed or disposed: say so.
    if (state() === 'pausing') finishPause();
  }

  /**
   * Whether to train another slice: without turns, while running; with them, once the lab grants
   * one (after `ms` of training, if this run held one). A paused run gives its turn back.
   */
  async function nextTurn(ms?: number): Promise<boolean> {
    if (!turns) return state() === 'training';
    if (state() !== 'training') {
      if (ms !== undefined) await giveBack(ms);
      return false;
    }
    activity = 'awaiting-turn';
    boundaryWork = boundaryWork.then(drainBetweenUpdates); // what came in before the wait
    const granted = await (ms === undefined ? turns.take() : turns.pass(ms));
    activity = 'idle';
    await boundaryWork; // an inspection or checkpoint answered during the wait
    if (granted && state() !== 'training') {
      await giveBack(0);
      return false;
    }
    return granted;
  }

  /** Ends a held turn after `ms` of training. A lab that has gone cannot take it: no failure. */
  function giveBack(ms: number): Promise<void> {
    return Promise.resolve(turns?.give(ms)).catch(() => {});
  }

  /** A pause while the run waits for a turn: stop waiting (the loop then ends). */
  function stopWaiting(): void {
    if (activity === 'awaiting-turn' && turns) void Promise.resolve(turns.cancel()).catch(() => {});
  }

  /**
   * Runs one-time work that trains (a warm-up, a reward model, a replay) on turns, as training
   * runs: it takes a turn first, passes it on at a `yieldPoint` once a slice of `sliceMs` has gone
   * by, and gives it back at the end, also on failure. Without turns (Node) it runs straight through.
   */
  async function onTurns<T>(work: (yieldPoint: () => Promise<void>) => Promise<T>): Promise<T> {
    const held = turns;
    if (!held) return work(async () => {});
    await held.take();
    let sliceStart = performance.now();
    try {
      return await work(async () => {
        if (performance.now() - sliceStart <= sliceMs) return;
        await held.pass(performance.now() - sliceStart);
        sliceStart = performance.now();
      });
    } finally {
      await giveBack(performance.now() - sliceStart);
    }
  }

  /**
   * Brings the run to update `plan.steps` with the recorded live changes (see ReplayPlan), from
   * where it is: update 0, or a checkpoint's step.
   */
  async function replayRun(active: Trainer<Settings>, plan: ReplayPlan): Promise<void> {
    if (active.step >= plan.steps) return;
    let lastReport = performance.now();
    await onTurns(async (yieldPoint) => {
      for (let step = active.step + 1; step <= plan.steps; step++) {
        for (const change of plan.changes) {
          if (change.step === step) active.setHyperparams(change.changes);
        }
        await active.update();
        if (performance.now() - lastReport > 200 || step === plan.steps) {
          emit({ type: 'replay', done: step, total: plan.steps });
          lastReport = performance.now();
          await macrotask();
        }
        if (step < plan.steps) await yieldPoint();
      }
    });
  }

  /** The trainer, for commands that update or change it; refused before it is built and after. */
  function requireTrainer(): Trainer<Settings> {
    if (state() === 'failed') {
      throw new Error(`the run failed (${life.failure ?? 'no reason given'}); start a new one`);
    }
    if (!trainer || !hasTrainer(state())) throw new Error('no run: call createRun() first');
    return trainer;
  }

  /** The trainer, for reads (inspection, export, checkpoint): a failed run can still be read. */
  function readableTrainer(): Trainer<Settings> | undefined {
    return hasTrainer(state()) || state() === 'failed' ? trainer : undefined;
  }

  /** Builds the trainer for `spec`: an environment run at once, a language model on turns. */
  async function build(
    spec: RunSpec,
    checkpoint: RunCheckpoint | undefined,
  ): Promise<Trainer<Settings>> {
    const algo = algorithm(spec.algo);
    if (algo.family === 'env') {
      const created = algo.create(spec.env as never, spec.config, spec.seed);
      if (checkpoint) resumeEnvRun(created, spec.algo, checkpoint);
      takeCheckpoint = envCheckpointTaker(created);
      exportModel = envOnnxExporter(created);
      emit({ type: 'backend', kind: 'cpu', line: 'CPU — environment algorithms run on the CPU' });
      return created;
    }
    // The warm-up and a reward model train like a run: on turns, in slices.
    const run = await onTurns((yieldPoint) =>
      setUpLmRun(spec, algo, { ...lm, yieldPoint, emit, resume: checkpoint }),
    );
    takeCheckpoint = run.checkpoint;
    keepsUpdates = true;
    disposeModel = run.dispose;
    exportModel = run.exportOnnx;
    return run.trainer;
  }

  return {
    async createRun(
      given: RunSpec,
      onMessage: RunListener,
      replay?: ReplayPlan,
      checkpoint?: RunCheckpoint,
      trainingTurns?: TrainingTurns,
    ): Promise<void> {
      if (state() === 'disposed') throw new Error("this worker's run was disposed");
      if (state() !== 'created') throw new Error('this worker already hosts a run');
      listener = onMessage;
      turns = trainingTurns;
      const spec = withDefaultSettings(given);
      const errors = checkRunSpec(spec);
      if (errors.length) throw new Error(errors.map((e) => e.message).join('; '));
      if (replay && (!Number.isInteger(replay.steps) || replay.steps < 0)) {
        throw new Error(`replay.steps must be a whole number ≥ 0, got ${replay.steps}`);
      }
      if (checkpoint) checkCheckpoint(checkpoint, replay);
      life.move('build');
      emit({ type: 'status', status: 'warming' });
      let built: Trainer<Settings>;
      try {
        built = await build(spec, checkpoint);
        if (replay) await replayRun(built, replay);
      } catch (error) {
        if (life.can('fail')) {
          life.move('fail');
          life.failure = errorText(error);
          emit({ type: 'status', status: 'error', error: life.failure });
        }
        throw error;
      }
      if (state() === 'disposed') {
        // dispose() came while the model was built: free what was built for nothing.
        disposeModel();
        throw new Error('the run was disposed while it was built');
      }
      trainer = built;
      life.move('built');
      // A replay's metrics and events are the saved run's: the UI has them already.
      sentEvents = built.events.length;
      // From here on, each update says when it generates and when it updates (not the replay's).
      built.onPhase = (phase) => emit({ type: 'phase', phase, update: built.step + 1 });
      emit({ type: 'update', points: [], events: [], config: { ...built.config } });
      emit({ type: 'status', status: 'idle' });
    },

    async start(given?: RunGoal): Promise<void> {
      const active = requireTrainer();
      const watch = GoalWatch.start(given, active.step); // a bad goal is refused before a start
      if (given?.check) keptMetric = given.check.metric;
      if (state() === 'training') return;
      await loop; // a pause under way ends first
      if (state() === 'training') return; // another start came in meanwhile
      goal = watch;
      life.move('start');
      emit({ type: 'status', status: 'running' });
      loop = train(active);
    },

    async pause(): Promise<void> {
      if (state() === 'training') {
        life.move('pause');
        stopWaiting();
      }
      // The training loop ends the pause (finishPause); one under way is waited for too.
      if (state() === 'pausing') await loop;
    },

    async step(): Promise<void> {
      requireTrainer();
      if (state() === 'training') throw new Error('pause the run before stepping it');
      await loop;
      if (state() === 'training') throw new Error('pause the run before stepping it');
      const active = requireTrainer();
      loop = updateOnce(active).then(() => {}, fail);
      await loop;
      flush();
    },

    async setHyperparams(partial: Settings): Promise<HyperparamResult> {
      try {
        const active = requireTrainer();
        active.setHyperparams(partial);
        // The update under way (on a GPU, messages come in while it awaits the device) has read
        // its settings already: the change starts with the one after it.
        return { ok: true, appliesAt: active.step + (activity === 'updating' ? 2 : 1) };
      } catch (error) {
        return { ok: false, error: errorText(error) };
      }
    },

    async inspect() {
      const active = readableTrainer();
      if (!active?.inspect) return null;
      return atBoundary(async () => (await active.inspect!()) ?? null);
    },

    async inspectKept() {
      return readableTrainer() ? [...kept] : [];
    },

    async exportOnnx() {
      const model = exportModel;
      if (!readableTrainer() || !model) return null;
      // Reading the weights is a sync point on the GPU: between updates, like an inspection.
      return atBoundary(model);
    },

    async checkpoint() {
      const take = takeCheckpoint;
      if (!readableTrainer() || !take) return null;
      // Reading the weights and moments is a sync point on the GPU: between updates.
      return atBoundary(take);
    },

    async dispose(): Promise<void> {
      if (life.can('dispose')) life.move('dispose');
      stopWaiting();
      await loop;
      if (timer !== undefined) clearTimeout(timer);
      disposeModel();
      disposeModel = () => {};
      trainer = undefined;
      listener = undefined;
    },
  };
}
