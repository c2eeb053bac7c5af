/**
 * The ops that turn a language-model batch's rewards into advantages — sequence scores, the KL
 * penalty in the reward, group-relative and RLOO advantages, REINFORCE++, GAE, whitening, the
 * broadcast to tokens — and the critic's explained variance, on the policy's backend: the CPU
 * references of src/ops on a CPU model, their WGSL kernels on a WebGPU model. Same arguments,
 * same results (to f32 rounding); on the GPU each call is one upload, one batch and one read.
 *
 * GRPO and PPO call these once per update, between the rollout and the policy steps (whose own
 * loss runs on the model's backend too: src/rl/policy-step.ts).
 */
import type { GpuContext } from '../gpu/context';
import { broadcastToTokensGpu, sumOverTokensGpu } from '../gpu/kernels/broadcast';
import { explainedVarianceGpu } from '../gpu/kernels/explained-variance';
import { gaeGpu } from '../gpu/kernels/gae';
import { groupAdvantagesGpu, rlooAdvantagesGpu } from '../gpu/kernels/group-advantages';
import { klRewardPenaltyGpu, perTokenKlGpu } from '../gpu/kernels/kl';
import { reinforcePlusPlusBaselineGpu, reinforcePlusPlusGpu } from '../gpu/kernels/reinforce-pp';
import { whitenGpu } from '../gpu/kernels/whiten';
import type { LanguageModel } from '../models/language-model';
import { broadcastToTokens, sumOverTokens } from '../ops/broadcast';
import { explainedVariance } from '../ops/explained-variance';
import { gae } from '../ops/gae';
import { groupAdvantages, rlooAdvantages } from '../ops/group-advantages';
import { klRewardPenalty, perTokenKl } from '../ops/kl';
import { reinforcePlusPlus, reinforcePlusPlusBaseline } from '../ops/reinforce-pp';
import { whiten } from '../ops/whiten';

/** The CPU references, by the name the trainers call them. */
const REFERENCES = {
  sumOverTokens,
  broadcastToTokens,
  groupAdvantages,
  rlooAdvantages,
  reinforcePlusPlus,
  reinforcePlusPlusBaseline,
  perTokenKl,
  klRewardPenalty,
  gae,
  whiten,
  explainedVariance,
};

type References = typeof REFERENCES;

/** Each reference's signature, asynchronous (the GPU reads its result back). */
export type AdvantageOps = {
  readonly backend: 'cpu' | 'webgpu';
} & {
  readonly [K in keyof References]: (
    ...args: Parameters<References[K]>
  ) => Promise<ReturnType<References[K]>>;
};

/** The CPU references, each wrapped to resolve with its result. */
export const CPU_ADVANTAGE_OPS: AdvantageOps = {
  backend: 'cpu',
  ...(Object.fromEntries(
    Object.entries(REFERENCES).map(([name, op]) => [
      name,
      async (...args: unknown[]) => (op as (...a: unknown[]) => unknown)(...args),
    ]),
  ) as Omit<AdvantageOps, 'backend'>),
};

/** The same ops as kernels on `gpu` (each through its convenience path). */
export function gpuAdvantageOps(gpu: GpuContext): AdvantageOps {
  return {
    backend: 'webgpu',
    sumOverTokens: (...a) => sumOverTokensGpu(gpu, ...a),
    broadcastToTokens: (...a) => broadcastToTokensGpu(gpu, ...a),
    groupAdvantages: (...a) => groupAdvantagesGpu(gpu, ...a),
    rlooAdvantages: (...a) => rlooAdvantagesGpu(gpu, ...a),
    reinforcePlusPlus: (...a) => reinforcePlusPlusGpu(gpu, ...a),
    reinforcePlusPlusBaseline: (...a) => reinforcePlusPlusBaselineGpu(gpu, ...a),
    perTokenKl: (...a) => perTokenKlGpu(gpu, ...a),
    klRewardPenalty: (...a) => klRewardPenaltyGpu(gpu, ...a),
    gae: (...a) => gaeGpu(gpu, ...a),
    whiten: (...a) => whitenGpu(gpu, ...a),
    explainedVariance: (...a) => explainedVarianceGpu(gpu, ...a),
  };
}

/** The ops on `model`'s backend: its GPU device where it has one, else the CPU references. */
export function advantageOps(model: LanguageModel): AdvantageOps {
  return model.gpu ? gpuAdvantageOps(model.gpu) : CPU_ADVANTAGE_OPS;
}
