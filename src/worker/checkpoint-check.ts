/**
 * The shape a RunCheckpoint must have, checked in one place for both sides of the worker boundary:
 * the lab reads stored checkpoints with it (one from an earlier visit, maybe from an older lab, is
 * ignored, never trusted), and the run host refuses a checkpoint that fails it before building any
 * model. What only the run can judge — the weight count of its model, the algorithm, the config's
 * ranges, the random streams — is checked where the run is built (lm-setup.ts, trainer-state.ts).
 */
import { RUN_CHECKPOINT_VERSION } from './run-protocol';

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const isStep = (value: unknown): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= 0;

/** What is wrong with `value` as a checkpoint of this version, or undefined. Never throws. */
export function checkpointProblem(value: unknown): string | undefined {
  if (!isObject(value)) return 'is not an object';
  if (value.version !== RUN_CHECKPOINT_VERSION) {
    return `version ${String(value.version)} is not ${RUN_CHECKPOINT_VERSION}`;
  }
  const { step, backend, policy, reference, rewardModel, trainer } = value;
  if (!isStep(step)) return `step must be a whole number ≥ 0, got ${String(step)}`;
  if (backend !== 'webgpu' && backend !== 'cpu') {
    return `backend must be webgpu or cpu, got ${String(backend)}`;
  }
  if (!isObject(policy)) return 'policy is missing';
  if (!isObject(trainer)) return 'trainer is missing';
  const { params, m, v, stats } = policy;
  if (!(params instanceof Float32Array) || params.length === 0) {
    return 'policy.params must be a non-empty Float32Array';
  }
  const sameLength: [string, unknown][] = [
    ['policy.m', m],
    ['policy.v', v],
    ...(reference === undefined ? [] : [['reference', reference] as [string, unknown]]),
  ];
  for (const [name, values] of sameLength) {
    if (!(values instanceof Float32Array) || values.length !== params.length) {
      return `${name} must be a Float32Array of ${params.length} values, as policy.params`;
    }
  }
  if (!(stats instanceof Float32Array)) return 'policy.stats must be a Float32Array';
  if (rewardModel !== undefined) {
    if (!isObject(rewardModel)) return 'rewardModel must be an object';
    if (!(rewardModel.params instanceof Float32Array) || rewardModel.params.length === 0) {
      return 'rewardModel.params must be a non-empty Float32Array';
    }
    const { mean, std } = rewardModel;
    if (typeof mean !== 'number' || !Number.isFinite(mean)) {
      return `rewardModel.mean must be a finite number, got ${String(mean)}`;
    }
    if (typeof std !== 'number' || !Number.isFinite(std) || std <= 0) {
      return `rewardModel.std must be a finite number > 0, got ${String(std)}`;
    }
  }
  if (typeof trainer.algorithm !== 'string') return 'trainer.algorithm must be a name';
  if (trainer.step !== step) {
    return `its trainer is at update ${String(trainer.step)}, not ${step}`;
  }
  if (!isObject(trainer.config)) return 'trainer.config must be an object';
  if (!Array.isArray(trainer.events)) return 'trainer.events must be a list';
  return undefined;
}
