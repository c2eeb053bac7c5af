/**
 * The grid inspector's data for a tabular method on a GridWorld (FrozenLake and CliffWalking are
 * GridWorlds too): V and the greedy action of every cell, read from the trainer's tables.
 */
import { GridWorld, OFFSETS } from '../envs/gridworld';
import type { GridInspection } from './inspection';

/** What the tabular trainers expose (PlanningTrainer, TdControlTrainer). */
export interface TableReader {
  values(): Float64Array;
  policy(): Int32Array;
}

export function gridInspection(
  world: GridWorld,
  tables: TableReader,
  algorithm: string,
  step: number,
): GridInspection {
  const values = tables.values();
  const policy = tables.policy();
  const cells: string[] = [];
  const moves: [number, number][] = [];
  for (let s = 0; s < world.states; s++) {
    const kind = world.kindAt(s);
    cells.push(kind);
    const still = kind !== 'floor' || world.isTerminal(s);
    const direction = world.actionDirections[policy[s]!]!;
    const [dr, dc] = OFFSETS[direction]!;
    moves.push(still ? [0, 0] : [dr, dc]);
  }
  return {
    kind: 'grid',
    algorithm,
    step,
    rows: world.rows,
    cols: world.cols,
    cells,
    start: world.start,
    values: Array.from(values, (v) => v + 0),
    moves,
  };
}

/** `trainer` with an inspect() showing its tables on `env`, when `env` is a grid. */
export function withGridInspector<T extends TableReader & { readonly step: number }>(
  trainer: T,
  env: unknown,
  algorithm: string,
): T {
  if (!(env instanceof GridWorld)) return trainer;
  return Object.assign(trainer, {
    inspect: () => gridInspection(env, trainer, algorithm, trainer.step),
  });
}
