/**
 * The specs and defaults of the settings a run has besides its algorithm's (the curriculum, the
 * reward model), for the main thread: the UI reaches src/rl only through src/worker. Each module
 * named here imports nothing heavier than src/util, so the trainers stay out of the UI's bundle.
 */
export { CURRICULUM_CONFIG_SPEC, DEFAULT_CURRICULUM_CONFIG } from '../rl/curriculum';
export {
  DEFAULT_REWARD_MODEL_CONFIG,
  REWARD_MODEL_CONFIG_SPEC,
  type RewardModelConfig,
} from '../rl/reward-model-config';
