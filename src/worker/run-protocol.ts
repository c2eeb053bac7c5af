/**
 * The contract between the UI and a run worker (one Web Worker per training run). Both `expose()`
 * in run.worker.ts and `wrap<RunWorkerApi>()` in client.ts use RunWorkerApi, so a change here is
 * checked on both sides. Only plain data crosses: specs, metric batches, events.
 */
import type { BackendChoice } from '../gpu/backend-choice';
import type { FieldSpec } from '../util/hyperparams';
import type { PositionKind } from '../models/transformer-config';
import type { CurriculumConfig } from '../rl/curriculum';
import type { RewardModelConfig, RewardModelReport } from '../rl/reward-model';
import type {
  CartPoleInspection,
  GridInspection,
  InspectedSample,
  InspectedToken,
  Inspection,
  SampleInspection,
} from '../rl/inspection';
import type { Metrics, RunEvent, TrainerState, UpdatePhase } from '../rl/trainer';
import type { RunCheckpoint } from './run-checkpoint';
import type { MetricCheck } from './metric-check';
import type { Kept } from './kept-updates';

/** An earlier update the inspector can open (kept-updates.ts). */
export type KeptInspection = Kept<Inspection>;

export type {
  CartPoleInspection,
  FieldSpec,
  GridInspection,
  InspectedSample,
  InspectedToken,
  Inspection,
  Metrics,
  PositionKind,
  RunEvent,
  SampleInspection,
  TrainerState,
  UpdatePhase,
};

/** A setting's value as it crosses the worker boundary. */
export type SettingValue = number | boolean | string;
export type Settings = Record<string, SettingValue>;

/** Everything needed to build a run; the worker validates all of it. */
export interface RunSpec {
  /** A key of ALGORITHMS in src/rl/registry.ts, e.g. 'q-learning', 'grpo'. */
  algo: string;
  /** Environment algorithms: a key of ENVIRONMENTS, e.g. 'cliffwalking'. */
  env?: string;
  /** Language-model algorithms: a token task, e.g. 'reverse'. */
  task?: string;
  /** The task's options (e.g. maxLength, useTools, toolCost); defaults fill the rest. */
  taskOptions?: Settings;
  /** Non-negative integer seed of the env, the agent and the model's initialization. */
  seed: number;
  /** The algorithm's settings (defaults filled in by the UI), validated by the algorithm's spec. */
  config: Settings;
  /**
   * Language models only: 'auto' trains on WebGPU where a hardware adapter exists and on the CPU
   * otherwise (a software fallback adapter is slower than the CPU: src/gpu/backend-choice.ts);
   * 'webgpu' takes any adapter, a fallback one too; 'cpu' never asks for one.
   */
  backend: BackendChoice;
  /** Language models: supervised warm-up steps before RL (0 skips it). Default 100. */
  sftSteps?: number;
  /**
   * Language models: which engine scores the frozen reference policy for the KL term (and DPO):
   * 'engine' (ours, on the run's backend; the default) or 'ort' (onnxruntime-web: its WebGPU EP
   * when the run is on WebGPU, else wasm). Either gives the same numbers within float tolerance.
   */
  reference?: ReferenceEngine;
  /**
   * Language models: start from saved weights instead of a random initialization — a shipped
   * checkpoint (public/models/) or a checkpoint / ONNX file the user picked. The warm-up
   * (sftSteps) still runs on top when it is above 0.
   */
  init?: StartFrom;
  /**
   * Language models started from a new model (no `init`: weights bring their own): how the
   * transformer knows positions — 'learned' (GPT-2's wpe table; the default when absent, so every
   * spec from before reads as it did) or 'rotary' (RoPE at base 10,000, as Llama and SmolLM2).
   */
  positions?: PositionKind;
  /**
   * Language models, algorithms with `curriculum`: train through the task's rungs, easiest first
   * (the rungs' options replace taskOptions, which must be left out), moving up once
   * reward/accuracy has stayed at or above `threshold` for `patience` updates in a row.
   */
  curriculum?: CurriculumConfig;
  /**
   * Language models, algorithms with `rewardModel`: before RL, train a reward model on comparisons
   * of the starting policy's answers (src/rl/reward-model.ts); the config's rewardModelWeight then
   * weighs its score in the reward.
   */
  rewardModel?: RewardModelConfig;
  /**
   * Language models, algorithms with `retained`: a second task whose skill the run should keep
   * (src/rl/retained-task.ts). The config's ptxCoef trains on its demonstrations in every optimizer
   * step; retainedEvalPrompts reports its greedy success (retained/success_rate) after every update.
   */
  retained?: RetainedTaskSpec;
}

/** A retained task: a token task and its options (defaults fill the rest). */
export interface RetainedTaskSpec {
  task: string;
  taskOptions?: Settings;
}

/** A retained task with its options copied (left out when it has none). */
export function copyRetained(retained: RetainedTaskSpec): RetainedTaskSpec {
  return retained.taskOptions === undefined
    ? { task: retained.task }
    : { task: retained.task, taskOptions: { ...retained.taskOptions } };
}

export type StartFrom =
  { kind: 'shipped'; model: string } | { kind: 'file'; name: string; bytes: Uint8Array };

/** A shipped starting checkpoint, as src/models/shipped-manifest.json records it. */
export interface ShippedModelInfo {
  name: string;
  /** The token task it was warmed up on, and that task's options. */
  task: string;
  taskOptions: Settings;
  /** The model's context in tokens: the task options a run picks must fit it. */
  context: number;
  /** Supervised steps it was warmed up with, and its greedy success after them (0–1). */
  sftSteps: number;
  successRate: number;
  /**
   * Sampled as the lessons sample it (temperature, G answers a prompt): pass@1, one answer's
   * success, and pass@G, the prompts with a right answer among G (groups that can carry signal).
   */
  sampled?: { temperature: number; groupSize: number; passAt1: number; passAtG: number };
  /** The checkpoint file in public/models/. */
  file: string;
  /** A mixed warm-up: every task it was warmed up on (its own first), with options and success. */
  warmUp?: { task: string; taskOptions: Settings; successRate: number }[];
}

export type ReferenceEngine = 'engine' | 'ort';
export const REFERENCE_ENGINES: readonly ReferenceEngine[] = ['engine', 'ort'];

/**
 * Bring a new run to the state of a saved one (or of a step to fork at) by replaying it: the same
 * spec and seed, `steps` updates, and each recorded live change queued before the update it was
 * applied at. Runs are deterministic for a seed on a backend, so on the backend that trained it
 * the replay arrives at the very same weights, optimizer and random state.
 */
export interface ReplayPlan {
  steps: number;
  /** The run's live changes: applied at update `step` (as 'hyperparams' events record them). */
  changes: { step: number; changes: Settings }[];
}

/** 'stored': restored from storage or a file, no worker yet (the UI's own state). */
export type RunStatus = 'idle' | 'warming' | 'running' | 'paused' | 'error' | 'stored';

/** One update's metrics; `step` is the trainer's update count after it (1-based). */
export interface MetricPoint {
  step: number;
  metrics: Metrics;
}

/**
 * What a worker streams to the UI. Metrics and events are batched (at most ~20 messages a second,
 * however fast updates are); the other kinds are sent as they happen.
 */
export type RunMessage =
  | { type: 'warmup'; done: number; total: number; successRate?: number }
  | { type: 'replay'; done: number; total: number }
  | { type: 'reward-model'; done: number; total: number; report?: RewardModelReport }
  | { type: 'backend'; kind: 'webgpu' | 'cpu'; line: string }
  | { type: 'update'; points: MetricPoint[]; events: RunEvent[]; config: Settings }
  | { type: 'status'; status: RunStatus; error?: string }
  /**
   * A language-model run's last update and its earlier kept ones (worker/kept-updates.ts), sent
   * as a pause ends, just before its 'paused': the page can store the run complete the moment it
   * says "paused", so that a reload right after finds the update it showed.
   */
  | { type: 'inspections'; last: Inspection; earlier: KeptInspection[] }
  /**
   * Which part of update `update` (1-based) is under way (language models), so that a slow update
   * is not a silence. Sent at once, while the metrics of the update before may still be batched.
   */
  | { type: 'phase'; phase: UpdatePhase; update: number }
  /** Something the reader should know of the run's set-up (a starting file that was not checked). */
  | { type: 'note'; text: string };

export type RunListener = (message: RunMessage) => void;

/**
 * The result of a live change: applied from update `appliesAt` (the next one to start; where an
 * update is under way, the one after it), or refused with the reason.
 */
export type HyperparamResult = { ok: true; appliesAt: number } | { ok: false; error: string };

/**
 * A run's turns at training (src/state/training-slots.ts RunTurns, seen from the worker through
 * comlink): take() before the first slice of updates, pass(ms) between slices (the slice's time
 * given back and the next turn asked for in one step), give(ms) after the last, cancel() when
 * pausing while waiting.
 */
export interface TrainingTurns {
  take(): Promise<boolean>;
  pass(ms: number): Promise<boolean>;
  give(ms?: number): void | Promise<void>;
  cancel(): void | Promise<void>;
}

/**
 * Where a lesson run stops by itself (src/state/lesson-goal.ts), judged by the worker after every
 * update so that it stops at the update that reached it: when `check` first passes on the
 * metric's values (`history`, the values the run had before this start, then each update's), or
 * when the run reaches `budget` updates.
 */
export interface RunGoal {
  check?: MetricCheck;
  /** The check's metric as the run recorded it so far (its baseline and window start there). */
  history?: number[];
  budget?: number;
}

export interface RunWorkerApi {
  /**
   * Builds the trainer (language models: model, backend, SFT warm-up with 'warmup' messages) and
   * reports its backend. `listener` must be wrapped in comlink's proxy(). Rejects with a message
   * naming the bad field and its range when the spec is invalid. With `replay`, the run is then
   * brought to the saved step ('replay' progress messages; its metrics are not sent again).
   */
  createRun(
    spec: RunSpec,
    listener: RunListener,
    replay?: ReplayPlan,
    /**
     * Language models: start from this checkpoint (at step k ≤ replay.steps) instead of from the
     * beginning; the replay then runs only updates k + 1 … replay.steps. A checkpoint that does
     * not fit the spec (another algorithm, model shape or version) is refused with the reason.
     */
    checkpoint?: RunCheckpoint,
    /** The lab's turns at training (wrapped in comlink's proxy()): each slice takes one. */
    turns?: TrainingTurns,
  ): Promise<void>;
  /**
   * Trains until pause(), or until `goal` is reached (it then pauses itself after that update, as
   * pause() would); updates stream through the listener.
   */
  start(goal?: RunGoal): Promise<void>;
  /** Stops after the update in progress; resolves once stopped and flushed. */
  pause(): Promise<void>;
  /** One update (only while not running); resolves after its metrics were sent. */
  step(): Promise<void>;
  /** Validates now (live fields only) and applies the change at the next update. */
  setHyperparams(partial: Settings): Promise<HyperparamResult>;
  /** The last update token by token (language models), or null (none yet, or not an LM run). */
  inspect(): Promise<Inspection | null>;
  /**
   * Earlier updates kept for the inspector (kept-updates.ts): a language model's first update
   * and its rise, as this worker saw them; empty for other runs.
   */
  inspectKept(): Promise<KeptInspection[]>;
  /**
   * The policy now as an ONNX file (language models; PPO's MLP actor-critic); null for runs with
   * no network to export.
   */
  exportOnnx(): Promise<Uint8Array | null>;
  /**
   * The run's state now, between updates (language models); null for runs without one
   * (environment algorithms) or before createRun().
   */
  checkpoint(): Promise<RunCheckpoint | null>;
  /** Stops training and frees the model (GPU buffers included). */
  dispose(): Promise<void>;
}

/** The form metadata of one algorithm, straight from the registry. */
export interface AlgorithmInfo {
  name: string;
  family: 'env' | 'lm';
  doc: string;
  spec: Record<string, FieldSpec>;
  defaults: Settings;
  /** Environment algorithms: the environments they accept. */
  envs: string[];
  /** Its runs can download their policy as ONNX (language models, PPO's MLP actor-critic). */
  exportsOnnx: boolean;
  /**
   * Its runs keep their latest checkpoint and resume from it (language models, PPO's MLP
   * actor-critic); the others replay their updates (tabular methods are quick to replay).
   */
  checkpoints: boolean;
  /** Language models: a frozen reference is scored always (DPO) or only when klCoef > 0. */
  reference: 'always' | 'kl' | null;
  /** Language models: it can train through a task's curriculum (RunSpec.curriculum). */
  curriculum: boolean;
  /** Language models: it can train against a learned reward model (RunSpec.rewardModel). */
  rewardModel: boolean;
  /** Language models: it can keep a second task (RunSpec.retained: ptx and its success rate). */
  retained: boolean;
}

export interface TaskInfo {
  name: string;
  doc: string;
  example: { prompt: string; answer: string };
  /** The task's options: meaning and range, as the registry declares them. */
  spec: Record<string, FieldSpec>;
  defaults: Settings;
  /**
   * Trainer settings the task needs (applied by the form when the task is picked), and the shipped
   * model a new run starts from by default.
   */
  recommended: {
    maxNewTokens?: number;
    sftSteps?: number;
    start?: string;
    /** Per algorithm, settings that make a run from `start` learn visibly. */
    settings?: Readonly<Record<string, Readonly<Record<string, number>>>>;
    /** Where no start made for RL ships: what the form's defaults did, measured. */
    expect?: string;
  };
  /** The options of each rung of its curriculum, easiest first. */
  levels: Settings[];
}

/** Everything the "New run" form is generated from. */
export interface RunCatalog {
  algorithms: AlgorithmInfo[];
  tasks: TaskInfo[];
  /** Language models: the warm-up's default and valid range. */
  sftSteps: { default: number; min: number; max: number; doc: string };
  /** Shipped starting checkpoints a language-model run can start from. */
  startingModels: ShippedModelInfo[];
}

/** One invalid field of a run spec, e.g. { field: 'alpha', message: 'must be a number in (0, 1], got 2' }. */
export interface FieldError {
  field: string;
  message: string;
}
