/**
 * LoRA-GRPO on the brought model, in the tab (the "Train with LoRA-GRPO" part of #/models): the run
 * and its matched control — the same seed, prompts and adapters' start with lr 1e-9 — each in a
 * worker of its own (src/worker/lora.worker.ts), side by side, update by update. The chart shows
 * each run's batch strict accuracy and held-out strict success (64 prompts × 2 answers, the same
 * for both and at every check, src/rl/lora-grpo-session.ts); the verdict compares the two gains.
 * The trained adapters download in PEFT's layout.
 */
import { transfer, type Remote } from 'comlink';
import type { ExportFile } from '../compare/framework-export';
import { loraRunExport } from '../compare/lora-run-export';
import { errorText } from '../util/error-text';
import { startLoraWorker } from '../worker/client';
import type { LoraRunReport, LoraWorkerApi } from '../worker/lora-protocol';
import type { SampleInspection } from '../worker/run-protocol';
import { keptInspection } from './kept-inspection';
import { loraRecipe, type LoraRecipeId } from '../worker/lora-recipes';
import { llamaLoraFromParams, resolveLoraTargets } from '../models/hf/llama-lora';
import { adapterConfigText, adapterWeightsBytes } from '../models/hf/peft-adapter';
import type { ModelSpec } from '../models/model-spec';
import { shortFingerprint, weightsFingerprint } from '../models/weights-fingerprint';
import { storedLoraRun, type LoraRunStorePort, type StoredLoraRun } from './lora-run-store';
import { LORA_GROUP_SIZE } from './lora-plan';
import type { Backend } from './model-fit';
import type { TrainingInputs } from './model-load';

/**
 * Tasks a chat model can be trained on here, with the options the page offers and the most
 * tokens an answer may take (a tool task's: each turn, a call in the template's JSON).
 */
export const LORA_TASKS = [
  {
    id: 'addition-reversed',
    label: 'Addition, 1–2 digits, answer reversed (the tiny chat model’s warm-up task)',
    name: 'addition',
    options: { minDigits: 1, maxDigits: 2, reverseAnswer: true },
    maxNewTokens: 8,
  },
  {
    id: 'addition',
    label: 'Addition, 1–2 digits',
    name: 'addition',
    options: { minDigits: 1, maxDigits: 2 },
    maxNewTokens: 8,
  },
  {
    id: 'sort',
    label: 'Sort 3–6 letters of a–e',
    name: 'sort',
    options: { minLength: 3, maxLength: 6, alphabet: 'abcde' },
    maxNewTokens: 8,
  },
  {
    id: 'reverse',
    label: 'Reverse 3–6 letters of a–e',
    name: 'reverse',
    options: { minLength: 3, maxLength: 6, alphabet: 'abcde' },
    maxNewTokens: 8,
  },
  {
    id: 'wordproblem',
    label: 'Word problems, GSM8K-style, one step (for instruction-tuned models)',
    name: 'wordproblem',
    options: { minSteps: 1, maxSteps: 1, maxNumber: 10, maxAnswer: 20 },
    maxNewTokens: 8,
  },
  {
    id: 'multiply-calc',
    label: 'Multiply 2–3 digit numbers with a calculator tool (tool calls in the model’s format)',
    name: 'multiply',
    options: { minDigits: 2, maxDigits: 3, maxTurns: 3, maxCalls: 2 },
    maxNewTokens: 48,
  },
  {
    id: 'shopping',
    label: 'Total a shopping list: look prices up, then calculate (tool task)',
    name: 'shopping',
    options: { items: 2, maxQuantity: 3, maxTurns: 4, maxCalls: 3 },
    maxNewTokens: 48,
  },
  {
    id: 'facts',
    label: 'Answer from a small fact collection with a search tool (tool task)',
    name: 'facts',
    options: { maxTurns: 3, maxCalls: 2 },
    maxNewTokens: 48,
  },
] as const;
export type LoraTaskId = (typeof LORA_TASKS)[number]['id'];

/** The form; defaults are the recipe bench:learn --only=lora measures (bench/learn/lora-grpo.ts). */
export interface LoraForm {
  task: LoraTaskId;
  /** Which of the GRPO family trains (src/worker/lora-recipes.ts). */
  recipe: LoraRecipeId;
  rank: number;
  lr: number;
  promptsPerUpdate: number;
  updates: number;
  seed: number;
}

/** The control's learning rate: the same run with (almost) no update. */
export const CONTROL_LR = 1e-9;
/** Held-out checks every this many updates (and at the last). */
export const HELD_OUT_EVERY = 10;
/**
 * A running run is stored at each held-out check, and besides whenever this long has passed since
 * its last store: on a real model ten updates can take many minutes, and a reload should cost
 * seconds of training, not the updates since the last check. (A store writes both runs' adapters
 * and optimizer state: for SmolLM2-135M at rank 16, about 60 MB each.)
 */
export const SAVE_EVERY_MS = 30_000;
/** The gain in held-out strict success the page calls a clear effect. */
export const CLEAR_GAIN = 0.3;

export interface LoraLine {
  label: string;
  /** (update, batch strict accuracy) */
  batch: { x: number[]; y: number[] };
  /** (update, held-out strict success), update 0 first */
  heldOut: { x: number[]; y: number[] };
  seconds: number;
}

type Status = 'idle' | 'preparing' | 'training' | 'paused' | 'done' | 'failed';

/** The model a run needs, read when it starts or resumes (null: no model loaded). */
export type TrainingInputsSource = (
  onTensor: (done: number, total: number) => void,
) => Promise<TrainingInputs | undefined>;

export interface LoraTrainOptions {
  /** Where the run is kept across page loads, under `key`; none: it lasts while the page does. */
  store?: Promise<LoraRunStorePort> | LoraRunStorePort;
  key?: string;
  /** Starts one run's worker; default: a Web Worker (tests give in-process ones). */
  startWorker?: () => LoraWorker;
  /** Milliseconds of training between stores besides the held-out checks (default SAVE_EVERY_MS). */
  saveEveryMs?: number;
  /** The clock saveEveryMs is read on (milliseconds; default performance.now). */
  now?: () => number;
}

type LoraWorker = { api: Remote<LoraWorkerApi>; terminate: () => void };

/** The workers' pair as it runs: the run's, then the control's. */
interface Live {
  workers: LoraWorker[];
  form: LoraForm;
  source: string;
  spec: ModelSpec;
  fingerprint: string;
}

export class LoraTrainState {
  form = $state<LoraForm>({
    task: 'addition-reversed',
    recipe: 'grpo',
    rank: 8,
    lr: 5e-3,
    promptsPerUpdate: 16,
    updates: 40,
    seed: 1,
  });
  status = $state<Status>('idle');
  error = $state<string | undefined>(undefined);
  progress = $state<string | undefined>(undefined);
  parameters = $state<number | undefined>(undefined);
  /** Where the runs train, as the worker says it (the CPU, or the GPU adapter). */
  device = $state<string | undefined>(undefined);
  /** The run, then its control. */
  lines = $state.raw<LoraLine[]>([]);
  /** Whether workers hold the run now (live changes go to them). */
  holdsWorkers = $state(false);
  /** Live changes to the run (not its control): the update each took effect at, and what. */
  changes = $state.raw<LiveChange[]>([]);
  /** The run's last update, token by token (bounded as the lab keeps inspections). */
  inspection = $state.raw<SampleInspection | undefined>(undefined);
  /**
   * The model a paused run was trained on, when its workers are gone (after a reload): resuming
   * needs this model loaded again.
   */
  savedBase = $state<{ source: string; fingerprint: string } | undefined>(undefined);
  /** Why runs are not kept across reloads, when they are not. */
  storeNote = $state<string | undefined>(undefined);
  private live: Live | undefined;
  /** The last stored record: what a resume after a reload and the adapter's download read. */
  private stored: StoredLoraRun | undefined;
  private pauseAsked = false;
  private readonly store: Promise<LoraRunStorePort> | undefined;
  private readonly key: string;
  private readonly startWorker: () => LoraWorker;
  private readonly saveEveryMs: number;
  private readonly now: () => number;

  constructor(options: LoraTrainOptions = {}) {
    this.store = options.store ? Promise.resolve(options.store) : undefined;
    this.key = options.key ?? 'panel';
    this.startWorker = options.startWorker ?? startLoraWorker;
    this.saveEveryMs = options.saveEveryMs ?? SAVE_EVERY_MS;
    this.now = options.now ?? (() => performance.now());
  }

  get busy(): boolean {
    return this.status === 'preparing' || this.status === 'training';
  }

  /** Updates done (the chart's last batch point). */
  get step(): number {
    return this.lines[0]?.batch.x.at(-1) ?? 0;
  }

  /** The gains (last held-out − first) of the run and the control, once both have two checks. */
  get gains(): { run: number; control: number } | undefined {
    const [run, control] = this.lines;
    const gain = (l: LoraLine | undefined) =>
      l && l.heldOut.y.length > 1 ? l.heldOut.y.at(-1)! - l.heldOut.y[0]! : undefined;
    const a = gain(run);
    const b = gain(control);
    return a === undefined || b === undefined ? undefined : { run: a, control: b };
  }

  /** Shows the run kept from an earlier visit, if there is one: paused, or done. */
  async restoreSaved(): Promise<void> {
    const store = await this.store;
    if (!store) return;
    this.storeNote = store.unavailable;
    const saved = await store.load(this.key).catch(() => undefined);
    if (!saved || this.status !== 'idle') return;
    this.stored = saved;
    this.form = { ...this.form, ...(saved.form as Partial<LoraForm>) };
    this.lines = saved.lines.map((line) => ({ ...line }));
    this.changes = changesOf(saved);
    this.parameters = saved.parameters;
    this.device = saved.device;
    this.savedBase = { source: saved.source, fingerprint: saved.fingerprint };
    this.status = saved.finished ? 'done' : 'paused';
  }

  /** Starts a new run (and its control) from the form, replacing any earlier one. */
  async start(inputs: TrainingInputsSource, backend: Backend): Promise<void> {
    if (this.busy) return;
    this.forget();
    await this.run(async () => {
      const form = { ...this.form };
      const live = await this.open(inputs, backend, form);
      this.progress = 'Measuring held-out success before training';
      const starts = await Promise.all(live.workers.map(({ api }) => api.heldOut()));
      const name = `LoRA-${loraRecipe(form.recipe).short}`;
      this.lines = [name, `control (lr ${CONTROL_LR})`].map((label, i) => ({
        label,
        batch: { x: [], y: [] },
        heldOut: { x: [0], y: [starts[i]!] },
        seconds: 0,
      }));
      return live;
    });
  }

  /**
   * Goes on with a paused run: at once where its workers still hold it, else (after a reload)
   * from its stored checkpoints, once the same model (by its weights' fingerprint) is loaded.
   */
  async resume(inputs: TrainingInputsSource, backend: Backend): Promise<void> {
    if (this.status !== 'paused') return;
    if (this.live) {
      const live = this.live;
      await this.run(async () => live);
      return;
    }
    const saved = this.stored;
    if (!saved) return;
    await this.run(async () => {
      const form = { ...this.form, ...(saved.form as Partial<LoraForm>) };
      const live = await this.open(inputs, backend, form, saved);
      this.progress = `Going on from update ${saved.checkpoints[0]!.run.step}`;
      await Promise.all(live.workers.map(({ api }, i) => api.resume(saved.checkpoints[i]!)));
      this.lines = saved.lines.map((line) => ({ ...line }));
      this.savedBase = undefined;
      return live;
    });
  }

  /**
   * Changes the run's learning rate from its next update on (its control keeps lr 1e-9). Only
   * while its workers hold it; a refused value is shown as the error and changes nothing.
   */
  async setLearningRate(lr: number): Promise<void> {
    const live = this.live;
    if (!live || !(this.busy || this.status === 'paused')) return;
    try {
      await live.workers[0]!.api.setHyperparams({ lr });
      this.error = undefined;
    } catch (error) {
      this.error = errorText(error);
    }
  }

  /**
   * The run's learning rate now, where a live change set it (the form keeps the one it started
   * with): the value and the update it took effect at.
   */
  get changedLr(): { value: number; step: number } | undefined {
    const last = this.changes.findLast((c) => typeof c.values.lr === 'number');
    return last ? { value: last.values.lr as number, step: last.step } : undefined;
  }

  /** Pauses after the update in progress; the run is kept (and stored, where it can be). */
  pause(): void {
    if (this.busy) this.pauseAsked = true;
  }

  /** Forgets the paused or finished run (its stored copy too), for a new one from the form. */
  async discard(): Promise<void> {
    if (this.busy) return;
    this.forget();
    this.parameters = undefined;
    this.device = undefined;
    this.error = undefined;
    this.status = 'idle';
    const store = await this.store;
    await store?.remove(this.key).catch(() => undefined);
  }

  /** Drops the run shown: its workers, its stored copy in memory, its lines and changes. */
  private forget(): void {
    this.dispose();
    this.stored = undefined;
    this.savedBase = undefined;
    this.lines = [];
    this.inspection = undefined;
    this.changes = [];
  }

  /** Reads the model, opens both workers on it; refuses a model other than `saved`'s base. */
  private async open(
    inputs: TrainingInputsSource,
    backend: Backend,
    form: LoraForm,
    saved?: StoredLoraRun,
  ): Promise<Live> {
    const read = await inputs(
      (done, total) => (this.progress = `Reading weights ${done}/${total}`),
    );
    if (!read) throw new Error('load a model with its tokenizer first');
    this.progress = 'Fingerprinting the weights';
    const fingerprint = await weightsFingerprint(read.base);
    if (saved && saved.fingerprint !== fingerprint) {
      throw new Error(
        `the paused run was trained on ${saved.source} (${shortFingerprint(saved.fingerprint)}); ` +
          `the model loaded is ${read.source} (${shortFingerprint(fingerprint)}): load the run's model to go on`,
      );
    }
    const task = LORA_TASKS.find((t) => t.id === form.task)!;
    this.progress = 'Starting the two workers';
    const workers = [this.startWorker(), this.startWorker()];
    this.live = { workers, form, source: read.source, spec: read.spec, fingerprint };
    this.holdsWorkers = true;
    const lrs = [form.lr, CONTROL_LR];
    // Each worker owns its weights: the run gets these, the control one copy; both are moved to
    // the worker (transferred), not copied again.
    const bases = [read.base, read.base.slice()];
    const opened = await Promise.all(
      workers.map(({ api }, i) =>
        api.open(
          transfer(
            {
              source: read.source,
              spec: read.spec,
              base: bases[i]!,
              fingerprint,
              tokenizer: read.tokenizerFiles,
              task: { name: task.name, options: { ...task.options } },
              recipe: form.recipe,
              rank: form.rank,
              alpha: 2 * form.rank,
              lr: lrs[i]!,
              promptsPerUpdate: form.promptsPerUpdate,
              groupSize: LORA_GROUP_SIZE,
              maxNewTokens: task.maxNewTokens,
              seed: form.seed,
              backend,
            },
            [bases[i]!.buffer],
          ),
        ),
      ),
    );
    this.parameters = opened[0]!.parameters;
    this.device = opened[0]!.device;
    return this.live;
  }

  /** Prepares (start or resume), then trains update by update until done or paused. */
  private async run(prepare: () => Promise<Live>): Promise<void> {
    this.pauseAsked = false;
    this.error = undefined;
    this.status = 'preparing';
    try {
      const live = await prepare();
      this.status = 'training';
      const { updates } = live.form;
      let lastSave = this.now();
      for (let u = this.step + 1; u <= updates && !this.pauseAsked; u++) {
        this.progress = `Update ${u} of ${updates}`;
        const check = u % HELD_OUT_EVERY === 0 || u === updates;
        const reports = await Promise.all(live.workers.map(({ api }) => api.update(check)));
        this.lines = this.lines.map((line, i) => withReport(line, reports[i]!));
        const changed = reports[0]!.changes;
        if (changed) this.changes = [...this.changes, liveChange(u, changed)];
        const inspection = await live.workers[0]!.api.inspect();
        if (inspection) this.inspection = keptInspection(inspection) as SampleInspection;
        // Kept at each held-out check and every saveEveryMs (SAVE_EVERY_MS says why).
        if (u < updates && (check || this.now() - lastSave >= this.saveEveryMs)) {
          await this.save(live, false);
          lastSave = this.now();
        }
      }
      const finished = this.step >= updates;
      this.progress = 'Saving the run';
      await this.save(live, finished);
      this.status = finished ? 'done' : 'paused';
      this.progress = undefined;
    } catch (error) {
      this.error = errorText(error);
      // The workers may be broken: what the run keeps is its last stored checkpoint, which a
      // resume opens fresh workers on.
      this.dispose();
      const saved = this.stored;
      if (saved) {
        this.lines = saved.lines.map((line) => ({ ...line }));
        this.changes = changesOf(saved);
      }
      this.status = saved && !saved.finished ? 'paused' : saved ? 'done' : 'failed';
      this.progress = undefined;
    }
  }

  /** Stores the run now (both checkpoints, at the same update); a failed write is a note. */
  private async save(live: Live, finished: boolean): Promise<void> {
    const store = await this.store;
    const checkpoints = await Promise.all(live.workers.map(({ api }) => api.checkpoint()));
    const record = storedLoraRun({
      form: { ...live.form },
      source: live.source,
      spec: live.spec,
      fingerprint: live.fingerprint,
      parameters: this.parameters ?? 0,
      ...(this.device ? { device: this.device } : {}),
      lines: this.lines.map((line) => ({ ...line })),
      checkpoints,
      finished,
    });
    this.stored = record;
    if (!store) return;
    try {
      await store.save(this.key, record);
    } catch (error) {
      this.storeNote = `the run could not be stored (${errorText(error)}): it lasts until the page closes`;
    }
  }

  /**
   * The trained adapters as PEFT's two files: from the run's worker, or after a reload from its
   * stored checkpoint.
   */
  async adapter(): Promise<{ config: string; weights: Uint8Array } | undefined> {
    if (this.live) return this.live.workers[0]!.api.adapter();
    const saved = this.stored;
    if (!saved) return undefined;
    const { lora, run } = saved.checkpoints[0]!;
    const settings = { ...lora, targets: resolveLoraTargets(lora.targets) };
    const trained = llamaLoraFromParams(saved.spec, settings, run.policy.params);
    return {
      config: adapterConfigText(trained.settings, saved.source),
      weights: adapterWeightsBytes(trained),
    };
  }

  /**
   * The run as files for TRL and verl (its GRPO settings, task reward and the adapters' LoRA
   * settings; the model named where its source is a Hub id), or undefined before a run.
   */
  frameworkFiles(): ExportFile[] | undefined {
    const started = this.live ?? this.stored;
    if (!started) return undefined;
    const form = { ...this.form, ...(started.form as Partial<LoraForm>) };
    const { source } = started;
    const task = LORA_TASKS.find((t) => t.id === form.task)!;
    const out = loraRunExport(
      {
        lr: form.lr,
        promptsPerUpdate: form.promptsPerUpdate,
        groupSize: LORA_GROUP_SIZE,
        maxNewTokens: task.maxNewTokens,
        task: { name: task.name, options: { ...task.options } },
        recipe: form.recipe,
      },
      {
        rank: form.rank,
        alpha: 2 * form.rank,
        targets: 'all-linear',
        ...(/^[\w.-]+\/[\w.-]+$/.test(source) ? { model: source } : {}),
      },
    );
    if (!out.ok) return undefined;
    return [out.trl, out.verl].flatMap((artifact) => (artifact.ok ? artifact.files : []));
  }

  dispose(): void {
    for (const worker of this.live?.workers ?? []) worker.terminate();
    this.live = undefined;
    this.holdsWorkers = false;
  }
}

/** A live change: the update it took effect at, the settings it set, and those as one line. */
export interface LiveChange {
  step: number;
  values: Record<string, number | boolean | string>;
  text: string;
}

/** The change at `step` of `values`, its text "lr 0.002" for { lr: 0.002 }. */
function liveChange(step: number, values: LiveChange['values']): LiveChange {
  const text = Object.entries(values)
    .map(([key, value]) => `${key} ${String(value)}`)
    .join(', ');
  return { step, values, text };
}

/** The live changes a stored run's trainer recorded. */
function changesOf(saved: StoredLoraRun): LiveChange[] {
  return saved.checkpoints[0]!.run.trainer.events.flatMap((e) =>
    e.kind === 'hyperparams' ? [liveChange(e.step, e.changes)] : [],
  );
}

function withReport(line: LoraLine, report: LoraRunReport): LoraLine {
  return {
    ...line,
    batch: { x: [...line.batch.x, report.update], y: [...line.batch.y, report.strictAccuracy] },
    heldOut:
      report.heldOut === undefined
        ? line.heldOut
        : { x: [...line.heldOut.x, report.update], y: [...line.heldOut.y, report.heldOut] },
    seconds: report.seconds,
  };
}
