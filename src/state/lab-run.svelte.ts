/**
 * One run of the lab as the UI shows it: status, backend, set-up progress, metric series, events,
 * and what it keeps of its last update. Its worker's messages land in receive(); RunManager
 * (runs.svelte.ts) sends the commands. A stored run is the same object with no worker.
 */
import { own } from '../util/own';
import { halveSeries } from './chart';
import { keptInspection, keptUpdates } from './kept-inspection';
import type { GoalStop, LessonGoal } from './lesson-goal';
import type { RunPort } from './run-port';
import { STORED_RUN_VERSION, type Series, type StoredRun } from './run-store';
import type {
  Inspection,
  KeptInspection,
  ReplayPlan,
  RunEvent,
  RunMessage,
  RunSpec,
  RunStatus,
  Settings,
  UpdatePhase,
} from '../worker/run-protocol';

/** Points kept per metric of a run; longer histories are halved (neighbours merged). */
export const MAX_POINTS = 10_000;

/** What a worker reports while it builds a run: cleared whenever a new worker builds it. */
export function freshSetup() {
  return {
    warmup: undefined,
    rewardModel: undefined,
    replay: undefined,
    backend: undefined,
  } satisfies Partial<LabRun>;
}

/**
 * Everything a run has trained and shown, as it is before its first update: a new run starts
 * from it and a reset goes back to it (the id, label, colour, spec and lesson goal stay).
 */
export function freshProgress(spec: RunSpec) {
  return {
    ...freshSetup(),
    series: {},
    events: [],
    config: { ...spec.config },
    steps: 0,
    storedBackend: undefined,
    inspection: undefined,
    kept: [],
    phase: undefined,
    checkPassedAt: undefined,
    stoppedBy: undefined,
  } satisfies Partial<LabRun>;
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
  /**
   * Earlier updates the inspector can open besides the last (a language model's first and its
   * rise, worker/kept-updates.ts), each bounded as `inspection` is.
   */
  kept = $state.raw<KeptInspection[]>([]);
  /** The lesson widget that opened the run ('lesson-id#widget-id'): it shows the run again. */
  origin: string | undefined;
  /** A lesson run's check and budget: where it stops by itself (lesson-goal.ts). */
  goal: LessonGoal | undefined;
  /** The update at which its goal's check first passed, if it did. */
  checkPassedAt = $state<number | undefined>(undefined);
  /** Why its goal paused it, until it trains again. */
  stoppedBy = $state<GoalStop | undefined>(undefined);

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
    this.resetProgress();
    if (!port) this.status = 'stored';
  }

  /** Back to before the first update (freshProgress). */
  resetProgress(): void {
    Object.assign(this, freshProgress(this.spec));
  }

  /** Forgets what an earlier worker reported while it built the run (freshSetup). */
  clearSetup(): void {
    Object.assign(this, freshSetup());
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
    run.goal = stored.goal;
    run.checkPassedAt = stored.checkPassedAt;
    run.inspection = stored.inspection;
    run.kept = Array.isArray(stored.kept) ? stored.kept : [];
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
      ...(this.goal ? { goal: this.goal } : {}),
      ...(this.checkPassedAt !== undefined ? { checkPassedAt: this.checkPassedAt } : {}),
      ...(this.inspection ? { inspection: this.inspection } : {}),
      ...(this.kept.length ? { kept: this.kept } : {}),
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
      case 'inspections':
        // Bounded as every kept inspection is; saved with the run as it says 'paused'.
        this.inspection = keptInspection(message.last);
        this.kept = keptUpdates(this.kept, message.earlier);
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
