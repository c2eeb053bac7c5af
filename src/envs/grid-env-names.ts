/**
 * The environments that are GridWorlds (src/rl/registry.ts ENVIRONMENTS): the tabular methods
 * plan or learn on them, and the lab's inspector and the lessons' widgets draw their values and
 * greedy policy. A module of names only, so the page can ask without loading the environments.
 */
export const GRID_ENV_NAMES = [
  'gridworld',
  'gridworld-4x3',
  'frozenlake-4x4',
  'frozenlake-8x8',
  'cliffwalking',
] as const;

export function isGridEnv(name: string | undefined): boolean {
  return (GRID_ENV_NAMES as readonly string[]).includes(name ?? '');
}
