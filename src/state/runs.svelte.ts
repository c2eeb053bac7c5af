/**
 * The lab's runs: each one lives in its own worker (src/worker/run.worker.ts); RunManager holds
 * the list and the commands (create, start, pause, park, fork, reset, export). The main thread
 * never trains. Its parts, one file each: lab-run.svelte.ts (a run as the UI shows it),
 * run-workers.ts (worker lifecycle), run-saves.ts (storage, with the last update),
 * run-room.ts (the limit of runs at once), run-goals.ts (where a lesson run stops by itself),
 * run-checkpoints.ts and training-slots.ts.
 */
import { runToJson } from '../compare/run-file';
import { keptInspection, keptUpdates } from './kept-inspection';
import { LabRun } from './lab-run.svelte';
import { goalMet, workerGoal, type LessonGoal } from './lesson-goal';
import { COLORBLIND_SAFE_PALETTE } from './palette';
import { PARK_WAIT_MS, RunCheckpoints, type CheckpointStorePort } from './run-checkpoints';
import { RunGoals } from './run-goals';
import type { CatalogPort, RunPort } from './run-port';
import { liveCount, runToPark } from './run-room';
import { RunSaves } from './run-saves';
import { runNumber, type RunStorePort, type Series, type StoredRun } from './run-store';
import { RunWorkers } from './run-workers';
import type { TrainingSlots } from './training-slots';
import type {
  FieldError,
  HyperparamResult,
  Inspection,
  KeptInspection,
  RunCatalog,
  RunSpec,
  Settings,
} from '../worker/run-protocol';
import type { RunCheckpoint } from '../worker/run-checkpoint';
import { errorText } from '../util/error-text';

// The run as the UI shows it, the worker ports and the save interval live in their own files;
// importers keep reading them from here.
export { LabRun, MAX_POINTS } from './lab-run.svelte';
export type { CatalogPort, RunPort } from './run-port';
export { INSPECT_EVERY_MS } from './run-saves';
export type { Series };

/** Line colours, one per run in creation order: colour-blind-safe, ≥ 3:1 contrast on white. */
export const RUN_COLORS: readonly string[] = [...COLORBLIND_SAFE_PALETTE];

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

/** How a run is created (RunManager.create) besides its spec. */
export interface CreateRunOptions {
  /** Added to the run's label, e.g. "copy of #3, lr=0.1". */
  note?: string;
  /**
   * Gets the run as soon as it exists, so a caller can show its set-up (warm-up, reward model)
   * while it is built.
   */
  onAdded?: (run: LabRun) => void;
  /**
   * The lesson widget opening it (LabRun.origin); at the limit of runs at once, a lesson run is
   * parked to make room for it.
   */
  origin?: string;
  /** The widget's check and budget, where the run stops by itself (lesson-goal.ts). */
  goal?: LessonGoal;
}

export class RunManager {
  runs = $state.raw<LabRun[]>([]);
  catalog = $state.raw<RunCatalog | undefined>(undefined);
  catalogError = $state<string | undefined>(undefined);
  /** Why runs are not kept across page loads, when they are not. */
  storageNote = $state<string | undefined>(undefined);
  private created = 0;
  private readonly checkpoints: RunCheckpoints<LabRun>;
  /** Storage: each run's changes and last update, saved at most every saveEveryMs. */
  private readonly saves: RunSaves;
  /** Worker lifecycle: start, build, end, and a dead or hung worker's run marked failed. */
  private readonly workers: RunWorkers;
  /** Lesson runs held to their check and budget, with or without their widget on the page. */
  private readonly goals: RunGoals;

  constructor(private readonly options: RunManagerOptions) {
    this.storageNote = options.store?.unavailable;
    this.saves = new RunSaves({
      store: options.store,
      everyMs: options.saveEveryMs,
      kept: (run) => this.runs.includes(run),
      note: (text) => (this.storageNote = text),
    });
    this.workers = new RunWorkers({
      spawn: options.spawn,
      slots: options.slots,
      received: (run, message, before) => {
        if (message.type === 'status') this.checkpoints.follow(run);
        // Stored the moment it says so (with the inspection sent just before): a reload right
        // after a pause, the user's or a lesson goal's, finds the update the run showed.
        if (message.type === 'status' && message.status === 'paused') void this.saves.saveNow(run);
        if (message.type === 'update' && message.points.length) {
          this.scheduleSave(run);
          this.goals.updated(run, before);
        }
      },
      lost: (run) => {
        this.checkpoints.follow(run); // no more periodic checkpoints from a dead worker
        this.scheduleSave(run, 0);
      },
    });
    this.goals = new RunGoals({
      pause: (run) => this.pause(run),
      inspect: (run) => this.inspect(run),
    });
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

  /**
   * Creates a run and builds its worker; resolves once it is ready (a refused spec leaves the run
   * in 'error').
   */
  async create(
    spec: RunSpec,
    { note = '', onAdded, origin, goal }: CreateRunOptions = {},
  ): Promise<LabRun> {
    if (origin !== undefined) await this.makeRoom();
    const where = spec.env ?? spec.task ?? '';
    const run = this.add(
      (n) => `#${n} ${spec.algo} on ${where}, seed ${spec.seed}${note ? ` (${note})` : ''}`,
      spec,
    );
    run.origin = origin;
    run.goal = goal;
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
    run.stoppedBy = undefined;
    return this.command(run, async () => {
      await this.ensureWorker(run);
      // A lesson run's worker stops it at the update where its check passes or its budget ends.
      await run.port!.api.start(workerGoal(run.goal, run));
    });
  }

  /**
   * Pauses the run and saves it with its last update before resolving (a reload right after a
   * pause must find every update the run showed); then keeps its inspection and checkpoint in the
   * background.
   */
  pause(run: LabRun): Promise<void> {
    return this.command(run, async () => {
      await run.port?.api.pause();
      await this.saves.saveNow(run);
      this.scheduleSave(run, 0); // with its last update's inspection, read from the worker
      void this.checkpoints.take(run);
    });
  }

  step(run: LabRun): Promise<void> {
    run.stoppedBy = undefined;
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
      this.saves.inspected(run);
      this.scheduleSave(run);
    }
    // A worker that has just brought a stored run back may have no update of its own yet.
    return fresh ?? run.inspection ?? null;
  }

  /**
   * The run's earlier updates worth opening (its first and its rise): its worker's, merged with
   * what the run kept (a stored run: those alone).
   */
  async inspectKept(run: LabRun): Promise<KeptInspection[]> {
    const port = run.port;
    if (!port) return run.kept;
    const fresh = await port.api.inspectKept();
    if (run.port === port) {
      run.kept = keptUpdates(run.kept, fresh);
      this.scheduleSave(run);
    }
    return run.kept;
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
    return this.create(spec, {
      note: note ? `copy of #${run.id.slice(4)}, ${note}` : `copy of #${run.id.slice(4)}`,
    });
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
      if (port) await this.workers.end(port);
      run.resetProgress();
      void this.checkpoints.drop(run); // from another history now
      await this.ensureWorker(run);
    });
  }

  /**
   * Ends the run's worker but keeps the run, as a stored run: its metrics and events stay, its
   * checkpoint and last update are taken first, and training it again resumes (or replays) to
   * where it stopped. A lesson parks its widget's run when the reader leaves it (see leave), and
   * makeRoom() parks lesson runs at the limit of runs at once: each run is a worker (a GPU device
   * for language models).
   */
  park(run: LabRun): Promise<void> {
    return this.command(run, async () => {
      const port = run.port;
      if (!port) return;
      await this.checkpoints.take(run, PARK_WAIT_MS); // a stuck worker is ended all the same
      await this.saves.keepInspection(run, true);
      run.port = undefined;
      run.phase = run.stoppedBy = undefined;
      await this.workers.end(port);
      run.status = 'stored';
      this.checkpoints.follow(run);
      this.scheduleSave(run, 0);
    });
  }

  /**
   * The reader left the lesson that shows this run. A run training toward a goal that has an end
   * (a language model short of its budget, its check not passed) trains on, to be watched in the
   * lab (the tool-use lesson sends the reader to its inspector while it trains), and stops by
   * itself there; any other is parked, so that no lesson run trains on unwatched for ever (one
   * started again past its goal, or one with no budget) and the lessons' idle runs never fill
   * the limit of runs at once.
   */
  leave(run: LabRun): Promise<void> {
    const goal = run.goal;
    const trainsOn = run.status === 'running' && goal?.budget !== undefined && !goalMet(goal, run);
    return trainsOn ? Promise.resolve() : this.park(run);
  }

  /** Stops the run, frees its model, ends its worker and forgets it. */
  async remove(run: LabRun): Promise<void> {
    this.runs = this.runs.filter((r) => r !== run);
    this.saves.cancel(run);
    void this.options.store?.remove(run.id).catch(() => {});
    void this.checkpoints.forget(run);
    if (run.port) await this.workers.end(run.port);
  }

  /**
   * At the limit of runs at once, parks the oldest lesson run that is not training (else the
   * oldest lesson run): going through the lessons must never stop at the limit.
   */
  private async makeRoom(except?: LabRun): Promise<void> {
    const victim = runToPark(this.runs, this.maxRuns, except);
    if (victim) await this.park(victim);
  }

  private add(label: (n: number) => string, spec: RunSpec, stored = false): LabRun {
    const live = liveCount(this.runs);
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
    if (liveCount(this.runs) >= this.maxRuns) {
      throw new Error(`at most ${this.maxRuns} runs train at once: delete one first`);
    }
    const plan = run.steps > 0 ? run.replayPlan() : undefined;
    const port = this.workers.spawn(run);
    const checkpoint = plan ? await this.checkpoints.resumeFrom(run) : undefined;
    try {
      await this.workers.build(run, port, { plan, checkpoint });
    } catch (error) {
      if (!checkpoint || run.port !== port) throw error;
      // Refused (another version or model shape), or it failed with it: the run must come back
      // anyway, so the checkpoint is dropped and every update replayed, in a fresh worker.
      void this.checkpoints.refused(run, error);
      await this.workers.end(port);
      run.error = undefined;
      run.clearSetup();
      await this.workers.build(run, this.workers.spawn(run), { plan });
    }
    this.scheduleSave(run, 0);
  }

  private scheduleSave(run: LabRun, delay?: number): void {
    this.saves.schedule(run, delay);
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
