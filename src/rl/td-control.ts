/**
 * What Q-learning and SARSA share: their hyperparameters (declared once, here), the ε schedule,
 * ε-greedy action choice and greedy read-outs of a Q table. Each algorithm's episode loop stays
 * in its own file (q-learning.ts, sarsa.ts), top to bottom.
 *
 * Q tables are Float64Array (states, actions) row-major: Q(s, a) = q[s · actions + a].
 */
import type { Env } from '../envs/types';
import { OpInputError } from '../ops/errors';
import { checkInt } from '../ops/validate';
import { seededRandom } from '../util/random';
import { checkConfig, checkPartial, type ConfigSpec } from '../util/hyperparams';
import { RunControl, type Metrics, type Trainer } from './trainer';

export interface TdControlConfig {
  /** Discount γ in [0, 1] (Sutton & Barto γ; CleanRL: gamma). */
  gamma: number;
  /** Step size α in (0, 1]: Q ← Q + α · (target − Q) (Sutton & Barto α; CleanRL: learning_rate). */
  alpha: number;
  /** Exploration ε in [0, 1] at the first episode (CleanRL DQN: start_e). */
  epsilon: number;
  /** ε in [0, 1] once the decay is over (CleanRL DQN: end_e). */
  epsilonEnd: number;
  /**
   * Episodes over which ε falls linearly from `epsilon` to `epsilonEnd`, an integer ≥ 0;
   * 0 keeps ε constant (CleanRL DQN: exploration_fraction × total steps, counted in episodes here).
   */
  epsilonDecayEpisodes: number;
  /** Initial value of every Q(s, a) (> 0 is optimistic: it explores). Creation only. */
  initialQ: number;
  /** The trainer's own cap on an episode's steps, ≥ 1, on top of the env's time limit. */
  maxEpisodeSteps: number;
}

export const DEFAULT_TD_CONTROL_CONFIG: TdControlConfig = {
  gamma: 0.99,
  alpha: 0.1,
  epsilon: 0.1,
  epsilonEnd: 0.1,
  epsilonDecayEpisodes: 0,
  initialQ: 0,
  maxEpisodeSteps: 10_000,
};

export const TD_CONTROL_CONFIG_SPEC: ConfigSpec<TdControlConfig> = {
  gamma: {
    kind: 'number',
    min: 0,
    max: 1,
    doc: 'discount factor γ of the TD target r + γ·Q(s′, ·)',
    framework: 'Sutton & Barto: γ; CleanRL: gamma',
    live: true,
  },
  alpha: {
    kind: 'number',
    min: 0,
    max: 1,
    minOpen: true,
    doc: 'step size α: how far each update moves Q(s, a) toward its target',
    framework: 'Sutton & Barto: α; CleanRL: learning_rate',
    live: true,
  },
  epsilon: {
    kind: 'number',
    min: 0,
    max: 1,
    doc: 'exploration ε: probability of a uniformly random action (at the first episode)',
    framework: 'Sutton & Barto: ε; CleanRL DQN: start_e',
    live: true,
  },
  epsilonEnd: {
    kind: 'number',
    min: 0,
    max: 1,
    doc: 'ε once the linear decay is over',
    framework: 'CleanRL DQN: end_e',
    live: true,
  },
  epsilonDecayEpisodes: {
    kind: 'int',
    min: 0,
    max: 1e9,
    doc: 'episodes over which ε falls linearly to epsilonEnd (0: constant ε)',
    framework: 'CleanRL DQN: exploration_fraction (of total steps)',
    live: true,
  },
  initialQ: {
    kind: 'number',
    min: -1e6,
    max: 1e6,
    doc: 'initial Q(s, a) for every pair (optimistic when above the returns)',
    live: false,
  },
  maxEpisodeSteps: {
    kind: 'int',
    min: 1,
    max: 1e7,
    doc: 'cap on the steps of one episode (a truncation), on top of the env’s time limit',
    live: true,
  },
};

/** A TD control trainer's tables, for the lab's inspectors. */
export interface TdControlTrainer extends Trainer<TdControlConfig> {
  /** Q: (states, actions) row-major, a copy. */
  qValues(): Float64Array;
  /** Greedy action per state (states), ties to the lowest index. */
  policy(): Int32Array;
  /** max_a Q(s, a) per state (states). */
  values(): Float64Array;
}

/** A run seed: an integer in [0, 2^32 − 1] (it seeds the env's reset and the agent's stream). */
export function checkSeed(scope: string, seed: number): void {
  checkInt(scope, 'seed', seed, 0, 2 ** 32 - 1);
}

/** The sizes of a discrete env's Q table; throws OpInputError for other spaces. */
export function tableShape(
  scope: string,
  env: Env<number, number>,
): { states: number; actions: number } {
  const { observationSpace: obs, actionSpace: act } = env;
  if (obs.kind !== 'discrete' || act.kind !== 'discrete') {
    throw new OpInputError(
      scope,
      'env',
      `must have discrete observation and action spaces (a tabular env), got ${obs.kind} and ${act.kind}`,
    );
  }
  return { states: obs.n, actions: act.n };
}

/** ε for the episode after `episodesDone` episodes: linear from epsilon to epsilonEnd. */
export function scheduledEpsilon(config: TdControlConfig, episodesDone: number): number {
  if (config.epsilonDecayEpisodes === 0) return config.epsilon;
  const fraction = Math.min(1, episodesDone / config.epsilonDecayEpisodes);
  return config.epsilon + (config.epsilonEnd - config.epsilon) * fraction;
}

/**
 * ε-greedy: with probability ε a uniformly random action, else a greedy one, ties broken
 * uniformly at random (a fresh table is all ties; always taking action 0 would bias exploration).
 */
export function epsilonGreedy(
  q: Float64Array,
  state: number,
  actions: number,
  epsilon: number,
  random: () => number,
): number {
  if (random() < epsilon) return Math.floor(random() * actions);
  const base = state * actions;
  let best = -Infinity;
  for (let a = 0; a < actions; a++) best = Math.max(best, q[base + a]!);
  const ties: number[] = [];
  for (let a = 0; a < actions; a++) if (q[base + a] === best) ties.push(a);
  return ties.length === 1 ? ties[0]! : ties[Math.floor(random() * ties.length)]!;
}

/** max_a Q(s, a). */
export function maxQ(q: Float64Array, state: number, actions: number): number {
  let best = -Infinity;
  for (let a = 0; a < actions; a++) best = Math.max(best, q[state * actions + a]!);
  return best;
}

/** Greedy action per state, ties to the lowest index (a stable picture for the lab). */
export function greedyActions(q: Float64Array, states: number, actions: number): Int32Array {
  const out = new Int32Array(states);
  for (let s = 0; s < states; s++) {
    let best = 0;
    for (let a = 1; a < actions; a++) if (q[s * actions + a]! > q[s * actions + best]!) best = a;
    out[s] = best;
  }
  return out;
}

/** max_a Q(s, a) per state. */
export function stateValues(q: Float64Array, states: number, actions: number): Float64Array {
  const out = new Float64Array(states);
  for (let s = 0; s < states; s++) out[s] = maxQ(q, s, actions);
  return out;
}

/** The agent's random stream, kept apart from the env's (which reset(seed) seeds with `seed`). */
export function agentSeed(seed: number): number {
  return (Math.imul(seed >>> 0, 0x9e3779b1) ^ 0x85ebca6b) >>> 0;
}

/** One episode's inputs, handed to an algorithm's loop by createTdControl(). */
export interface TdEpisode {
  env: Env<number, number>;
  /** The reset observation of this episode. */
  start: number;
  /** Q: (states, actions), updated in place by the loop. */
  q: Float64Array;
  actions: number;
  config: TdControlConfig;
  epsilon: number;
  /** The agent's stream (ε-greedy draws). */
  random: () => number;
}

export interface TdEpisodeResult {
  episodicReturn: number;
  length: number;
  /** Σ |δ| over the episode's updates. */
  tdAbsSum: number;
}

/**
 * What Q-learning and SARSA share around their episode loops: config and seed checks, run
 * control, the Q table, the agent's stream, the ε schedule, the metrics and the table read-outs.
 * Each algorithm file keeps its own loop (`runEpisode`): the part where they differ.
 */
export function createTdControl(
  scope: string,
  env: Env<number, number>,
  config: Partial<TdControlConfig>,
  seed: number,
  runEpisode: (episode: TdEpisode) => TdEpisodeResult,
): TdControlTrainer {
  const initial = { ...DEFAULT_TD_CONTROL_CONFIG, ...config };
  checkConfig(scope, TD_CONTROL_CONFIG_SPEC, initial);
  checkSeed(scope, seed);
  const control = new RunControl(initial);
  const { states, actions } = tableShape(scope, env);
  const random = seededRandom(agentSeed(seed));
  const q = new Float64Array(states * actions).fill(initial.initialQ); // Q: (states, actions)
  let episodes = 0;

  return control.expose({
    algorithm: scope,
    setHyperparams(partial) {
      checkPartial(scope, TD_CONTROL_CONFIG_SPEC, partial, { liveOnly: true });
      control.queue(partial);
    },

    async update(): Promise<Metrics> {
      const current = control.beginUpdate();
      const epsilon = scheduledEpsilon(current, episodes);
      // The first episode seeds the env; later ones continue its stream.
      const start = env.reset(episodes === 0 ? seed : undefined).obs;
      const { episodicReturn, length, tdAbsSum } = runEpisode({
        env,
        start,
        q,
        actions,
        config: current,
        epsilon,
        random,
      });
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
