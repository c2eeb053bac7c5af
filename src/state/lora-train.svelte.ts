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
import { LORA_GROUP_SIZE, LORA_MAX_NEW_TOKENS } from './lora-plan';
import type { Backend } from './model-fit';
import type { TrainingInputs } from './model-load';

/** Tasks a chat model can be trained on here, with the options the page offers. */
export const LORA_TASKS = [
  {
    id: 'addition-reversed',
    label: 'Addition, 1–2 digits, answer reversed (the tiny chat model’s warm-up task)',
    name: 'addition',
    options: { minDigits: 1, maxDigits: 2, reverseAnswer: true },
  },
  {
    id: 'addition',
    label: 'Addition, 1–2 digits',
    name: 'addition',
    options: { minDigits: 1, maxDigits: 2 },
  },
  {
    id: 'sort',
    label: 'Sort 3–6 letters of a–e',
    name: 'sort',
    options: { minLength: 3, maxLength: 6, alphabet: 'abcde' },
  },
  {
    id: 'reverse',
    label: 'Reverse 3–6 letters of a–e',
    name: 'reverse',
    options: { minLength: 3, maxLength: 6, alphabet: 'abcde' },
  },
] as const;
export type LoraTaskId = (typeof LORA_TASKS)[number]['id'];

/** The form; defaults are the recipe bench:learn --only=lora measures (bench/learn/lora-grpo.ts). */
export interface LoraForm {
  task: LoraTaskId;
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

type Status = 'idle' | 'preparing' | 'training' | 'done' | 'stopped' | 'failed';

export class LoraTrainState {
  form = $state<LoraForm>({
    task: 'addition-reversed',
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
  private workers: { api: Remote<LoraWorkerApi>; terminate: () => void }[] = [];
  /** The started run's settings and model, for its framework export. */
  private started: { form: LoraForm; source: string } | undefined;
  private stopAsked = false;

  get busy(): boolean {
    return this.status === 'preparing' || this.status === 'training';
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

  async start(
    inputs: (
      onTensor: (done: number, total: number) => void,
    ) => Promise<TrainingInputs | undefined>,
    backend: Backend,
  ): Promise<void> {
    if (this.busy) return;
    this.dispose();
    this.stopAsked = false;
    this.error = undefined;
    this.status = 'preparing';
    this.lines = [];
    try {
      const f = { ...this.form };
      const read = await inputs(
        (done, total) => (this.progress = `Reading weights ${done}/${total}`),
      );
      if (!read) throw new Error('load a model with its tokenizer first');
      this.started = { form: f, source: read.source };
      const task = LORA_TASKS.find((t) => t.id === f.task)!;
      this.progress = 'Starting the two workers';
      this.workers = [startLoraWorker(), startLoraWorker()];
      const lrs = [f.lr, CONTROL_LR];
      // Each worker owns its weights: the run gets these, the control one copy; both are moved
      // to the worker (transferred), not copied again.
      const bases = [read.base, read.base.slice()];
      const opened = await Promise.all(
        this.workers.map(({ api }, i) =>
          api.open(
            transfer(
              {
                source: read.source,
                spec: read.spec,
                base: bases[i]!,
                tokenizer: read.tokenizerFiles,
                task: { name: task.name, options: { ...task.options } },
                rank: f.rank,
                alpha: 2 * f.rank,
                lr: lrs[i]!,
                promptsPerUpdate: f.promptsPerUpdate,
                groupSize: LORA_GROUP_SIZE,
                maxNewTokens: LORA_MAX_NEW_TOKENS,
                seed: f.seed,
                backend,
              },
              [bases[i]!.buffer],
            ),
          ),
        ),
      );
      this.parameters = opened[0]!.parameters;
      this.device = opened[0]!.device;
      this.progress = 'Measuring held-out success before training';
      const starts = await Promise.all(this.workers.map(({ api }) => api.heldOut()));
      this.lines = ['LoRA-GRPO', `control (lr ${CONTROL_LR})`].map((label, i) => ({
        label,
        batch: { x: [], y: [] },
        heldOut: { x: [0], y: [starts[i]!] },
        seconds: 0,
      }));
      this.status = 'training';
      for (let u = 1; u <= f.updates; u++) {
        if (this.stopAsked) break;
        this.progress = `Update ${u} of ${f.updates}`;
        const check = u % HELD_OUT_EVERY === 0 || u === f.updates;
        const reports = await Promise.all(this.workers.map(({ api }) => api.update(check)));
        this.lines = this.lines.map((line, i) => withReport(line, reports[i]!));
      }
      this.status = this.stopAsked ? 'stopped' : 'done';
      this.progress = undefined;
    } catch (error) {
      this.error = errorText(error);
      this.status = 'failed';
      this.progress = undefined;
    }
  }

  /** Ends the run after the update in progress. */
  stop(): void {
    this.stopAsked = true;
  }

  /** The trained adapters as PEFT's two files. */
  async adapter(): Promise<{ config: string; weights: Uint8Array } | undefined> {
    return this.workers[0]?.api.adapter();
  }

  /**
   * The run as files for TRL and verl (its GRPO settings, task reward and the adapters' LoRA
   * settings; the model named where its source is a Hub id), or undefined before a run.
   */
  frameworkFiles(): ExportFile[] | undefined {
    if (!this.started) return undefined;
    const { form, source } = this.started;
    const task = LORA_TASKS.find((t) => t.id === form.task)!;
    const out = loraRunExport(
      {
        lr: form.lr,
        promptsPerUpdate: form.promptsPerUpdate,
        groupSize: LORA_GROUP_SIZE,
        maxNewTokens: LORA_MAX_NEW_TOKENS,
        task: { name: task.name, options: { ...task.options } },
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
    for (const worker of this.workers) worker.terminate();
    this.workers = [];
  }
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
