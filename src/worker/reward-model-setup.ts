/**
 * Worker-side: the learned reward model of a run with `rewardModel` settings. It starts as a copy
 * of the policy as RL begins (after any warm-up) with a fresh scalar head, and is trained on
 * comparisons of that policy's answers before the first update, with 'reward-model' progress
 * messages. A resumed run takes it from the checkpoint instead.
 */
import type { CharsetTask } from '../envs/token-tasks/shared';
import type { LanguageModel } from '../models/language-model';
import type { CharTokenizer } from '../models/tokenizer';
import type { TransformerConfig } from '../models/transformer-config';
import { transformerLayout } from '../models/transformer-params';
import { withValueHead } from '../onnx/starting-policy';
import {
  collectComparisons,
  RewardModel,
  trainRewardModel,
  type RewardModelConfig,
} from '../rl/reward-model';
import { counterHash } from '../util/counter-rng';
import type { RunCheckpoint } from './run-checkpoint';
import type { RunMessage } from './run-protocol';

export interface RewardModelSetup {
  config: RewardModelConfig;
  policy: LanguageModel;
  /** The policy's config (the reward model's is the same with a value head). */
  modelConfig: TransformerConfig;
  /** Builds a model on the run's backend (the CLI's maker is async: it may acquire a device). */
  make: (config: TransformerConfig, params: Float32Array) => LanguageModel | Promise<LanguageModel>;
  tokenizer: CharTokenizer;
  task: CharsetTask;
  maxNewTokens: number;
  seed: number;
  emit: (message: RunMessage) => void;
  /** Awaited after every training step: where the lab's worker passes its training turn on. */
  yieldPoint?: () => Promise<void>;
}

/** The reward model's config: the policy's transformer with a scalar (value) head. */
function scorerConfig(config: TransformerConfig): TransformerConfig {
  return { ...config, valueHead: true };
}

/** Throws unless the checkpoint's reward model fits this run (checked before anything is built). */
export function checkRewardModelResume(resume: RunCheckpoint, modelConfig: TransformerConfig) {
  if (!resume.rewardModel) {
    throw new Error('checkpoint: this run has a reward model, and the checkpoint has none');
  }
  const total = transformerLayout(scorerConfig(modelConfig)).total;
  const held = resume.rewardModel.params.length;
  if (held !== total) {
    throw new Error(
      `checkpoint: rewardModel.params holds ${held} values; this run's reward model has ${total} parameters`,
    );
  }
}

/** The reward model from a checkpoint (checked with checkRewardModelResume first). */
export function restoreRewardModel(
  saved: NonNullable<RunCheckpoint['rewardModel']>,
  setup: Pick<RewardModelSetup, 'modelConfig'> & {
    make: (config: TransformerConfig, params: Float32Array) => LanguageModel;
  },
): RewardModel {
  const model = setup.make(scorerConfig(setup.modelConfig), saved.params.slice());
  return new RewardModel(model, saved.mean, saved.std);
}

/** Samples the comparisons, trains the reward model, and reports both as it goes. */
export async function buildRewardModel(setup: RewardModelSetup): Promise<RewardModel> {
  const { config, emit } = setup;
  emit({ type: 'reward-model', done: 0, total: config.steps });
  const data = await collectComparisons(
    setup.policy,
    setup.tokenizer,
    setup.task,
    config,
    setup.maxNewTokens,
    setup.seed,
  );
  const start = withValueHead(
    setup.modelConfig,
    await setup.policy.readParams(),
    true,
    counterHash(setup.seed, 0, 5),
  );
  const model = await setup.make(start.config, start.params);
  let last = 0;
  try {
    const { rewardModel, report } = await trainRewardModel(
      model,
      data,
      config,
      setup.seed,
      (done, total) => {
        // A progress message at most every 100 ms (the report follows the last step).
        if (performance.now() - last > 100) {
          last = performance.now();
          emit({ type: 'reward-model', done, total });
        }
        return setup.yieldPoint?.();
      },
    );
    emit({ type: 'reward-model', done: config.steps, total: config.steps, report });
    return rewardModel;
  } catch (error) {
    model.dispose();
    throw error;
  }
}

/** What a checkpoint keeps of the reward model. */
export async function saveRewardModel(
  rewardModel: RewardModel,
): Promise<NonNullable<RunCheckpoint['rewardModel']>> {
  return {
    params: await rewardModel.model.readParams(),
    mean: rewardModel.mean,
    std: rewardModel.std,
  };
}
