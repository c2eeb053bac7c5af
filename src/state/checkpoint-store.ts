/**
 * Where language-model runs keep their latest checkpoint (RunCheckpoint: weights, AdamW moments,
 * the reference's weights, the trainer's state; ~1–2 MB for the lab's model), so that a stored run
 * resumes from it instead of replaying every update. One per run, keyed by the run's id; the
 * IndexedDB implementation lives beside the runs' in run-store.ts (the same database).
 */
import { checkpointProblem } from '../worker/checkpoint-check';
import type { RunCheckpoint } from '../worker/run-protocol';

export interface CheckpointStorePort {
  /** Keeps `checkpoint` as the run's only one (an older one is replaced). */
  saveCheckpoint(id: string, checkpoint: RunCheckpoint): Promise<void>;
  /** The run's checkpoint; undefined when it has none, or one of another version or shape. */
  loadCheckpoint(id: string): Promise<RunCheckpoint | undefined>;
  removeCheckpoint(id: string): Promise<void>;
  /**
   * Run id → step of its checkpoint (this version's only), read without the weights: what the lab
   * says of a stored run before it is started.
   */
  checkpointSteps(): Promise<Map<string, number>>;
}

/**
 * `value` as a checkpoint of this version, or undefined (with no throw) when it is not one: a
 * stored record comes from an earlier visit, maybe from an older lab, and must never crash this
 * one. The shape is checked by checkpointProblem (the run host's own check); the rest (layout,
 * algorithm) is left to the worker, which refuses a checkpoint that does not fit.
 */
export function readCheckpoint(value: unknown): RunCheckpoint | undefined {
  return checkpointProblem(value) === undefined ? (value as RunCheckpoint) : undefined;
}
