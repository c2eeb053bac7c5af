/** The CPU reference ops: the specification every WGSL kernel is tested against. */
export { OpInputError } from './errors';
export { FLAVORS, DEFAULT_FLAVOR, resolveFlavor, type Flavor, type FlavorOption } from './flavor';
export { logSoftmax } from './log-softmax';
export {
  tokenLogprobs,
  tokenLogprobsBackward,
  checkTokenLogprobsInput,
  checkTokenLogprobsBackwardInput,
  type TokenLogprobs,
  type TokenLogprobsOptions,
  type TokenLogprobsBackwardOptions,
} from './token-logprobs';
export { entropyFromLogits, checkEntropyInput, type EntropyOptions } from './entropy';
export {
  LOSS_AGG_MODES,
  aggregateLoss,
  aggregateChecked,
  aggregationRowScales,
  checkAggregateLossInput,
  checkLossAggOptions,
  type AggregatedLoss,
  type LossAggMode,
  type LossAggOptions,
} from './loss-aggregation';
export {
  GSPO_GRADIENTS,
  GSPO_LOG_RATIO_MAX,
  POLICY_LOSS_STATS,
  POLICY_LOSS_TYPES,
  checkPolicyLossInput,
  policyLoss,
  resolvePolicyLossOptions,
  type GspoGradient,
  type PolicyLossOptions,
  type PolicyLossResult,
  type PolicyLossStat,
  type PolicyLossStats,
  type PolicyLossType,
  type ResolvedPolicyLossOptions,
} from './policy-loss';
export {
  perTokenKl,
  klLoss,
  klRewardPenalty,
  klEstimate,
  KL_ESTIMATORS,
  KL_CLAMPS,
  KL_DEFAULTS,
  type KlEstimator,
  type KlClamp,
  type KlOptions,
  type KlLossOptions,
  type TokenKl,
  type KlLoss,
  type KlRewardPenalty,
} from './kl';
export {
  AdaptiveKlController,
  FixedKlController,
  type KlController,
  type AdaptiveKlControllerOptions,
} from './kl-controller';
export {
  valueLoss,
  VALUE_LOSS_DEFAULTS,
  type ValueLoss,
  type ValueLossOptions,
} from './value-loss';
export {
  explainedVariance,
  EXPLAINED_VARIANCE_DEFAULTS,
  type ExplainedVariance,
  type ExplainedVarianceOptions,
} from './explained-variance';
export {
  gae,
  checkGaeInput,
  resolveGaeOptions,
  GAE_DEFAULTS,
  type GaeInput,
  type GaeOptions,
  type GaeResult,
  type GaeSettings,
} from './gae';
export {
  whiten,
  checkWhitenInput,
  resolveWhitenOptions,
  maskedMoments,
  varianceFromMoments,
  WHITEN_DEFAULTS,
  type WhitenOptions,
  type WhitenResult,
  type WhitenSettings,
  type WhitenStats,
} from './whiten';
export {
  groupAdvantages,
  rlooAdvantages,
  groupAdvantagesCore,
  checkGroupAdvantagesInput,
  checkRlooInput,
  GROUP_ADVANTAGE_DEFAULTS,
  RLOO_DEFAULTS,
  type GroupAdvantageOptions,
  type GroupAdvantageResult,
  type GroupAdvantageStats,
  type RlooOptions,
} from './group-advantages';
export {
  discountedReturns,
  reinforcePlusPlus,
  reinforcePlusPlusBaseline,
  type ReturnsOptions,
  type ReinforcePPOptions,
  type ReinforcePPResult,
  type ReinforcePPBaselineOptions,
  type ReinforcePPBaselineResult,
} from './reinforce-pp';
export { broadcastToTokens, sumOverTokens } from './broadcast';
export {
  copy,
  checkCopyInput,
  COPY_WORKGROUP_SIZES,
  COPY_MAX_LENGTH,
  type CopyOptions,
  type CopyWorkgroupSize,
} from './copy';

// Layer ops of the policies (src/ops/nn): each module is one op's CPU twin and its checks.
export * from './nn/floats';
export * from './nn/matmul';
export * from './nn/linear';
export * from './nn/layer-norm';
export * from './nn/activation';
export * from './nn/add';
export * from './nn/axpy';
export * from './nn/attention';
export * from './nn/attention-decode';
export * from './nn/embedding';
export * from './nn/rotary';
export * from './nn/adamw';
export * from './nn/grad-norm';
export * from './nn/sample';
export * from './nn/next-token';
export * from './dpo-loss';
