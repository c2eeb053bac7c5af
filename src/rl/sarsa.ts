/**
 * Tabular SARSA (Sutton & Barto §6.4), on-policy TD control. One update is one episode in the env,
 * acting ε-greedily; after every step Q moves toward the value of the action the policy actually
 * takes next (the quintuple S, A, R, S', A'):
 *
 *   Q(s, a) ← Q(s, a) + α · [ r + γ · Q(s', a') − Q(s, a) ],   a' ~ ε-greedy(Q(s', ·))
 *
 * Because a' includes exploration, SARSA learns the value of the ε-greedy policy itself: on
 * CliffWalking it prefers a path away from the edge, where an exploratory step costs no fall
 * (Example 6.6), while Q-learning learns the edge path that is optimal without exploration.
 *
 * The target bootstraps unless the MDP terminated; at a truncation a' is drawn but not taken.
 * Seeding as in q-learning.ts.
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
  TD_CONTROL_CONFIG_SPEC,
  type TdControlConfig,
  type TdControlTrainer,
  type TdEpisode,
  type TdEpisodeResult,
} from './td-control';

export type SarsaConfig = TdControlConfig;
export const DEFAULT_SARSA_CONFIG: SarsaConfig = DEFAULT_TD_CONTROL_CONFIG;
export const SARSA_CONFIG_SPEC = TD_CONTROL_CONFIG_SPEC;

const SCOPE = 'sarsa';

export function createSarsa(
  env: Env<number, number>,
  config: Partial<SarsaConfig> = {},
  seed = 0,
): TdControlTrainer {
  return createTdControl(SCOPE, env, config, seed, episode);
}

/** One episode of SARSA: Q is updated in place after every step. */
function episode({ env, start, q, actions, config, epsilon, random }: TdEpisode): TdEpisodeResult {
  let state = start;
  let action = epsilonGreedy(q, state, actions, epsilon, random);
  let episodicReturn = 0;
  let length = 0;
  let tdAbsSum = 0;

  for (;;) {
    const { obs: next, reward, terminated, truncated } = env.step(action);
    length += 1;
    episodicReturn += reward;

    // #region target
    // On-policy target: the value of the action the ε-greedy policy picks in s'.
    const nextAction = terminated ? 0 : epsilonGreedy(q, next, actions, epsilon, random);
    const target = terminated ? reward : reward + config.gamma * q[next * actions + nextAction]!;
    const i = state * actions + action;
    const td = target - q[i]!;
    q[i]! += config.alpha * td;
    // #endregion target
    tdAbsSum += Math.abs(td);

    state = next;
    action = nextAction;
    if (terminated || truncated || length >= config.maxEpisodeSteps) break;
  }
  return { episodicReturn, length, tdAbsSum };
}
