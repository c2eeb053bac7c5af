/** The "New run" form's state: a run spec being edited, filled from the catalog's defaults. */
import type {
  AlgorithmInfo,
  FieldError,
  ReferenceEngine,
  RunCatalog,
  RunSpec,
  SettingValue,
  TaskInfo,
} from '../worker/run-protocol';

export class RunDraft {
  algo = $state('');
  env = $state('');
  task = $state('');
  seed = $state<number | null>(1);
  backend = $state<'auto' | 'cpu'>('auto');
  sftSteps = $state<number | null>(100);
  /** Language models: the engine that scores the frozen reference (KL term, DPO). */
  reference = $state<ReferenceEngine>('engine');
  /** Values as the inputs hold them (a cleared number input is null: refused by the check). */
  config = $state<Record<string, SettingValue | null>>({});
  /** The task's options (language models), from the task's defaults. */
  taskOptions = $state<Record<string, SettingValue | null>>({});
  errors = $state.raw<FieldError[]>([]);
  private checks = 0;

  constructor(
    readonly catalog: RunCatalog,
    initial: { algo?: string; env?: string; backend?: 'auto' | 'cpu' } = {},
  ) {
    this.backend = initial.backend ?? 'auto';
    this.sftSteps = catalog.sftSteps.default;
    this.select(initial.algo ?? catalog.algorithms[0]?.name ?? '', initial.env);
    this.selectTask(catalog.tasks[0]?.name ?? '');
  }

  get taskInfo(): TaskInfo | undefined {
    return this.catalog.tasks.find((t) => t.name === this.task);
  }

  /**
   * Picks a task: its options go back to their defaults, and the settings it needs (e.g. a longer
   * turn budget for agent tasks) replace the algorithm's defaults.
   */
  selectTask(task: string): void {
    this.task = task;
    const info = this.taskInfo;
    this.taskOptions = { ...(info?.defaults ?? {}) };
    const recommended = info?.recommended ?? {};
    const defaults = this.info?.defaults ?? {};
    if ('maxNewTokens' in this.config) {
      this.config.maxNewTokens = recommended.maxNewTokens ?? defaults.maxNewTokens ?? null;
    }
    this.sftSteps = recommended.sftSteps ?? this.catalog.sftSteps.default;
  }

  /** The run will score a frozen reference: always (DPO), or when its KL term is on. */
  get usesReference(): boolean {
    const when = this.info?.reference;
    return when === 'always' || (when === 'kl' && Number(this.config.klCoef ?? 0) > 0);
  }

  get info(): AlgorithmInfo | undefined {
    return this.catalog.algorithms.find((a) => a.name === this.algo);
  }

  /** Picks an algorithm and resets its settings to their defaults (plus the task's needs). */
  select(algo: string, env?: string): void {
    this.algo = algo;
    const info = this.info;
    this.config = { ...(info?.defaults ?? {}) };
    const maxNewTokens = this.taskInfo?.recommended.maxNewTokens;
    if (info?.family === 'lm' && maxNewTokens !== undefined && 'maxNewTokens' in this.config) {
      this.config.maxNewTokens = maxNewTokens;
    }
    if (info?.family === 'env') {
      this.env = env && info.envs.includes(env) ? env : (info.envs[0] ?? '');
    }
  }

  get spec(): RunSpec {
    const lm = this.info?.family === 'lm';
    return {
      algo: this.algo,
      ...(lm
        ? {
            task: this.task,
            taskOptions: { ...this.taskOptions } as Record<string, SettingValue>,
            sftSteps: this.sftSteps as number,
            // Only where a reference is scored: a run file never names an engine it did not use.
            ...(this.usesReference ? { reference: this.reference } : {}),
          }
        : { env: this.env }),
      seed: this.seed as number,
      config: { ...this.config } as Record<string, SettingValue>,
      backend: this.backend,
    };
  }

  errorOf(field: string): string | undefined {
    return this.errors.find((e) => e.field === field)?.message;
  }

  /** Runs `check` on the current spec; only the latest answer is kept. */
  async validate(check: (spec: RunSpec) => Promise<FieldError[]>): Promise<boolean> {
    const id = ++this.checks;
    const errors = await check(this.spec);
    if (id === this.checks) this.errors = errors;
    return errors.length === 0;
  }
}
