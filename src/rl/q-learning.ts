/**
 * Tabular Q-learning (Watkins 1989; Sutton & Barto §6.5), off-policy TD control. One update is one
 * episode in the env, acting ε-greedily and after every step moving Q toward the greedy target:
 *
 *   Q(s, a) ← Q(s, a) + α · [ r + γ · max_a' Q(s', a') − Q(s, a) ]
 *
 * The target bootstraps unless the MDP terminated: a time limit truncates the episode but s' is
 * not terminal, so its value still counts (gymnasium's terminated/truncated split).
 *
 * Seeding: the first episode resets the env with `seed`, later ones continue its stream; the
 * agent's ε-greedy draws come from a separate stream derived from the same seed.
 *
 * Metrics (one update = one episode):
 *   charts/episodic_return   sum of rewards of the episode
 *   charts/episodic_length   steps of the episode
 *   charts/epsilon           ε used during the episode
 *   losses/td_error          mean |δ| over the episode's updates, δ = target − Q(s, a)
 */
import type { Env } from '../envs/types';
import {
  createTdControl,
  DEFAULT_TD_CONTROL_CONFIG,
  epsilonGreedy,
  maxQ,
  TD_CONTROL_CONFIG_SPEC,
  type TdControlConfig,
  type TdControlTrainer,
  type TdEpisode,
  type TdEpisodeResult,
} from './td-control';

export type QLearningConfig = TdControlConfig;
export const DEFAULT_Q_LEARNING_CONFIG: QLearningConfig = DEFAULT_TD_CONTROL_CONFIG;
export const Q_LEARNING_CONFIG_SPEC = TD_CONTROL_CONFIG_SPEC;

const SCOPE = 'q-learning';

export function createQLearning(
  env: Env<number, number>,
  config: Partial<QLearningConfig> = {},
  seed = 0,
): TdControlTrainer {
  return createTdControl(SCOPE, env, config, seed, episode);
}

/** One episode of Q-learning: Q is updated in place after every step. */
function episode({ env, start, q, actions, config, epsilon, random }: TdEpisode): TdEpisodeResult {
  let state = start;
  let episodicReturn = 0;
  let length = 0;
  let tdAbsSum = 0;

  for (;;) {
    const action = epsilonGreedy(q, state, actions, epsilon, random);
    const { obs: next, reward, terminated, truncated } = env.step(action);
    length += 1;
    episodicReturn += reward;

    // #region target
    // Off-policy target: the greedy value of s', whatever action is taken there next.
    const target = terminated ? reward : reward + config.gamma * maxQ(q, next, actions);
    const i = state * actions + action;
    const td = target - q[i]!;
    q[i]! += config.alpha * td;
    // #endregion target
    tdAbsSum += Math.abs(td);

    state = next;
    if (terminated || truncated || length >= config.maxEpisodeSteps) break;
  }
  return { episodicReturn, length, tdAbsSum };
}
