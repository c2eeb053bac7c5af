/**
 * CliffWalking as gymnasium defines it (Sutton & Barto Example 6.6): a 4×12 grid, start at the
 * bottom-left (state 36), goal at the bottom-right (state 47), a cliff along the bottom row
 * between them. Every step costs −1; stepping into the cliff costs −100 and puts the agent back on
 * the start (the episode goes on, as in gymnasium); reaching the goal ends the episode. No time
 * limit unless one is asked for (gymnasium registers none).
 *
 * Actions follow gymnasium's CliffWalking, which differs from FrozenLake's:
 * 0 up, 1 right, 2 down, 3 left. Observations are row·12 + col.
 *
 * Built on GridWorld with cliff cells 'C', so the lab can edit it like any grid.
 */
import { DOWN, GridWorld, LEFT, RIGHT, UP } from './gridworld';

export const CLIFF_WALKING_LAYOUT = [
  '............',
  '............',
  '............',
  'SCCCCCCCCCCG',
] as const;

/** gymnasium CliffWalking action numbers. */
export const CLIFF_UP = 0;
export const CLIFF_RIGHT = 1;
export const CLIFF_DOWN = 2;
export const CLIFF_LEFT = 3;

export interface CliffWalkingOptions {
  /** Time limit in steps, ≥ 1, or null for none (gymnasium's default). Default null. */
  maxEpisodeSteps?: number | null;
  /** Seed of the env's random stream (unused while the walk is deterministic). Default 0. */
  seed?: number;
}

export function createCliffWalking(options: CliffWalkingOptions = {}): GridWorld {
  return new GridWorld(CLIFF_WALKING_LAYOUT, {
    id: 'CliffWalking',
    stepReward: -1,
    goalReward: -1,
    cliffReward: -100,
    slip: 0,
    maxEpisodeSteps: options.maxEpisodeSteps ?? null,
    actionDirections: [UP, RIGHT, DOWN, LEFT],
    seed: options.seed ?? 0,
  });
}
