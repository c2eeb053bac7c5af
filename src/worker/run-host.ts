/**
 * One training run inside a worker: builds the trainer from the registry, trains in slices so
 * control messages (pause, live changes) get through between updates, and streams metrics to the
 * UI in batches. run.worker.ts exposes it; tests drive it directly in Node.
 *
 * Each command reads and moves the run's named state (run-state.ts); the parts it is made of live
 * in their own files: the messages to the page (run-messages.ts), the work kept between updates
 * (run-boundary.ts), the lab's turns at training (run-turns.ts), building, saving and replaying
 * (run-build.ts), and the updates and training loop (run-training.ts).
 */
import type { Trainer } from '../rl/trainer';
import { errorText } from '../util/error-text';
import { UpdateBoundary } from './run-boundary';
import { buildRun, checkCheckpoint, replayRun, type BuiltRun } from './run-build';
import type { RunCheckpoint } from './run-checkpoint';
import { GoalWatch } from './run-goal';
import type { LmRunOptions } from './lm-setup';
import { KeptUpdates } from './run-kept';
import { RunMessages } from './run-messages';
import type {
  HyperparamResult,
  ReplayPlan,
  RunGoal,
  RunListener,
  RunSpec,
  RunWorkerApi,
  Settings,
  TrainingTurns,
} from './run-protocol';
import { checkRunSpec, withDefaultSettings } from './run-spec';
import { hasTrainer, RunLife } from './run-state';
import { TrainingLoop } from './run-training';
import { RunTurns } from './run-turns';

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

export function createRunHost({
  flushMs = 50,
  sliceMs = 12,
  maxPoints = 200,
  lm,
}: RunHostOptions = {}): RunWorkerApi {
  /** The trainer once built, until dispose(). */
  let trainer: Trainer<Settings> | undefined;
  /** How the built run is saved: its checkpoint taker and ONNX exporter. */
  let saving: Pick<BuiltRun, 'checkpoint' | 'exportOnnx'> | undefined;
  /** Frees the built model; emptied once it has (dispose() may come before a build ends). */
  let disposeModel = () => {};
  /** The run's life (run-state.ts): every command reads and moves it. */
  const life = new RunLife();
  // Read through a call: the state changes across every await, so it must never be narrowed.
  const state = () => life.state;
  const training = () => state() === 'training';
  const messages = new RunMessages(() => trainer, flushMs, maxPoints);
  const boundary: UpdateBoundary = new UpdateBoundary(training, () => loop.current);
  const turns = new RunTurns(sliceMs, boundary, training);
  const kept = new KeptUpdates();
  const loop: TrainingLoop = new TrainingLoop(life, messages, boundary, turns, sliceMs, kept);
  const emit = messages.emit;

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

  /** Builds the trainer and replays it to the saved update; the built model is kept to be freed. */
  async function buildAndReplay(
    spec: RunSpec,
    replay: ReplayPlan | undefined,
    checkpoint: RunCheckpoint | undefined,
  ): Promise<Trainer<Settings>> {
    const context = { emit, turns, lm };
    const run = await buildRun(spec, checkpoint, context);
    saving = { checkpoint: run.checkpoint, exportOnnx: run.exportOnnx };
    disposeModel = run.dispose;
    kept.enabled = run.keepsUpdates;
    const built = run.trainer;
    if (replay) await replayRun(built, replay, context);
    return built;
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
      messages.listener = onMessage;
      turns.turns = trainingTurns;
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
        built = await buildAndReplay(spec, replay, checkpoint);
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
      messages.eventsSent(built.events.length);
      // From here on, each update says when it generates and when it updates (not the replay's).
      built.onPhase = (phase) => emit({ type: 'phase', phase, update: built.step + 1 });
      emit({ type: 'update', points: [], events: [], config: { ...built.config } });
      emit({ type: 'status', status: 'idle' });
    },

    async start(given?: RunGoal): Promise<void> {
      const active = requireTrainer();
      const watch = GoalWatch.start(given, active.step); // a bad goal is refused before a start
      if (given?.check) kept.metric = given.check.metric;
      if (state() === 'training') return;
      await loop.current; // a pause under way ends first
      if (state() === 'training') return; // another start came in meanwhile
      loop.goal = watch;
      life.move('start');
      emit({ type: 'status', status: 'running' });
      loop.current = loop.run(active);
    },

    async pause(): Promise<void> {
      if (state() === 'training') {
        life.move('pause');
        turns.stopWaiting();
      }
      // The training loop ends the pause; one under way is waited for too.
      if (state() === 'pausing') await loop.current;
    },

    async step(): Promise<void> {
      requireTrainer();
      if (state() === 'training') throw new Error('pause the run before stepping it');
      await loop.current;
      if (state() === 'training') throw new Error('pause the run before stepping it');
      const active = requireTrainer();
      loop.current = loop.update(active).then(() => {}, loop.fail);
      await loop.current;
      messages.flush();
    },

    async setHyperparams(partial: Settings): Promise<HyperparamResult> {
      try {
        const active = requireTrainer();
        active.setHyperparams(partial);
        // The update under way (on a GPU, messages come in while it awaits the device) has read
        // its settings already: the change starts with the one after it.
        return { ok: true, appliesAt: active.step + (boundary.activity === 'updating' ? 2 : 1) };
      } catch (error) {
        return { ok: false, error: errorText(error) };
      }
    },

    async inspectKept() {
      return readableTrainer() ? kept.list() : [];
    },

    async inspect() {
      const active = readableTrainer();
      if (!active?.inspect) return null;
      return boundary.at(async () => (await active.inspect!()) ?? null);
    },

    async exportOnnx() {
      const model = saving?.exportOnnx;
      if (!readableTrainer() || !model) return null;
      // Reading the weights is a sync point on the GPU: between updates, like an inspection.
      return boundary.at(model);
    },

    async checkpoint() {
      const take = saving?.checkpoint;
      if (!readableTrainer() || !take) return null;
      // Reading the weights and moments is a sync point on the GPU: between updates.
      return boundary.at(take);
    },

    async dispose(): Promise<void> {
      if (life.can('dispose')) life.move('dispose');
      turns.stopWaiting();
      await loop.current;
      messages.stop();
      disposeModel();
      disposeModel = () => {};
      trainer = undefined;
      messages.listener = undefined;
    },
  };
}
