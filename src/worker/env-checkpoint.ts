/**
 * Checkpoints of environment runs whose trainer owns a network (PPO on CartPole): the network's
 * weights and AdamW state in the RunCheckpoint's `policy`, everything else — the control, the
 * random streams, the environments mid-episode — in `trainer` (Trainer.saveState). Environment
 * algorithms without one (the tabular methods, REINFORCE) resume by replay: on a 2-core CPU,
 * 50,000 tabular updates replay in 0.3–1.5 s, where 781 PPO updates on CartPole (200k steps) take
 * about 90 s.
 */
import type { Trainer } from '../rl/trainer';
import { RUN_CHECKPOINT_VERSION, type RunCheckpoint } from './run-checkpoint';
import type { Settings } from './run-protocol';

/** The checkpoint taker of `trainer`, or undefined when it has no checkpoints. */
export function envCheckpointTaker(
  trainer: Trainer<Settings>,
): (() => Promise<RunCheckpoint>) | undefined {
  const { network } = trainer;
  if (!network || !trainer.saveState) return undefined;
  return async () => {
    const [params, optimizer] = await Promise.all([network.readParams(), network.readOptimizer()]);
    return {
      version: RUN_CHECKPOINT_VERSION,
      step: trainer.step,
      backend: 'cpu',
      policy: { params, m: optimizer.m, v: optimizer.v, stats: optimizer.stats },
      trainer: trainer.saveState!(),
    };
  };
}

/**
 * Puts a new environment run where `checkpoint` stood. The trainer checks its own state first
 * (and throws, changing nothing, on a bad one); the network's part is checked before it is written.
 */
export function resumeEnvRun(
  trainer: Trainer<Settings>,
  algo: string,
  checkpoint: RunCheckpoint,
): void {
  const { network } = trainer;
  if (!network || !trainer.loadState) {
    throw new Error(`checkpoint: ${algo} runs resume by replay only`);
  }
  if (checkpoint.reference || checkpoint.rewardModel) {
    throw new Error(`checkpoint: a ${algo} run has no reference or reward model`);
  }
  const total = network.layout.total;
  if (checkpoint.policy.params.length !== total) {
    throw new Error(
      `checkpoint: policy.params holds ${checkpoint.policy.params.length} values; this run's network has ${total} parameters`,
    );
  }
  trainer.loadState(checkpoint.trainer);
  const { params, m, v, stats } = checkpoint.policy;
  network.writeOptimizer({ m, v, stats });
  network.writeParams(params);
}
