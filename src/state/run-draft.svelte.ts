/** The "New run" form's state: a run spec being edited, filled from the catalog's defaults. */
import type {
  AlgorithmInfo,
  FieldError,
  RunCatalog,
  RunSpec,
  SettingValue,
} from '../worker/run-protocol';

export class RunDraft {
  algo = $state('');
  env = $state('');
  task = $state('');
  seed = $state<number | null>(1);
  backend = $state<'auto' | 'cpu'>('auto');
  sftSteps = $state<number | null>(100);
  /** Values as the inputs hold them (a cleared number input is null: refused by the check). */
  config = $state<Record<string, SettingValue | null>>({});
  errors = $state.raw<FieldError[]>([]);
  private checks = 0;

  constructor(
    readonly catalog: RunCatalog,
    initial: { algo?: string; env?: string; backend?: 'auto' | 'cpu' } = {},
  ) {
    this.backend = initial.backend ?? 'auto';
    this.task = catalog.tasks[0]?.name ?? '';
    this.sftSteps = catalog.sftSteps.default;
    this.select(initial.algo ?? catalog.algorithms[0]?.name ?? '', initial.env);
  }

  get info(): AlgorithmInfo | undefined {
    return this.catalog.algorithms.find((a) => a.name === this.algo);
  }

  /** Picks an algorithm and resets its settings to their defaults. */
  select(algo: string, env?: string): void {
    this.algo = algo;
    const info = this.info;
    this.config = { ...(info?.defaults ?? {}) };
    if (info?.family === 'env') {
      this.env = env && info.envs.includes(env) ? env : (info.envs[0] ?? '');
    }
  }

  get spec(): RunSpec {
    const lm = this.info?.family === 'lm';
    return {
      algo: this.algo,
      ...(lm ? { task: this.task, sftSteps: this.sftSteps as number } : { env: this.env }),
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
