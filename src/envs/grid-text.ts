/**
 * Grids as text, for tests, the CLI and plain-text lesson output:
 *
 *   gridText(world)                      SFFF / .H.H …      the layout
 *   gridText(world, { policy })          ↓←↓← / ↓H↓H …      greedy moves as arrows
 *   gridText(world, { path })            S*** / …           cells a rollout visited
 *   valuesText(world, values)            0.54 0.50 …        a value table, one row per grid row
 *
 * Arrows follow each action's direction (world.actionDirections), so CliffWalking's remapped
 * actions draw correctly.
 */
import type { GridWorld } from './gridworld';

/** Arrow per direction LEFT, DOWN, RIGHT, UP. */
export const ARROWS = ['←', '↓', '→', '↑'] as const;

export interface GridTextOverlay {
  /** Action per state (states): floor cells show the action's arrow. */
  policy?: ArrayLike<number>;
  /** States visited, in order: floor cells on it show '*'. */
  path?: readonly number[];
  /** The agent's cell, shown as '@' (drawn last). */
  agent?: number;
}

export function gridText(world: GridWorld, overlay: GridTextOverlay = {}): string {
  const layout = world.layout().map((row) => [...row]);
  const put = (state: number, char: string): void => {
    const { row, col } = world.cellOf(state);
    layout[row]![col] = char;
  };
  if (overlay.policy) {
    for (let s = 0; s < world.states; s++) {
      if (world.kindAt(s) !== 'floor') continue;
      const action = overlay.policy[s]!;
      put(s, ARROWS[world.actionDirections[action]!] ?? '?');
    }
  }
  for (const s of overlay.path ?? []) if (world.kindAt(s) === 'floor') put(s, '*');
  if (overlay.agent !== undefined) put(overlay.agent, '@');
  return layout.map((row) => row.join('')).join('\n');
}

/** Values (states) as a table with `digits` decimals; walls print as '#'. */
export function valuesText(world: GridWorld, values: ArrayLike<number>, digits = 2): string {
  const cells: string[] = [];
  for (let s = 0; s < world.states; s++) {
    cells.push(world.kindAt(s) === 'wall' ? '#' : values[s]!.toFixed(digits));
  }
  const width = Math.max(...cells.map((c) => c.length));
  const lines: string[] = [];
  for (let r = 0; r < world.rows; r++) {
    const row = cells.slice(r * world.cols, (r + 1) * world.cols);
    lines.push(row.map((c) => c.padStart(width)).join(' '));
  }
  return lines.join('\n');
}
