/** A training run of `npm run train`, set up and ready for its first update. */
import type { CliRunFile } from '../compare/run-file';
import type { Trainer } from '../rl/trainer';
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
