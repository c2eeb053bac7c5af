/** The "New run" form's state: a run spec being edited, filled from the catalog's defaults. */
import type { BackendChoice } from '../gpu/backend-choice';
import type { DraftChoice } from './draft-memory';
import {
  DEFAULT_CURRICULUM_CONFIG,
  DEFAULT_REWARD_MODEL_CONFIG,
  type RewardModelConfig,
} from '../worker/config-specs';
import type {
  AlgorithmInfo,
  FieldError,
  PositionKind,
  ReferenceEngine,
  RetainedTaskSpec,
  RunCatalog,
  RunSpec,
  SettingValue,
  ShippedModelInfo,
  StartFrom,
  TaskInfo,
} from '../worker/run-protocol';

export class RunDraft {
  algo = $state('');
  env = $state('');
  task = $state('');
  seed = $state<number | null>(1);
  backend = $state<BackendChoice>('auto');
  sftSteps = $state<number | null>(100);
  /** Language models: the engine that scores the frozen reference (KL term, DPO). */
  reference = $state<ReferenceEngine>('engine');
  /** Language models: 'new' (random weights), 'shipped:<name>', or 'file' (startFile). */
  start = $state<string>('new');
  /** The checkpoint or ONNX file picked when start is 'file' (raw: bytes are not made reactive). */
  startFile = $state.raw<{ name: string; bytes: Uint8Array } | undefined>(undefined);
  /**
   * Language models, a new model only: how the transformer knows positions. Kept while another
   * start is picked (weights bring their own; the spec then leaves it out), so going back to a new
   * model finds the choice as it was.
   */
  positions = $state<PositionKind>('learned');
  /** Values as the inputs hold them (a cleared number input is null: refused by the check). */
  config = $state<Record<string, SettingValue | null>>({});
  /** The task's options (language models), from the task's defaults. */
  taskOptions = $state<Record<string, SettingValue | null>>({});
  /** Language models: train through the task's rungs (its options then come from the rungs). */
  curriculumOn = $state(false);
  /** Its settings as the inputs hold them (a cleared input is null: refused by the check). */
  curriculum = $state<Record<'threshold' | 'patience', number | null>>({
    ...DEFAULT_CURRICULUM_CONFIG,
  });
  /** Language models: train a reward model before RL (see useRewardModel). */
  rewardModelOn = $state(false);
  /** Its settings as the inputs hold them (a cleared input is null: refused by the check). */
  rewardModel = $state<Record<keyof RewardModelConfig, number | null>>({
    ...DEFAULT_REWARD_MODEL_CONFIG,
  });
  /** Language models: a second task to keep ('' = none; see useRetained). */
  retainedTask = $state('');
  errors = $state.raw<FieldError[]>([]);
  private checks = 0;

  constructor(
    readonly catalog: RunCatalog,
    initial: Partial<DraftChoice> & { backend?: BackendChoice } = {},
  ) {
    this.backend = initial.backend ?? 'auto';
    this.positions = initial.positions ?? 'learned';
    this.sftSteps = catalog.sftSteps.default;
    // A remembered choice may name an algorithm or task this build no longer has.
    const algo = catalog.algorithms.some((a) => a.name === initial.algo) ? initial.algo : undefined;
    const task = catalog.tasks.some((t) => t.name === initial.task) ? initial.task : undefined;
    this.select(algo ?? catalog.algorithms[0]?.name ?? '', initial.env);
    this.selectTask(task ?? catalog.tasks[0]?.name ?? '');
  }

  /** What the form remembers across a reload (see draft-memory.ts). */
  get choice(): DraftChoice {
    return { algo: this.algo, env: this.env, task: this.task, positions: this.positions };
  }

  get taskInfo(): TaskInfo | undefined {
    return this.catalog.tasks.find((t) => t.name === this.task);
  }

  /**
   * What the task's defaults did, measured, for the form to say before Create: shown from the
   * start it was measured from (the task's start made for RL, or a new model where none ships).
   */
  get startExpectation(): string | undefined {
    const recommended = this.taskInfo?.recommended;
    if (!recommended?.expect) return undefined;
    const measuredFrom = recommended.start ? `shipped:${recommended.start}` : 'new';
    return this.start === measuredFrom ? recommended.expect : undefined;
  }

  /**
   * Picks a task: its options go back to their defaults, and the settings it needs (e.g. a longer
   * turn budget for agent tasks) replace the algorithm's defaults.
   */
  selectTask(task: string): void {
    // The last task's recommended settings go back to the algorithm's defaults first.
    const defaults = this.info?.defaults ?? {};
    for (const field of Object.keys(this.taskInfo?.recommended.settings?.[this.algo] ?? {})) {
      if (Object.hasOwn(defaults, field)) this.config[field] = defaults[field] ?? null;
    }
    this.task = task;
    this.start = 'new';
    const info = this.taskInfo;
    this.taskOptions = { ...(info?.defaults ?? {}) };
    const recommended = info?.recommended ?? {};
    if ('maxNewTokens' in this.config) {
      this.config.maxNewTokens = recommended.maxNewTokens ?? defaults.maxNewTokens ?? null;
    }
    this.sftSteps = recommended.sftSteps ?? this.catalog.sftSteps.default;
    // A task with a shipped start made for RL begins there: the form's defaults then learn visibly
    // within 20 updates, where a new model would spend them warming up.
    const start = this.startingModels.find((m) => m.name === recommended.start);
    if (start) this.selectStart(`shipped:${start.name}`);
    this.applyTaskSettings();
  }

  /**
   * The settings the task recommends for this algorithm from its shipped start (e.g. GRPO's two
   * passes over a batch on copy), over the algorithm's defaults; only fields the algorithm has.
   */
  private applyTaskSettings(): void {
    const settings = this.taskInfo?.recommended.settings?.[this.algo] ?? {};
    for (const [field, value] of Object.entries(settings)) {
      if (Object.hasOwn(this.config, field)) this.config[field] = value;
    }
  }

  /** The algorithm can train through a curriculum and the task has more than one rung. */
  get offersCurriculum(): boolean {
    return this.info?.curriculum === true && (this.taskInfo?.levels.length ?? 0) > 1;
  }

  /** The curriculum is on and offered (the task options are then the rungs'). */
  get usesCurriculum(): boolean {
    return this.curriculumOn && this.offersCurriculum;
  }

  /** The algorithm can train against a learned reward model. */
  get offersRewardModel(): boolean {
    return this.info?.rewardModel === true;
  }

  /**
   * Turns the reward model on or off. On, its score gets weight 1 (else it would be trained and
   * charted but not rewarded); off, the weight goes back to 0, which a run without one requires.
   */
  useRewardModel(on: boolean): void {
    this.rewardModelOn = on;
    if (!('rewardModelWeight' in this.config)) return;
    if (on && !this.config.rewardModelWeight) this.config.rewardModelWeight = 1;
    if (!on) this.config.rewardModelWeight = 0;
  }

  /** The algorithm can keep a retained task (ptx and its success rate). */
  get offersRetained(): boolean {
    return this.info?.retained === true;
  }

  /**
   * Keeps `task` as the retained task ('' = none). On, its greedy success is charted (32 prompts a
   * update unless set); off, ptxCoef and retainedEvalPrompts go back to 0, which a run without one
   * requires.
   */
  useRetained(task: string): void {
    this.retainedTask = task;
    if (!('retainedEvalPrompts' in this.config)) return;
    if (task && !this.config.retainedEvalPrompts) this.config.retainedEvalPrompts = 32;
    if (!task) this.config.retainedEvalPrompts = this.config.ptxCoef = 0;
  }

  /**
   * The retained task as the spec holds it: with the options a shipped start was warmed up on for
   * that task (its context fits them, and they are what the model knows), else the task's defaults.
   */
  private get retained(): RetainedTaskSpec | undefined {
    if (!this.retainedTask || !this.offersRetained) return undefined;
    const shipped = this.startingModels.find((m) => `shipped:${m.name}` === this.start);
    const known = shipped?.warmUp?.find((part) => part.task === this.retainedTask);
    return known
      ? { task: this.retainedTask, taskOptions: { ...known.taskOptions } }
      : { task: this.retainedTask };
  }

  /** The run will score a frozen reference: always (DPO), or when its KL term is on. */
  get usesReference(): boolean {
    const when = this.info?.reference;
    return when === 'always' || (when === 'kl' && Number(this.config.klCoef ?? 0) > 0);
  }

  /** The shipped checkpoints warmed up on the selected task. */
  get startingModels(): ShippedModelInfo[] {
    return this.catalog.startingModels.filter((m) => m.task === this.task);
  }

  /**
   * Picks what the run starts from. A shipped checkpoint brings the task options it was warmed up
   * with (its context fits them) and needs no warm-up; a new model gets the task's usual warm-up.
   */
  selectStart(start: string): void {
    this.start = start;
    const shipped = this.startingModels.find((m) => `shipped:${m.name}` === start);
    if (shipped) {
      this.taskOptions = { ...(this.taskInfo?.defaults ?? {}), ...shipped.taskOptions };
      this.sftSteps = 0;
    } else if (start === 'file') {
      this.sftSteps = 0;
    } else {
      this.sftSteps = this.taskInfo?.recommended.sftSteps ?? this.catalog.sftSteps.default;
    }
  }

  private get init(): StartFrom | undefined {
    if (this.start.startsWith('shipped:')) {
      return { kind: 'shipped', model: this.start.slice('shipped:'.length) };
    }
    if (this.start === 'file') {
      // No file yet: an empty one, which the spec check refuses ("choose a file").
      return { kind: 'file', ...(this.startFile ?? { name: '', bytes: new Uint8Array(0) }) };
    }
    return undefined;
  }

  /** The spec as a short string (a start file by name and size): re-check when it changes. */
  get fingerprint(): string {
    const file = this.startFile;
    return JSON.stringify({
      ...this.spec,
      init: this.start === 'file' ? [file?.name, file?.bytes.length] : this.start,
    });
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
    if (info?.family === 'lm') this.applyTaskSettings();
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
            // With a curriculum the rungs set the task's options.
            ...(this.usesCurriculum
              ? {
                  curriculum: { ...this.curriculum } as { threshold: number; patience: number },
                }
              : { taskOptions: { ...this.taskOptions } as Record<string, SettingValue> }),
            sftSteps: this.sftSteps as number,
            // Only where a reference is scored: a run file never names an engine it did not use.
            ...(this.usesReference ? { reference: this.reference } : {}),
            ...(this.init ? { init: this.init } : {}),
            // Learned positions are the spec's default: left out, so such specs read as before.
            ...(this.start === 'new' && this.positions === 'rotary'
              ? { positions: this.positions }
              : {}),
            ...(this.rewardModelOn && this.offersRewardModel
              ? { rewardModel: { ...this.rewardModel } as RewardModelConfig }
              : {}),
            ...(this.retained ? { retained: this.retained } : {}),
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
