/** The GPU runtime and the GPU versions of the ops (async, same options as src/ops). */
export * from './adapter-summary';
export * from './backend-choice';
export { acquireGpu, GpuContext, type GpuAcquisition, type GpuEvent } from './context';
export { CommandBatch, workgroupGrid, type BufferRef } from './batch';
export { defineKernel, Kernel } from './kernel';
export { GpuLimitError, KernelError } from './errors';
export { InputStatus, INPUT_STATUS_WGSL, type StatusSlot } from './input-status';
export { timeBatch, type GpuTiming } from './timing';
export {
  ROW_WORKGROUP_SIZES,
  defaultRowWorkgroupSize,
  type RowWorkgroupSize,
} from './kernels/row-workgroup-size';
export { logSoftmaxGpu, encodeLogSoftmax, logSoftmaxKernel } from './kernels/log-softmax';
export {
  tokenLogprobsGpu,
  encodeTokenLogprobs,
  entropyFromLogitsGpu,
  encodeEntropyFromLogits,
  tokenLogprobsStatus,
  entropyStatus,
  tokenLogprobsKernels,
  type TokenLogprobsGpuOptions,
  type EntropyGpuOptions,
} from './kernels/token-logprobs';
export {
  tokenLogprobsBackwardGpu,
  encodeTokenLogprobsBackward,
  tokenLogprobsBackwardStatus,
  tokenLogprobsBackwardKernel,
  type TokenLogprobsBackwardGpuOptions,
} from './kernels/token-logprobs-backward';
export {
  aggregateLossGpu,
  encodeAggregateLoss,
  type LossAggGpuOptions,
} from './kernels/loss-aggregation';
export {
  POLICY_LOSS_STATS_LENGTH,
  encodePolicyLoss,
  policyLossGpu,
  readPolicyLossStats,
  type PolicyLossGpuOptions,
} from './kernels/policy-loss';
export {
  perTokenKlGpu,
  klLossGpu,
  encodePerTokenKl,
  encodeKlLoss,
  encodeKlRewardPenalty,
  klRewardPenaltyGpu,
} from './kernels/kl';
export { valueLossGpu, encodeValueLoss, type ValueLossGpuOptions } from './kernels/value-loss';
export {
  explainedVarianceGpu,
  encodeExplainedVariance,
  explainedVarianceFromStats,
} from './kernels/explained-variance';
export { gaeGpu, encodeGae } from './kernels/gae';
export { whitenGpu, encodeWhiten, encodeWhitenStats } from './kernels/whiten';
export {
  groupAdvantagesGpu,
  rlooAdvantagesGpu,
  encodeGroupAdvantages,
  encodeRlooAdvantages,
} from './kernels/group-advantages';
export {
  discountedReturnsGpu,
  reinforcePlusPlusGpu,
  reinforcePlusPlusBaselineGpu,
  encodeDiscountedReturns,
  encodeReinforcePlusPlus,
  encodeReinforcePlusPlusBaseline,
} from './kernels/reinforce-pp';
export {
  sumOverTokensGpu,
  broadcastToTokensGpu,
  encodeSumOverTokens,
  encodeBroadcastToTokens,
} from './kernels/broadcast';
export { copyGpu, encodeCopy, copyKernel, copyByteLength } from './kernels/copy';

// Layer kernels of the policies (kernels/nn): each module wraps one op's WGSL.
export * from './kernels/nn/matmul';
export * from './kernels/nn/linear';
export * from './kernels/nn/layer-norm';
export * from './kernels/nn/activation';
export * from './kernels/nn/add';
export * from './kernels/nn/axpy';
export * from './kernels/nn/attention';
export * from './kernels/nn/attention-decode';
export * from './kernels/nn/embedding';
export * from './kernels/nn/rotary';
export * from './kernels/nn/adamw';
export * from './kernels/nn/grad-norm';
export * from './kernels/nn/sample';
export * from './kernels/nn/next-token';
