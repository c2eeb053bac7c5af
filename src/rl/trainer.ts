/**
 * What every algorithm in src/rl exposes to the CLI, the lab's workers and the tests. Each
 * algorithm file is still one readable top-to-bottom loop body; this is only its outside.
 *
 * - update() advances exactly one update (one sweep for value iteration, one episode batch for
 *   REINFORCE, one rollout + epochs for PPO, one group batch for GRPO) and returns its metrics,
 *   named as verl / TRL name them (docs/metrics.md explains each).
 * - setHyperparams(partial) validates now and takes effect at the next update; the change is
 *   recorded as an event at that update's step, so charts can mark it.
 * - Same seed, same backend → identical metrics, update for update.
 */

import type { EnvSnapshot } from '../envs/types';
import type { OptimizerSnapshot } from '../models/language-model';
import type { AgentLayout } from '../models/mlp-policy';
import type { Inspection } from './inspection';

/** Metric name → value for one update, e.g. { 'actor/pg_loss': 0.12, 'reward/mean': 0.5 }. */
export type Metrics = Record<string, number>;

export type RunEvent =
  | { step: number; kind: 'hyperparams'; changes: Record<string, number | boolean | string> }
  | { step: number; kind: 'skipped-update'; reason: string }
  | { step: number; kind: 'unhealthy'; reason: string }
  /** A curriculum moved the task to a harder rung after update `step`. */
  | { step: number; kind: 'curriculum'; level: number; task: string };

export interface Trainer<C> {
  readonly algorithm: string;
  /** The config in force (changes applied). */
  readonly config: Readonly<C>;
  /** Updates completed. */
  readonly step: number;
  readonly events: readonly RunEvent[];
  /** False after too many consecutive skipped updates; `reason` says why. */
  readonly health: { healthy: boolean; reason?: string };
  update(): Promise<Metrics>;
  setHyperparams(partial: Partial<C>): void;
  /**
   * What the lab's inspector shows (LM updates token by token, grid values and policy, a greedy
   * CartPole episode); undefined when there is nothing yet. Call it between updates only (the run
   * host does): it may use the model.
   */
  inspect?(): Inspection | undefined | Promise<Inspection | undefined>;
  /**
   * The policy now, to be written as an ONNX file, where the algorithm has a network to export
   * (PPO's MLP actor-critic). The worker writes the file (src/worker/env-export.ts): src/onnx
   * stands above src/rl. Between updates only, like inspect().
   */
  onnxExport?(): Promise<ActorCriticExport>;
  /**
   * Checkpoints (language-model trainers and PPO on CartPole): the trainer's own state between
   * updates. The models' weights and optimizer are read from the models by whoever holds them
   * (the run host): a language model's from its setup, an environment trainer's from `network`.
   */
  saveState?(): TrainerState;
  /** Goes on from a saved state; refuses (throws, changing nothing) one of another algorithm. */
  loadState?(state: TrainerState): void;
  /** The network an environment trainer owns (PPO's actor-critic), for its checkpoints. */
  readonly network?: CheckpointNetwork;
  /**
   * Told when an update moves on to its next part (language models: generating, then updating),
   * so the lab can say what a slow update is doing. Set by the run host; unset: nobody listens.
   */
  onPhase?: ((phase: UpdatePhase) => void) | undefined;
}

/** The parts of a language-model update the lab names while the reader waits for it. */
export type UpdatePhase = 'generating' | 'updating';

/** An actor-critic to write as ONNX: its layout, its joint parameters, the file's metadata. */
export interface ActorCriticExport {
  agent: AgentLayout;
  /** agent.joint.total floats, as the network holds them. */
  params: Float32Array;
  meta: Record<string, string | number>;
}

/** A network a checkpoint holds: its weights and AdamW state, each one flat (layout.total). */
export interface CheckpointNetwork {
  readonly layout: { readonly total: number };
  readParams(): Promise<Float32Array>;
  writeParams(params: Float32Array): void;
  readOptimizer(): Promise<OptimizerSnapshot>;
  writeOptimizer(snapshot: OptimizerSnapshot): void;
}

/**
 * An environment trainer's environments mid-run (PPO): what its checkpoint needs besides the
 * network, so that the resumed run takes exactly the steps the uninterrupted one would have.
 */
export interface EnvRunState {
  /** Env steps taken so far (all envs). */
  globalStep: number;
  /** Seconds spent inside update() so far (for charts/SPS). */
  seconds: number;
  /** (N·D) the observations the next update starts from. */
  nextObs: number[];
  /** The vector env's snapshot (SyncVectorEnv.snapshot()). */
  vector: EnvSnapshot;
}

/**
 * What a trainer must keep to go on exactly where it stopped, besides its models' weights and
 * optimizer (which the run host reads from the models): JSON-safe.
 */
export interface TrainerState {
  algorithm: string;
  step: number;
  config: Record<string, number | boolean | string>;
  events: RunEvent[];
  health: { healthy: boolean; reason?: string };
  skippedInARow: number;
  /** Draws taken so far from each of the trainer's seeded random streams, by name. */
  random: Record<string, number>;
  /** A curriculum's scheduler (CurriculumScheduler.state()), when the run has one. */
  curriculum?: { level: number; streak: number };
  /** An environment trainer's environments (PPO on CartPole). */
  env?: EnvRunState;
}

/** The Trainer fields RunControl.expose() reads live from the control. */
export type LiveFields = 'config' | 'step' | 'events' | 'health' | 'onPhase';

/**
 * The bookkeeping every trainer shares: pending hyperparameter changes, events, health. An
 * algorithm holds one of these and calls beginUpdate() at the top of update().
 */
export class RunControl<C extends object> {
  readonly events: RunEvent[] = [];
  health: { healthy: boolean; reason?: string } = { healthy: true };
  step = 0;
  private pending: Partial<C> = {};
  private skippedInARow = 0;
  /** Trainer.onPhase: who is told of an update's parts (none by default). */
  onPhase: ((phase: UpdatePhase) => void) | undefined;

  constructor(
    public config: C,
    /** Consecutive skipped updates after which the run is marked unhealthy. */
    private readonly maxSkipped = 5,
  ) {}

  /**
   * A trainer object: `members` (algorithm, update, setHyperparams, extras) plus config, step,
   * events and health read live from this control — the part every algorithm would repeat.
   */
  expose<T extends Trainer<C>>(members: Omit<T, LiveFields>): T {
    const properties = {
      config: { get: () => this.config, enumerable: true },
      step: { get: () => this.step, enumerable: true },
      events: { get: () => this.events, enumerable: true },
      health: { get: () => this.health, enumerable: true },
      onPhase: {
        get: () => this.onPhase,
        set: (listener: ((phase: UpdatePhase) => void) | undefined) => (this.onPhase = listener),
        enumerable: true,
      },
    };
    return Object.defineProperties(members, properties) as T;
  }

  /** The control's part of a checkpoint (the trainer adds its random streams and curriculum). */
  state(): Omit<TrainerState, 'algorithm' | 'random' | 'curriculum'> {
    return {
      step: this.step,
      config: { ...(this.config as TrainerState['config']) },
      events: structuredClone(this.events),
      health: { ...this.health },
      skippedInARow: this.skippedInARow,
    };
  }

  /**
   * Puts the control back to a checkpoint's state. The config is checked by `check` (the
   * algorithm's own validation) first, so a bad checkpoint changes nothing.
   */
  restore(state: TrainerState, check: (config: C) => void): void {
    if (!Number.isInteger(state.step) || state.step < 0) {
      throw new Error(`checkpoint: step must be a whole number ≥ 0, got ${state.step}`);
    }
    const config = { ...(this.config as object), ...state.config } as C;
    check(config);
    this.config = config;
    this.step = state.step;
    this.events.splice(0, this.events.length, ...structuredClone(state.events));
    this.health = { ...state.health };
    this.skippedInARow = state.skippedInARow;
    this.pending = {};
  }

  /** Queues a (validated) change for the next update. */
  queue(partial: Partial<C>): void {
    this.pending = { ...this.pending, ...partial };
  }

  /** Applies queued changes (recording them as an event at the update about to run). */
  beginUpdate(): C {
    if (!this.health.healthy) throw new Error(`run is unhealthy: ${this.health.reason}`);
    const changes = Object.entries(this.pending).filter(
      ([key, value]) => (this.config as Record<string, unknown>)[key] !== value,
    );
    if (changes.length) {
      this.config = { ...this.config, ...this.pending };
      this.events.push({
        step: this.step + 1,
        kind: 'hyperparams',
        changes: Object.fromEntries(changes) as Record<string, number | boolean | string>,
      });
    }
    this.pending = {};
    return this.config;
  }

  /** Says which part of the update is under way (Trainer.onPhase). */
  phase(phase: UpdatePhase): void {
    this.onPhase?.(phase);
  }

  /** Ends an update: counts it, or records the skip (and marks the run unhealthy after too many). */
  endUpdate(outcome: { skipped?: string } = {}): void {
    this.step += 1;
    if (!outcome.skipped) {
      this.skippedInARow = 0;
      return;
    }
    this.skippedInARow += 1;
    this.events.push({ step: this.step, kind: 'skipped-update', reason: outcome.skipped });
    if (this.skippedInARow >= this.maxSkipped) {
      const reason = `${this.skippedInARow} updates in a row skipped (last: ${outcome.skipped})`;
      this.health = { healthy: false, reason };
      this.events.push({ step: this.step, kind: 'unhealthy', reason });
    }
  }
}

/**
 * One update of `trainer`, with its wall time added as `timing_s/step` (verl's name): the seconds
 * the update took, so charts can put training time on the x-axis. Used by every driver of a
 * trainer (the lab's run host, the CLI), so each algorithm need not time itself.
 */
export async function timedUpdate<C>(trainer: Trainer<C>): Promise<Metrics> {
  const started = performance.now();
  const metrics = await trainer.update();
  return { ...metrics, 'timing_s/step': (performance.now() - started) / 1000 };
}
