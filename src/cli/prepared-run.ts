/** A training run of `npm run train`, set up and ready for its first update. */
import type { CliRunFile } from '../compare/run-file';
import type { TokenTask } from '../envs/token-tasks/types';
import { evaluateTask } from '../rl/evaluate';
import type { LanguageModel } from '../models/language-model';
import type { Trainer } from '../rl/trainer';
import type { Tokenizer } from '../models/tokenizer-api';
import type { Config } from './train-flags';

/** A trainer ready for its first update, and what its run file records beside the metrics. */
export interface PreparedRun {
  trainer: Trainer<Config>;
  label: string;
  backend: string;
  /** Language models: the final greedy success rate (only after a run that went to its end). */
  finish: () => Promise<Record<string, number>>;
  dispose: () => void;
  recorded: Pick<
    CliRunFile,
    'taskOptions' | 'curriculum' | 'rewardModel' | 'retained' | 'sftSteps' | 'init' | 'model'
  >;
  /** What else a run writes at every ending (a brought model's adapters); returns a line to print. */
  saveExtra?: () => Promise<string>;
}

/**
 * A language-model run's `finish`: greedy success over `samples` prompts drawn with `seed`
 * (held apart from the training prompts' seed by the caller), or nothing when `samples` is 0.
 */
export function finalSuccess(
  model: LanguageModel,
  tokenizer: Tokenizer,
  task: TokenTask,
  { seed, samples }: { seed: number; samples: number },
): () => Promise<Record<string, number>> {
  return async (): Promise<Record<string, number>> => {
    if (samples === 0) return {};
    const final = await evaluateTask(model, tokenizer, task, { seed, samples });
    return { successRate: final.successRate };
  };
}
