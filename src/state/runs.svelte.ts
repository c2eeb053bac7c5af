/**
 * The lab's runs: each one lives in its own worker (src/worker/run.worker.ts); this rune state
 * holds what the UI shows of it — status, backend, metric series, events — and sends it commands.
 * The main thread never trains.
 */
import { proxy } from 'comlink';
import { own } from '../util/own';
import { halveSeries } from './chart';
import { keptInspection } from './kept-inspection';
import { COLORBLIND_SAFE_PALETTE } from './palette';
import { guardApi, WorkerFailure } from '../worker/worker-failure';
import { HangWatch, trackCalls, watchRequests } from '../worker/worker-hang';
import {
  PARK_WAIT_MS,
  resumeText,
  RunCheckpoints,
  type CheckpointStorePort,
} from './run-checkpoints';
import { runToJson } from '../compare/run-file';
import type { RunTurns, TrainingSlots } from './training-slots';
import {
  runNumber,
  STORED_RUN_VERSION,
  type RunStorePort,
  type Series,
  type StoredRun,
} from './run-store';
import type {
  FieldError,
  HyperparamResult,
  Inspection,
  RunCatalog,
  RunEvent,
  RunMessage,
  RunSpec,
  RunStatus,
  ReplayPlan,
  RunWorkerApi,
  Settings,
  TrainingTurns,
  UpdatePhase,
} from '../worker/run-protocol';
import type { RunCheckpoint } from '../worker/run-checkpoint';

/** What the manager needs of a run worker (the comlink proxy in the app, a fake in tests). */
export interface RunPort {
  api: Omit<RunWorkerApi, 'createRun'> & {
    createRun(
      spec: RunSpec,
      listener: (message: RunMessage) => void,
      replay?: ReplayPlan,
      checkpoint?: RunCheckpoint,
      turns?: TrainingTurns,
    ): Promise<void>;
  };
  terminate(): void;
  /**
   * Calls `listener` once if the worker dies (src/worker/worker-failure.ts): its calls would never
   * settle. None: the worker is not watched.
   */
  onFailure?(listener: (reason: string) => void): void;
}

/** Where the catalog and spec checks come from (the lab worker in the app). */
export interface CatalogPort {
  runCatalog(): Promise<RunCatalog>;
  checkRunSpec(spec: RunSpec): Promise<FieldError[]>;
}

export type { Series };

/** Line colours, one per run in creation order: colour-blind-safe, ≥ 3:1 contrast on white. */
export const RUN_COLORS: readonly string[] = [...COLORBLIND_SAFE_PALETTE];

/** Points kept per metric of a run; longer histories are halved (neighbours merged). */
export const MAX_POINTS = 10_000;

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

/** A training run's last update is read for keeping (LabRun.inspection) at most this often, in ms. */
export const INSPECT_EVERY_MS = 5000;
/** How long keeping an inspection waits for the worker before saving without it, in ms. */
const INSPECT_WAIT_MS = 2000;

/** `promise`, or undefined once `ms` have passed (a stuck worker must not hold a save back). */
function within<T>(promise: Promise<T>, ms: number): Promise<T | undefined> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => resolve(undefined), ms);
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
}

export class LabRun {
  status = $state<RunStatus>('warming');
  error = $state<string | undefined>(undefined);
  backend = $state.raw<{ kind: 'webgpu' | 'cpu'; line: string } | undefined>(undefined);
  warmup = $state.raw<{ done: number; total: number; successRate?: number } | undefined>(undefined);
  /** A learned reward model's training before RL: steps so far, and its report once done. */
  rewardModel = $state.raw<Omit<Extract<RunMessage, { type: 'reward-model' }>, 'type'> | undefined>(
    undefined,
  );
  /** Bringing a stored run back: updates replayed so far. */
  replay = $state.raw<{ done: number; total: number } | undefined>(undefined);
  /** Metric name → series. Arrays grow in place; the container is replaced on every batch. */
  series = $state.raw<Record<string, Series>>({});
  events = $state.raw<RunEvent[]>([]);
  /** The config in force, as the worker last reported it. */
  config = $state.raw<Settings>({});
  steps = $state(0);
  /** Its stored checkpoint's update (language models, ppo-mlp), if it has one: where it resumes. */
  checkpointStep = $state<number | undefined>(undefined);
  /** Why the run's worker died, if it did: the run keeps its data, and Resume brings it back. */
  failure = $state<string | undefined>(undefined);
  /** What the worker said the reader should know of the run's set-up. */
  note = $state<string | undefined>(undefined);
  /** A command is in flight (buttons wait for it). */
  busy = $state(false);
  /** Which part of which update is under way while it runs (language models; worker 'phase'). */
  phase = $state.raw<{ phase: UpdatePhase; update: number } | undefined>(undefined);
  /**
   * The last update's samples (or grid, or episode) as last read from the worker, bounded
   * (kept-inspection.ts): what the inspector shows once the run is stored.
   */
  inspection = $state.raw<Inspection | undefined>(undefined);
  /** The lesson widget that opened the run ('lesson-id#widget-id'): it shows the run again. */
  origin: string | undefined;

  /** The run's worker; undefined while the run is only stored (it starts on the first command). */
  port: RunPort | undefined;

  constructor(
    readonly id: string,
    readonly label: string,
    readonly color: string,
    readonly spec: RunSpec,
    port: RunPort | undefined,
  ) {
    this.port = port;
    this.config = { ...spec.config };
    if (!port) this.status = 'stored';
  }

  /** A stored run as the lab shows it before its worker starts. */
  static fromStored(stored: StoredRun): LabRun {
    const run = new LabRun(stored.id, stored.label, stored.color, stored.spec, undefined);
    run.series = stored.series;
    run.events = stored.events;
    run.config = stored.config;
    run.steps = stored.steps;
    if (stored.backendLine) run.storedBackend = stored.backendLine;
    run.origin = stored.origin;
    run.inspection = stored.inspection;
    return run;
  }

  /** The backend line of a stored run's last session (shown until its worker reports). */
  storedBackend: string | undefined;

  toStored(): StoredRun {
    return {
      version: STORED_RUN_VERSION,
      id: this.id,
      label: this.label,
      color: this.color,
      spec: $state.snapshot(this.spec) as RunSpec,
      series: this.series,
      events: this.events,
      config: this.config,
      steps: this.steps,
      ...((this.backend?.line ?? this.storedBackend)
        ? { backendLine: this.backend?.line ?? this.storedBackend }
        : {}),
      ...(this.origin !== undefined ? { origin: this.origin } : {}),
      ...(this.inspection ? { inspection: this.inspection } : {}),
      // eslint-disable-next-line svelte/prefer-svelte-reactivity -- a timestamp, not state
      savedAt: new Date().toISOString(),
    };
  }

  /** How to bring this run's trainer back to where it stopped: replay its updates and changes. */
  replayPlan(): ReplayPlan {
    return {
      steps: this.steps,
      changes: this.events.flatMap((e) =>
        e.kind === 'hyperparams' ? [{ step: e.step, changes: e.changes }] : [],
      ),
    };
  }

  receive(message: RunMessage): void {
    switch (message.type) {
      case 'warmup':
        this.warmup = { ...message };
        break;
      case 'replay':
        this.replay = { done: message.done, total: message.total };
        break;
      case 'reward-model':
        this.rewardModel = {
          done: message.done,
          total: message.total,
          ...(message.report ? { report: message.report } : {}),
        };
        break;
      case 'backend':
        this.backend = { kind: message.kind, line: message.line };
        break;
      case 'note':
        this.note = message.text;
        break;
      case 'status':
        this.status = message.status;
        this.phase = undefined; // the next update says its own
        if (message.error !== undefined) this.error = message.error;
        break;
      case 'phase':
        this.phase = { phase: message.phase, update: message.update };
        break;
      case 'update': {
        const series = this.series;
        let last = this.steps;
        for (const { step, metrics } of message.points) {
          for (const [name, value] of Object.entries(metrics)) {
            let s = own(series, name);
            if (!s) {
              s = { x: [], y: [] };
              series[name] = s;
            }
            s.x.push(step);
            s.y.push(value);
            if (s.x.length > MAX_POINTS) halveSeries(s.x, s.y);
          }
          last = step;
        }
        // One state write per batch (not per point): each write wakes the runes' bookkeeping.
        this.steps = last;
        this.series = { ...series };
        if (message.events.length) this.events = [...this.events, ...message.events];
        this.config = message.config;
        break;
      }
    }
  }

  /** Hyperparameter-change events, for chart markers. */
  get changes() {
    return this.events.filter((event) => event.kind === 'hyperparams');
  }
}

export interface RunManagerOptions {
  catalog: CatalogPort;
  spawn: () => RunPort;
  /** Turns at training shared by the runs' workers; none: every worker trains freely. */
  slots?: TrainingSlots;
  /** Runs alive at once (each is a worker, and for language models a GPU device). Default 8. */
  maxRuns?: number;
  /** Where runs are kept across page loads (IndexedDB in the app); none: nothing is kept. */
  store?: RunStorePort;
  /** A run's changes are saved at most this often, in ms. Default 1000. */
  saveEveryMs?: number;
  /**
   * Where runs that have checkpoints (language models, ppo-mlp) keep their latest one; none: they
   * resume by replay.
   */
  checkpoints?: CheckpointStorePort;
  /** A training run with checkpoints is checkpointed this often, in ms. Default 30 000. */
  checkpointEveryMs?: number;
}

export class RunManager {
  runs = $state.raw<LabRun[]>([]);
  catalog = $state.raw<RunCatalog | undefined>(undefined);
  catalogError = $state<string | undefined>(undefined);
  /** Why runs are not kept across page loads, when they are not. */
  storageNote = $state<string | undefined>(undefined);
  private created = 0;
  // eslint-disable-next-line svelte/prefer-svelte-reactivity -- bookkeeping, never rendered
  private readonly saveTimers = new Map<LabRun, ReturnType<typeof setTimeout>>();
  private readonly checkpoints: RunCheckpoints<LabRun>;
  /** Each worker's turns at training (closed when the worker ends). */
  private readonly turns = new WeakMap<RunPort, RunTurns>();
  /** Each worker's watch for hanging (worker-hang.ts): its messages are signs of life. */
  private readonly hangs = new WeakMap<RunPort, HangWatch>();
  /** When each run's last update was last read for keeping (performance.now()). */
  private readonly inspectedAt = new WeakMap<LabRun, number>();

  constructor(private readonly options: RunManagerOptions) {
    this.storageNote = options.store?.unavailable;
    this.checkpoints = new RunCheckpoints<LabRun>({
      store: options.checkpoints,
      everyMs: options.checkpointEveryMs,
      // Algorithms without checkpoints replay (tabular ones 50,000 updates in 0.3–1.5 s on a
      // 2-core CPU); unknown: ask the worker.
      wanted: (run) =>
        this.catalog?.algorithms.find((a) => a.name === run.spec.algo)?.checkpoints !== false,
      note: (text) => (this.storageNote = text),
    });
  }

  get maxRuns(): number {
    return this.options.maxRuns ?? 8;
  }

  /** How many runs train at once, when they take turns (undefined: no limit). */
  get trainingAtOnce(): number | undefined {
    return this.options.slots?.capacity;
  }

  async loadCatalog(): Promise<void> {
    if (this.catalog) return;
    try {
      this.catalog = await this.options.catalog.runCatalog();
    } catch (error) {
      this.catalogError = errorText(error);
    }
  }

  /** Shows the runs kept from earlier visits (stored: their workers start when used). */
  async restore(): Promise<void> {
    const store = this.options.store;
    if (!store) return;
    try {
      const stored = await store.list();
      this.storageNote ??= store.unavailable;
      // eslint-disable-next-line svelte/prefer-svelte-reactivity -- a local lookup
      const known = new Set(this.runs.map((r) => r.id));
      const restored = stored.filter((r) => !known.has(r.id)).map((r) => LabRun.fromStored(r));
      this.runs = [...this.runs, ...restored];
      for (const r of stored) this.created = Math.max(this.created, runNumber(r.id));
      await this.checkpoints.restore(restored);
    } catch (error) {
      this.storageNote = `stored runs could not be read: ${errorText(error)}`;
    }
  }

  check(spec: RunSpec): Promise<FieldError[]> {
    return this.options.catalog.checkRunSpec(spec);
  }

  get(id: string): LabRun | undefined {
    return this.runs.find((run) => run.id === id);
  }

  /** The latest run a lesson widget opened (LabRun.origin), stored or live: the widget shows it. */
  forOrigin(origin: string): LabRun | undefined {
    return this.runs.findLast((run) => run.origin === origin);
  }

  /** Starts a worker and builds the run there; a refused spec leaves the run in 'error'. */
  /**
   * Creates a run and builds its worker; resolves once it is ready. `onAdded` gets the run as soon
   * as it exists, so a caller can show its set-up (warm-up, reward model) while it is built.
   * `origin`: the lesson widget opening it (LabRun.origin); at the limit of runs at once, a lesson
   * run is parked to make room for it.
   */
  async create(
    spec: RunSpec,
    note = '',
    onAdded?: (run: LabRun) => void,
    origin?: string,
  ): Promise<LabRun> {
    if (origin !== undefined) await this.makeRoom();
    const where = spec.env ?? spec.task ?? '';
    const run = this.add(
      (n) => `#${n} ${spec.algo} on ${where}, seed ${spec.seed}${note ? ` (${note})` : ''}`,
      spec,
    );
    run.origin = origin;
    onAdded?.(run);
    await this.command(run, () => this.ensureWorker(run));
    return run;
  }

  /** Adds a stored run (from a file or a fork): shown at once, trained when started. */
  addStored(
    spec: RunSpec,
    label: (n: number) => string,
    data: Pick<StoredRun, 'series' | 'events' | 'config' | 'steps' | 'inspection'>,
    checkpoint?: RunCheckpoint,
  ): LabRun {
    const run = this.add(label, spec, true);
    run.series = data.series;
    run.events = data.events;
    run.config = data.config;
    run.steps = data.steps;
    // An imported file's inspection, bounded as a run's own is when kept.
    if (data.inspection) run.inspection = keptInspection(data.inspection);
    this.scheduleSave(run, 0);
    if (checkpoint && checkpoint.step <= run.steps) {
      run.checkpointStep = checkpoint.step; // shown at once; kept in the background
      void this.checkpoints.adopt(run, checkpoint);
    }
    return run;
  }

  /** The run as a lab-run file, with its latest checkpoint when it has one. */
  async exportJson(run: LabRun, exportedAt?: string): Promise<string> {
    return runToJson(run, exportedAt, await this.checkpoints.forExport(run));
  }

  /**
   * A new run that continues from update `step` of `run`: the same spec, its metrics and events
   * up to that update, trained on by replaying them when started.
   */
  fork(run: LabRun, step: number): LabRun {
    if (!Number.isInteger(step) || step < 0 || step > run.steps) {
      throw new Error(`fork step must be a whole number in [0, ${run.steps}], got ${step}`);
    }
    const series: Record<string, Series> = {};
    for (const [name, s] of Object.entries(run.series)) {
      const keep = s.x.findIndex((x) => x > step);
      const end = keep < 0 ? s.x.length : keep;
      series[name] = { x: s.x.slice(0, end), y: s.y.slice(0, end) };
    }
    const events = run.events.filter((e) => e.step <= step);
    let config = { ...run.spec.config };
    for (const e of events) if (e.kind === 'hyperparams') config = { ...config, ...e.changes };
    const fork = this.addStored(
      structuredClone($state.snapshot(run.spec) as RunSpec),
      (n) => `#${n} fork of ${run.label.split(' ')[0]} at update ${step}`,
      { series, events, config, steps: step },
    );
    // Runs with checkpoints: from the run's checkpoint when it was taken by then (no full replay).
    void this.checkpoints.copy(run, fork, step);
    return fork;
  }

  start(run: LabRun): Promise<void> {
    return this.command(run, async () => {
      await this.ensureWorker(run);
      await run.port!.api.start();
    });
  }

  /** Pauses the run, then keeps its checkpoint (in the background) and its last update. */
  pause(run: LabRun): Promise<void> {
    return this.command(run, async () => {
      await run.port?.api.pause();
      this.scheduleSave(run, 0); // reads its last update for keeping first
      void this.checkpoints.take(run);
    });
  }

  step(run: LabRun): Promise<void> {
    return this.command(run, async () => {
      await this.ensureWorker(run);
      await run.port!.api.step();
    });
  }

  /** Validated in the worker; applied at the run's next update (an event marks the step). */
  async setHyperparams(run: LabRun, partial: Settings): Promise<HyperparamResult> {
    try {
      await this.ensureWorker(run);
      return await run.port!.api.setHyperparams(partial);
    } catch (error) {
      return { ok: false, error: errorText(error) };
    }
  }

  /**
   * The run's last update, token by token (or its grid, or a CartPole episode): from its worker,
   * else as the run kept it (a stored run). Null: no update yet, or nothing to inspect.
   */
  async inspect(run: LabRun): Promise<Inspection | null> {
    const port = run.port;
    if (!port) return run.inspection ?? null;
    const fresh = await port.api.inspect();
    if (fresh && run.port === port) {
      run.inspection = keptInspection(fresh);
      this.inspectedAt.set(run, performance.now());
      this.scheduleSave(run);
    }
    // A worker that has just brought a stored run back may have no update of its own yet.
    return fresh ?? run.inspection ?? null;
  }

  /** A run's policy as ONNX bytes, null if it has none (its worker starts, replaying, if stored). */
  async exportOnnx(run: LabRun): Promise<Uint8Array | null> {
    await this.ensureWorker(run);
    return run.port!.api.exportOnnx();
  }

  /** A new run with the same spec except `change` (e.g. a setting that cannot change live). */
  duplicate(run: LabRun, change: Settings = {}): Promise<LabRun> {
    const note = Object.entries(change)
      .map(([key, value]) => `${key}=${String(value)}`)
      .join(', ');
    const spec = { ...run.spec, config: { ...run.spec.config, ...change } };
    return this.create(
      spec,
      note ? `copy of #${run.id.slice(4)}, ${note}` : `copy of #${run.id.slice(4)}`,
    );
  }

  /**
   * Back to update 0: the run's worker is ended, its metrics, events and live changes are
   * cleared, and a fresh trainer is built from its spec (the settings it was created with). The
   * same label and colour; the stored copy is overwritten. (Fork at 0 keeps the old run instead.)
   */
  reset(run: LabRun): Promise<void> {
    return this.command(run, async () => {
      const port = run.port;
      run.port = undefined;
      if (port) await this.endWorker(port);
      run.series = {};
      run.events = [];
      run.steps = 0;
      run.config = { ...run.spec.config };
      run.warmup = undefined;
      run.rewardModel = undefined;
      run.replay = undefined;
      run.backend = undefined;
      run.storedBackend = undefined;
      run.inspection = run.phase = undefined;
      void this.checkpoints.drop(run); // from another history now
      await this.ensureWorker(run);
    });
  }

  /**
   * Ends the run's worker but keeps the run, as a stored run: its metrics and events stay, its
   * checkpoint and last update are taken first, and training it again resumes (or replays) to
   * where it stopped. A lesson parks its widget's run when the reader leaves it not running (a
   * running one trains on, to be watched in the lab), and makeRoom() parks lesson runs at the
   * limit of runs at once: each run is a worker (a GPU device for language models).
   */
  park(run: LabRun): Promise<void> {
    return this.command(run, async () => {
      const port = run.port;
      if (!port) return;
      await this.checkpoints.take(run, PARK_WAIT_MS); // a stuck worker is ended all the same
      await this.keepInspection(run, true);
      run.port = undefined;
      run.phase = undefined;
      await this.endWorker(port);
      run.status = 'stored';
      this.checkpoints.follow(run);
      this.scheduleSave(run, 0);
    });
  }

  /** Stops the run, frees its model, ends its worker and forgets it. */
  async remove(run: LabRun): Promise<void> {
    this.runs = this.runs.filter((r) => r !== run);
    const timer = this.saveTimers.get(run);
    if (timer !== undefined) clearTimeout(timer);
    this.saveTimers.delete(run);
    void this.options.store?.remove(run.id).catch(() => {});
    void this.checkpoints.forget(run);
    if (run.port) await this.endWorker(run.port);
  }

  /**
   * At the limit of runs at once, parks the oldest lesson run that is not training (else the
   * oldest lesson run): going through the lessons must never stop at the limit.
   */
  private async makeRoom(except?: LabRun): Promise<void> {
    const live = this.runs.filter((r) => r.port);
    if (live.length < this.maxRuns) return;
    const lessons = live.filter((r) => r.origin !== undefined && r !== except && !r.busy);
    const victim = lessons.find((r) => r.status !== 'running') ?? lessons[0];
    if (victim) await this.park(victim);
  }

  /**
   * Reads the run's last update into LabRun.inspection (to be saved with it): at most every
   * INSPECT_EVERY_MS unless `now`, only when it has an update not yet kept, and never waiting more
   * than INSPECT_WAIT_MS on its worker.
   */
  private async keepInspection(run: LabRun, now = false): Promise<void> {
    const port = run.port;
    if (!port || run.steps === 0 || run.inspection?.step === run.steps) return;
    const last = this.inspectedAt.get(run);
    if (!now && last !== undefined && performance.now() - last < INSPECT_EVERY_MS) return;
    this.inspectedAt.set(run, performance.now());
    try {
      const fresh = await within(port.api.inspect(), INSPECT_WAIT_MS);
      if (fresh && run.port === port) run.inspection = keptInspection(fresh);
    } catch {
      // Kept as it was; the next save reads it again.
    }
  }

  /** Frees the worker's model and ends it. */
  private async endWorker(port: RunPort): Promise<void> {
    try {
      await port.api.dispose();
    } catch {
      // The worker may already be gone; terminating it is all that is left.
    } finally {
      port.terminate();
      // A worker ended mid-slice or while waiting: its turn goes to the next run.
      this.turns.get(port)?.close();
      this.turns.delete(port);
    }
  }

  private add(label: (n: number) => string, spec: RunSpec, stored = false): LabRun {
    const live = this.runs.filter((r) => r.port).length;
    if (!stored && live >= this.maxRuns) {
      throw new Error(`at most ${this.maxRuns} runs at once: delete one first`);
    }
    this.created += 1;
    const n = this.created;
    const color = RUN_COLORS[(n - 1) % RUN_COLORS.length]!;
    const run = new LabRun(`run-${n}`, label(n), color, structuredClone(spec), undefined);
    this.runs = [...this.runs, run];
    // The id may be an earlier visit's deleted run's: never resume from what that one left.
    void this.checkpoints.drop(run);
    return run;
  }

  /**
   * Gives a run its worker: builds the trainer there, bringing a stored run back from its
   * checkpoint (language models, ppo-mlp) and replaying the updates after it, or replaying them all.
   */
  private async ensureWorker(run: LabRun): Promise<void> {
    if (run.port) return;
    if (run.origin !== undefined) await this.makeRoom(run);
    if (this.runs.filter((r) => r.port).length >= this.maxRuns) {
      throw new Error(`at most ${this.maxRuns} runs train at once: delete one first`);
    }
    const plan = run.steps > 0 ? run.replayPlan() : undefined;
    const port = this.spawnFor(run);
    const checkpoint = plan ? await this.checkpoints.resumeFrom(run) : undefined;
    try {
      await this.build(run, port, plan, checkpoint);
    } catch (error) {
      if (!checkpoint || run.port !== port) throw error;
      // Refused (another version or model shape), or it failed with it: the run must come back
      // anyway, so the checkpoint is dropped and every update replayed, in a fresh worker.
      void this.checkpoints.refused(run, error);
      await this.endWorker(port);
      run.error = run.warmup = run.rewardModel = run.replay = run.backend = undefined;
      await this.build(run, this.spawnFor(run), plan);
    }
    this.scheduleSave(run, 0);
  }

  /**
   * Starts a worker for the run. If it dies, or hangs (a call to it gets no sign of life for
   * minutes: worker-hang.ts), its calls (pending or later) reject instead of waiting for ever, and
   * the run is marked failed (lose).
   */
  private spawnFor(run: LabRun): RunPort {
    const spawned = this.options.spawn();
    const failure = new WorkerFailure();
    const failed = (reason: string) => {
      hang.stop();
      if (run.port === port) this.lose(run, port, reason);
      else spawned.terminate(); // a worker being ended (its dispose hung): end it now
      failure.fail(new Error(run.failure === reason && run.error ? run.error : reason));
    };
    const hang = new HangWatch({ onHang: failed });
    const port: RunPort = {
      api: guardApi(trackCalls(spawned.api, hang), failure),
      terminate: () => {
        hang.stop();
        spawned.terminate();
      },
    };
    this.hangs.set(port, hang);
    spawned.onFailure?.(failed);
    run.port = port;
    run.failure = run.note = undefined; // a new worker says its own
    run.status = 'warming';
    return port;
  }

  /**
   * The run's worker died: the run keeps its metrics, events and checkpoint, says why it stopped,
   * and starting it again brings it back in a fresh worker (from its checkpoint where it has one).
   */
  private lose(run: LabRun, port: RunPort, reason: string): void {
    run.port = undefined;
    port.terminate();
    this.turns.get(port)?.close();
    this.turns.delete(port);
    run.failure = reason;
    run.status = 'error';
    run.phase = undefined;
    run.error =
      `Its worker stopped (${reason}). Its ${run.steps} update${run.steps === 1 ? ' is' : 's are'} ` +
      `kept; Resume brings it back: it ${resumeText(run.steps, run.checkpointStep)}.`;
    this.checkpoints.follow(run); // no more periodic checkpoints from a dead worker
    this.scheduleSave(run, 0);
  }

  private async build(run: LabRun, port: RunPort, plan?: ReplayPlan, checkpoint?: RunCheckpoint) {
    const hang = this.hangs.get(port);
    const listener = proxy((message: RunMessage) => {
      hang?.alive();
      // A refused or dead worker's late messages must not touch the run (or its successor).
      if (run.port !== port) return;
      run.receive(message);
      if (message.type === 'status') this.checkpoints.follow(run);
      if (message.type === 'update' && message.points.length) this.scheduleSave(run);
    });
    try {
      const turns = this.options.slots?.forRun();
      if (turns) this.turns.set(port, turns);
      // Its waits for a turn are the page's doing, not silence of its own.
      const watched = turns && hang ? watchRequests(turns, hang) : turns;
      await port.api.createRun(run.spec, listener, plan, checkpoint, watched && proxy(watched));
    } catch (error) {
      if (run.status === 'warming') run.status = 'error';
      throw error;
    }
  }

  private scheduleSave(run: LabRun, delay = this.options.saveEveryMs ?? 1000): void {
    const store = this.options.store;
    if (!store) return;
    // A save already waiting covers this one, unless this one is asked for at once (a pause, a
    // park): then it goes now, so a reload right after a pause still finds the last update.
    const pending = this.saveTimers.get(run);
    if (pending !== undefined) {
      if (delay > 0) return;
      clearTimeout(pending);
    }
    const timer = setTimeout(() => {
      this.saveTimers.delete(run);
      // A save asked for at once (a pause, a park) keeps the last update whatever its age.
      void this.keepInspection(run, delay === 0).then(() => {
        if (!this.runs.includes(run)) return;
        store.save(run.toStored()).catch((error: unknown) => {
          this.storageNote = `runs could not be saved: ${errorText(error)}`;
        });
      });
    }, delay);
    this.saveTimers.set(run, timer);
  }

  private async command(run: LabRun, action: () => Promise<unknown>): Promise<void> {
    run.busy = true;
    try {
      await action();
      if (run.status !== 'error') run.error = undefined;
    } catch (error) {
      // A dead worker's calls reject; the run already says why (lose).
      if (run.failure === undefined) run.error = errorText(error);
      if (run.status === 'warming') run.status = 'error';
    } finally {
      run.busy = false;
    }
  }
}
