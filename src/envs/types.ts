/**
 * Environments, gymnasium-shaped: reset(seed) → { obs, info }; step(action) → { obs, reward,
 * terminated, truncated, info }. Pure and seeded: all randomness comes from the seed given to
 * reset() (src/util/random.ts), so an episode replays exactly. No DOM, no timers.
 *
 * `terminated`: the MDP reached a terminal state (gymnasium semantics; bootstrap with 0).
 * `truncated`: the episode was cut by a time limit; the state is not terminal (bootstrap with V).
 */

/** A set of actions or observations, as gymnasium's spaces describe them. */
export type Space =
  | { kind: 'discrete'; n: number }
  | { kind: 'box'; shape: readonly number[]; low: readonly number[]; high: readonly number[] };

export type Info = Record<string, number | string | boolean>;

/** A JSON-safe value: what an environment's snapshot is made of. */
export type JsonValue =
  number | string | boolean | null | JsonValue[] | { [key: string]: JsonValue };

/** An environment's state mid-episode as JSON-safe data (its random stream included). */
export type EnvSnapshot = { [key: string]: JsonValue };

export interface StepResult<O> {
  obs: O;
  reward: number;
  terminated: boolean;
  truncated: boolean;
  info: Info;
}

export interface Env<O = number, A = number> {
  /** A short stable id, e.g. 'FrozenLake-4x4', used in run files and the lab. */
  readonly id: string;
  readonly observationSpace: Space;
  readonly actionSpace: Space;
  /** Starts an episode; `seed` re-seeds the environment's random stream (omitted: continue it). */
  reset(seed?: number): { obs: O; info: Info };
  /** Advances one step; an invalid action or a step after the episode ended throws EnvError. */
  step(action: A): StepResult<O>;
  /**
   * Checkpoints (environments that have them): the state now, so that restore() on a fresh copy
   * goes on with exactly the steps and draws this one would have taken.
   */
  snapshot?(): EnvSnapshot;
  /**
   * Puts back a snapshot() of the same kind of environment. Every field is checked first: a bad
   * one throws EnvError naming it and its valid range, and changes nothing.
   */
  restore?(snapshot: EnvSnapshot): void;
}

/**
 * The full model of a finite MDP, for planning (value and policy iteration) and for the lab's
 * inspectors. States and actions are 0-based indices.
 */
export interface TabularModel {
  readonly states: number;
  readonly actions: number;
  /** Outcomes of taking `action` in `state`: probabilities sum to 1. */
  transitions(state: number, action: number): readonly Transition[];
  /** Terminal states have no outgoing reward: their value is 0. */
  isTerminal(state: number): boolean;
  /**
   * Whether the agent can ever be in `state` (false for a grid's walls and cliffs, which only
   * loop to themselves). Absent: every state can be occupied.
   */
  canOccupy?(state: number): boolean;
}

export interface Transition {
  probability: number;
  next: number;
  reward: number;
  /** Whether `next` ends the episode. */
  terminal: boolean;
}

/** An environment error with the env id and the step (within the episode) it happened at. */
export class EnvError extends Error {
  override readonly name = 'EnvError';
  constructor(
    readonly env: string,
    readonly step: number,
    message: string,
  ) {
    super(`${env}, step ${step}: ${message}`);
  }
}
