/**
 * FrozenLake as gymnasium defines it (FrozenLake-v1, FrozenLake8x8-v1): cross the ice from S to G
 * without falling into a hole H. Reward 1 on reaching the goal, 0 otherwise; holes and the goal
 * end the episode. On slippery ice (is_slippery, the default) a move goes the intended way or
 * either perpendicular way, 1/3 each. Time limits as gymnasium's registry sets them: 100 steps
 * (4×4) and 200 (8×8). Actions 0 left, 1 down, 2 right, 3 up; observations row·cols + col.
 *
 * Built on GridWorld (slip = 2/3 gives 1/3 to each of the three outcomes, listed in gymnasium's
 * order), so the lab can edit a lake like any grid; the id keeps the map it started from.
 */
import { OpInputError } from '../ops/errors';
import { GridWorld } from './gridworld';

/** gymnasium's preset maps (frozen_lake.py MAPS), 'F' = frozen floor. */
export const FROZEN_LAKE_MAPS = {
  '4x4': ['SFFF', 'FHFH', 'FFFH', 'HFFG'],
  '8x8': [
    'SFFFFFFF',
    'FFFFFFFF',
    'FFFHFFFF',
    'FFFFFHFF',
    'FFFHFFFF',
    'FHHFFFHF',
    'FHFFHFHF',
    'FFFHFFFG',
  ],
} as const satisfies Record<string, readonly string[]>;

export type FrozenLakeMapName = keyof typeof FROZEN_LAKE_MAPS;

/** gymnasium registry max_episode_steps per preset map. */
const TIME_LIMITS: Record<FrozenLakeMapName, number> = { '4x4': 100, '8x8': 200 };

export interface FrozenLakeOptions {
  /** gymnasium map_name: '4x4' (FrozenLake-v1) or '8x8' (FrozenLake8x8-v1). Default '4x4'. */
  map?: FrozenLakeMapName;
  /** gymnasium desc: a custom map of S F H G rows, used instead of `map`. */
  desc?: readonly string[];
  /** gymnasium is_slippery: 1/3 intended, 1/3 each perpendicular. Default true. */
  isSlippery?: boolean;
  /**
   * Time limit (gymnasium max_episode_steps), ≥ 1, or null for none. Default 100 for 4×4 and
   * custom maps, 200 for 8×8.
   */
  maxEpisodeSteps?: number | null;
  /** Seed of the slip draws until reset(seed) re-seeds. Default 0. */
  seed?: number;
}

export function createFrozenLake(options: FrozenLakeOptions = {}): GridWorld {
  const map = options.map ?? '4x4';
  if (!Object.hasOwn(FROZEN_LAKE_MAPS, map)) {
    throw new OpInputError('FrozenLake', 'map', `must be '4x4' or '8x8', got '${String(map)}'`);
  }
  const desc = options.desc ?? FROZEN_LAKE_MAPS[map];
  const isSlippery = options.isSlippery ?? true;
  if (typeof isSlippery !== 'boolean') {
    throw new OpInputError('FrozenLake', 'isSlippery', `must be true or false, got ${isSlippery}`);
  }
  const size = options.desc
    ? `${desc.length}x${typeof desc[0] === 'string' ? desc[0].length : 0}`
    : map;
  return new GridWorld(desc, {
    id: `FrozenLake-${size}${isSlippery ? '' : '-nonslippery'}`,
    stepReward: 0,
    goalReward: 1,
    holeReward: 0,
    slip: isSlippery ? 2 / 3 : 0,
    maxEpisodeSteps:
      options.maxEpisodeSteps === undefined
        ? options.desc
          ? 100 // gymnasium's FrozenLake-v1 limit, which a custom desc runs under
          : TIME_LIMITS[map]
        : options.maxEpisodeSteps,
    seed: options.seed ?? 0,
  });
}
