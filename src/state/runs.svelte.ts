/**
 * The lab's runs: each one lives in its own worker (src/worker/run.worker.ts); this rune state
 * holds what the UI shows of it — status, backend, metric series, events — and sends it commands.
 * The main thread never trains.
 */
import { proxy } from 'comlink';
import { halveSeries } from './chart';
import type {
  FieldError,
  HyperparamResult,
  RunCatalog,
  RunEvent,
  RunMessage,
  RunSpec,
  RunStatus,
  RunWorkerApi,
  Settings,
} from '../worker/run-protocol';

/** What the manager needs of a run worker (the comlink proxy in the app, a fake in tests). */
export interface RunPort {
  api: Pick<RunWorkerApi, 'start' | 'pause' | 'step' | 'setHyperparams' | 'dispose'> & {
    createRun(spec: RunSpec, listener: (message: RunMessage) => void): Promise<void>;
  };
  terminate(): void;
}

/** Where the catalog and spec checks come from (the lab worker in the app). */
export interface CatalogPort {
  runCatalog(): Promise<RunCatalog>;
  checkRunSpec(spec: RunSpec): Promise<FieldError[]>;
}

/** One metric of one run: x = update number, y = value (only updates that reported it). */
export interface Series {
  x: number[];
  y: number[];
}

/** Line colours, one per run in creation order (distinguishable, AA contrast on white). */
export const RUN_COLORS = ['#2f5bea', '#d1495b', '#1f9d6b', '#b86e00', '#7b3fbf', '#00818a'];

/** Points kept per metric of a run; longer histories are halved (neighbours merged). */
export const MAX_POINTS = 10_000;

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error));

export class LabRun {
  status = $state<RunStatus>('warming');
  error = $state<string | undefined>(undefined);
  backend = $state.raw<{ kind: 'webgpu' | 'cpu'; line: string } | undefined>(undefined);
  warmup = $state.raw<{ done: number; total: number; successRate?: number } | undefined>(undefined);
  /** Metric name → series. Arrays grow in place; the container is replaced on every batch. */
  series = $state.raw<Record<string, Series>>({});
  events = $state.raw<RunEvent[]>([]);
  /** The config in force, as the worker last reported it. */
  config = $state.raw<Settings>({});
  steps = $state(0);
  /** A command is in flight (buttons wait for it). */
  busy = $state(false);

  constructor(
    readonly id: string,
    readonly label: string,
    readonly color: string,
    readonly spec: RunSpec,
    readonly port: RunPort,
  ) {
    this.config = { ...spec.config };
  }

  receive(message: RunMessage): void {
    switch (message.type) {
      case 'warmup':
        this.warmup = { ...message };
        break;
      case 'backend':
        this.backend = { kind: message.kind, line: message.line };
        break;
      case 'status':
        this.status = message.status;
        if (message.error !== undefined) this.error = message.error;
        break;
      case 'update': {
        const series = this.series;
        for (const { step, metrics } of message.points) {
          for (const [name, value] of Object.entries(metrics)) {
            const s = (series[name] ??= { x: [], y: [] });
            s.x.push(step);
            s.y.push(value);
            if (s.x.length > MAX_POINTS) halveSeries(s.x, s.y);
          }
          this.steps = step;
        }
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
  /** Runs alive at once (each is a worker, and for language models a GPU device). Default 8. */
  maxRuns?: number;
}

export class RunManager {
  runs = $state.raw<LabRun[]>([]);
  catalog = $state.raw<RunCatalog | undefined>(undefined);
  catalogError = $state<string | undefined>(undefined);
  private created = 0;

  constructor(private readonly options: RunManagerOptions) {}

  get maxRuns(): number {
    return this.options.maxRuns ?? 8;
  }

  async loadCatalog(): Promise<void> {
    if (this.catalog) return;
    try {
      this.catalog = await this.options.catalog.runCatalog();
    } catch (error) {
      this.catalogError = errorText(error);
    }
  }

  check(spec: RunSpec): Promise<FieldError[]> {
    return this.options.catalog.checkRunSpec(spec);
  }

  get(id: string): LabRun | undefined {
    return this.runs.find((run) => run.id === id);
  }

  /** Starts a worker and builds the run there; a refused spec leaves the run in 'error'. */
  async create(spec: RunSpec, note = ''): Promise<LabRun> {
    if (this.runs.length >= this.maxRuns) {
      throw new Error(`at most ${this.maxRuns} runs at once: delete one first`);
    }
    this.created += 1;
    const n = this.created;
    const where = spec.env ?? spec.task ?? '';
    const label = `#${n} ${spec.algo} on ${where}, seed ${spec.seed}${note ? ` (${note})` : ''}`;
    const color = RUN_COLORS[(n - 1) % RUN_COLORS.length]!;
    const run = new LabRun(`run-${n}`, label, color, structuredClone(spec), this.options.spawn());
    this.runs = [...this.runs, run];
    await this.command(run, () =>
      run.port.api.createRun(
        run.spec,
        proxy((message: RunMessage) => run.receive(message)),
      ),
    );
    return run;
  }

  start(run: LabRun): Promise<void> {
    return this.command(run, () => run.port.api.start());
  }

  pause(run: LabRun): Promise<void> {
    return this.command(run, () => run.port.api.pause());
  }

  step(run: LabRun): Promise<void> {
    return this.command(run, () => run.port.api.step());
  }

  /** Validated in the worker; applied at the run's next update (an event marks the step). */
  async setHyperparams(run: LabRun, partial: Settings): Promise<HyperparamResult> {
    try {
      return await run.port.api.setHyperparams(partial);
    } catch (error) {
      return { ok: false, error: errorText(error) };
    }
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

  /** Stops the run, frees its model and ends its worker. */
  async remove(run: LabRun): Promise<void> {
    this.runs = this.runs.filter((r) => r !== run);
    try {
      await run.port.api.dispose();
    } catch {
      // The worker may already be gone; terminating it is all that is left.
    } finally {
      run.port.terminate();
    }
  }

  private async command(run: LabRun, action: () => Promise<unknown>): Promise<void> {
    run.busy = true;
    try {
      await action();
      if (run.status !== 'error') run.error = undefined;
    } catch (error) {
      run.error = errorText(error);
      if (run.status === 'warming') run.status = 'error';
    } finally {
      run.busy = false;
    }
  }
}
