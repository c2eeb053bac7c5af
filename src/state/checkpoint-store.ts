/**
 * Where language-model runs keep their latest checkpoint (RunCheckpoint: weights, AdamW moments,
 * the reference's weights, the trainer's state; ~1–2 MB for the lab's model), so that a stored run
 * resumes from it instead of replaying every update. One per run, keyed by the run's id; the
 * IndexedDB implementation lives beside the runs' in run-store.ts (the same database).
 */
import { RUN_CHECKPOINT_VERSION, type RunCheckpoint } from '../worker/run-protocol';

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

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isStep = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0;

/**
 * `value` as a checkpoint of this version, or undefined (with no throw) when it is not one: a
 * stored record comes from an earlier visit, maybe from an older lab, and must never crash this
 * one. Checks what the lab relies on — version, step (equal to the trainer's), backend, and the
 * policy's three equal-length Float32Arrays (weights, m, v; `reference` the same length) — and
 * leaves the rest (layout, algorithm) to the worker, which refuses a checkpoint that does not fit.
 */
export function readCheckpoint(value: unknown): RunCheckpoint | undefined {
  if (!isObject(value) || value.version !== RUN_CHECKPOINT_VERSION) return undefined;
  const { step, backend, policy, reference, trainer } = value;
  if (!isStep(step) || (backend !== 'webgpu' && backend !== 'cpu')) return undefined;
  if (!isObject(policy) || !isObject(trainer)) return undefined;
  const { params, m, v, stats } = policy;
  if (!(params instanceof Float32Array) || params.length === 0) return undefined;
  for (const moment of [m, v]) {
    if (!(moment instanceof Float32Array) || moment.length !== params.length) return undefined;
  }
  if (!(stats instanceof Float32Array)) return undefined;
  if (reference !== undefined) {
    if (!(reference instanceof Float32Array) || reference.length !== params.length) {
      return undefined;
    }
  }
  if (typeof trainer.algorithm !== 'string' || trainer.step !== step) return undefined;
  if (!isObject(trainer.config) || !Array.isArray(trainer.events)) return undefined;
  return value as unknown as RunCheckpoint;
}
