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
import { seededRandom } from '../util/random';
import { checkConfig, checkPartial } from './hyperparams';
import {
  agentSeed,
  checkSeed,
  DEFAULT_TD_CONTROL_CONFIG,
  epsilonGreedy,
  greedyActions,
  scheduledEpsilon,
  stateValues,
  tableShape,
  TD_CONTROL_CONFIG_SPEC,
  type TdControlConfig,
  type TdControlTrainer,
} from './td-control';
import { RunControl, type Metrics } from './trainer';

export type SarsaConfig = TdControlConfig;
export const DEFAULT_SARSA_CONFIG: SarsaConfig = DEFAULT_TD_CONTROL_CONFIG;
export const SARSA_CONFIG_SPEC = TD_CONTROL_CONFIG_SPEC;

const SCOPE = 'sarsa';

export function createSarsa(
  env: Env<number, number>,
  config: Partial<SarsaConfig> = {},
  seed = 0,
): TdControlTrainer {
  const initial = { ...DEFAULT_SARSA_CONFIG, ...config };
  checkConfig(SCOPE, SARSA_CONFIG_SPEC, initial);
  checkSeed(SCOPE, seed);
  const control = new RunControl(initial);
  const { states, actions } = tableShape(SCOPE, env);
  const random = seededRandom(agentSeed(seed));
  const q = new Float64Array(states * actions).fill(initial.initialQ); // Q: (states, actions)
  let episodes = 0;

  return control.expose({
    algorithm: SCOPE,
    setHyperparams(partial) {
      checkPartial(SCOPE, SARSA_CONFIG_SPEC, partial, { liveOnly: true });
      control.queue(partial);
    },

    async update(): Promise<Metrics> {
      const config = control.beginUpdate();
      const epsilon = scheduledEpsilon(config, episodes);
      let state = env.reset(episodes === 0 ? seed : undefined).obs;
      let action = epsilonGreedy(q, state, actions, epsilon, random);
      let episodicReturn = 0;
      let length = 0;
      let tdAbsSum = 0;

      for (;;) {
        const { obs: next, reward, terminated, truncated } = env.step(action);
        length += 1;
        episodicReturn += reward;

        // On-policy target: the value of the action the ε-greedy policy picks in s'.
        const nextAction = terminated ? 0 : epsilonGreedy(q, next, actions, epsilon, random);
        const target = terminated
          ? reward
          : reward + config.gamma * q[next * actions + nextAction]!;
        const i = state * actions + action;
        const td = target - q[i]!;
        q[i]! += config.alpha * td;
        tdAbsSum += Math.abs(td);

        state = next;
        action = nextAction;
        if (terminated || truncated || length >= config.maxEpisodeSteps) break;
      }

      episodes += 1;
      control.endUpdate();
      return {
        'charts/episodic_return': episodicReturn,
        'charts/episodic_length': length,
        'charts/epsilon': epsilon,
        'losses/td_error': tdAbsSum / length,
      };
    },

    qValues: () => q.slice(),
    policy: () => greedyActions(q, states, actions),
    values: () => stateValues(q, states, actions),
  });
}
