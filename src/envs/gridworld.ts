/**
 * GridWorld: the editable grid MDP of the planning and TD lessons, and the engine under FrozenLake
 * and CliffWalking. The lab paints walls, goals, holes and cliffs, sets rewards and slipperiness
 * between episodes, and the model (transitions) reflects every edit at once, so value iteration run
 * after an edit plans for the new world.
 *
 * Layout: text rows, one character per cell, e.g. ["S..#", ".#.G"]:
 *   'S' start (a floor cell)   '.' or 'F' floor   '#' wall
 *   'G' goal (terminal)        'H' hole (terminal) 'C' cliff (back to the start, not terminal)
 *
 * States and observations are cell indices row·cols + col (gymnasium FrozenLake/CliffWalking).
 * Actions are moves; by default 0 left, 1 down, 2 right, 3 up (gymnasium FrozenLake's order),
 * remappable with `actionDirections` (CliffWalking uses gymnasium's 0 up, 1 right, 2 down, 3 left).
 *
 * Dynamics of taking a move d:
 * - With probability 1 − slip the agent moves in direction d; with probability slip it moves in one
 *   of the two perpendicular directions, slip/2 each. Outcomes are listed in gymnasium
 *   FrozenLake's order: directions (d − 1) mod 4, d, (d + 1) mod 4 of left, down, right, up.
 *   Zero-probability outcomes are left out; outcomes reaching the same cell are not merged
 *   (FrozenLake's table also lists three entries of 1/3 in a corner).
 * - A move off the grid or into a wall leaves the agent where it is.
 * - Reward = the reward of the cell the agent lands in (its own cell after a bump): a floor cell's
 *   reward is `stepReward` unless set per cell; goal, hole and cliff cells have their own defaults.
 *   (So a non-terminal cell with a reward pays each time the agent lands in it.)
 * - Landing in a goal or hole terminates the episode. Landing in a cliff pays the cliff's reward
 *   and puts the agent back on the start (as gymnasium's CliffWalking; not terminal).
 * - A time limit truncates the episode after `maxEpisodeSteps` steps (gymnasium TimeLimit: a step
 *   that terminates at the limit reports both terminated and truncated).
 *
 * In the model, cells the agent never occupies (walls, cliffs) and terminal cells loop to
 * themselves with reward 0, so their value stays 0.
 *
 * Errors: bad layouts, options and edits throw OpInputError naming the env, the field and the
 * valid range; misuse of reset/step (bad action, step after the end) throws EnvError with the step.
 */
import { OpInputError } from '../ops/errors';
import { checkInt, checkRange } from '../ops/validate';
import { seededRandom } from '../util/random';
import {
  EnvError,
  type Env,
  type Info,
  type Space,
  type StepResult,
  type TabularModel,
  type Transition,
} from './types';

/** Move directions, numbered as gymnasium FrozenLake numbers its actions. */
export const LEFT = 0;
export const DOWN = 1;
export const RIGHT = 2;
export const UP = 3;
export const DIRECTION_NAMES = ['left', 'down', 'right', 'up'] as const;
/** (Δrow, Δcol) of each direction (LEFT, DOWN, RIGHT, UP). */
export const OFFSETS: readonly (readonly [number, number])[] = [
  [0, -1],
  [1, 0],
  [0, 1],
  [-1, 0],
];

export type CellKind = 'floor' | 'wall' | 'goal' | 'hole' | 'cliff';

const KIND_OF_CHAR: Readonly<Record<string, CellKind>> = {
  '.': 'floor',
  F: 'floor',
  S: 'floor',
  '#': 'wall',
  G: 'goal',
  H: 'hole',
  C: 'cliff',
};
const CHAR_OF_KIND: Readonly<Record<CellKind, string>> = {
  floor: '.',
  wall: '#',
  goal: 'G',
  hole: 'H',
  cliff: 'C',
};

/** The largest grid side: 64 × 64 = 4096 states keeps planning sweeps instant. */
export const MAX_GRID_SIDE = 64;

export interface GridWorldOptions {
  /** Env id for run files and the lab. Default `GridWorld-<rows>x<cols>`. */
  id?: string;
  /** Reward for landing on a floor cell (and for bumping in place), e.g. −1 or −0.04. Default 0. */
  stepReward?: number;
  /** Reward for landing on a 'G' cell. Default 1 (gymnasium FrozenLake). */
  goalReward?: number;
  /** Reward for landing in an 'H' cell. Default −1 (FrozenLake sets 0). */
  holeReward?: number;
  /** Reward for stepping into a 'C' cell (then back to start). Default −100 (CliffWalking). */
  cliffReward?: number;
  /** Rewards of single cells, replacing their kind's default. */
  cellRewards?: readonly { row: number; col: number; reward: number }[];
  /**
   * Probability in [0, 1] that a move goes to a perpendicular direction instead (slip/2 each).
   * Default 0 (deterministic). gymnasium FrozenLake's is_slippery is slip = 2/3.
   */
  slip?: number;
  /** Time limit in steps (gymnasium max_episode_steps), an integer ≥ 1, or null for none. Default 100. */
  maxEpisodeSteps?: number | null;
  /** The direction each action moves, a permutation of 0..3 (LEFT, DOWN, RIGHT, UP). Default identity. */
  actionDirections?: readonly number[];
  /** Seed of the slip draws until reset(seed) re-seeds. Default 0. */
  seed?: number;
}

export class GridWorld implements Env<number, number>, TabularModel {
  readonly id: string;
  readonly rows: number;
  readonly cols: number;
  readonly states: number;
  readonly actions = 4;
  readonly observationSpace: Space;
  readonly actionSpace: Space = { kind: 'discrete', n: 4 };
  /** The direction (LEFT, DOWN, RIGHT, UP) each action moves. */
  readonly actionDirections: readonly number[];

  private readonly kinds: CellKind[];
  /** Per-cell reward replacing the kind's default; null: the default. */
  private readonly rewardOverride: (number | null)[];
  private startState = 0;
  private slipProbability: number;
  private stepRewardValue: number;
  private readonly kindRewards: Record<'goal' | 'hole' | 'cliff', number>;
  private limit: number | null;
  /** Cached outcomes per (state, action), cleared by every edit. */
  private cache: (readonly Transition[] | undefined)[];

  private edits = 0;
  private random: () => number;
  /** The agent's cell; null before the first reset. */
  private position: number | null = null;
  private elapsed = 0;
  private ended = false;

  constructor(layout: readonly string[], options: GridWorldOptions = {}) {
    const scope = options.id ?? 'GridWorld';
    if (!Array.isArray(layout) || layout.length === 0) {
      throw new OpInputError(scope, 'layout', 'must be a non-empty array of text rows');
    }
    const rows = layout.length;
    const cols = typeof layout[0] === 'string' ? layout[0].length : 0;
    checkInt(scope, 'layout rows', rows, 1, MAX_GRID_SIDE);
    checkInt(scope, 'layout columns', cols, 1, MAX_GRID_SIDE);
    this.id = options.id ?? `GridWorld-${rows}x${cols}`;
    this.rows = rows;
    this.cols = cols;
    this.states = rows * cols;
    this.observationSpace = { kind: 'discrete', n: this.states };
    this.kinds = [];
    let start = -1;
    layout.forEach((line, r) => {
      if (typeof line !== 'string' || line.length !== cols) {
        throw new OpInputError(
          this.id,
          'layout',
          `row ${r} must have ${cols} cells like row 0, got ${typeof line === 'string' ? line.length : String(line)}`,
        );
      }
      [...line].forEach((char, c) => {
        const kind = KIND_OF_CHAR[char];
        if (kind === undefined) {
          throw new OpInputError(
            this.id,
            'layout',
            `row ${r}, col ${c}: unknown cell '${char}' (use S . F # G H C)`,
          );
        }
        if (char === 'S') {
          if (start >= 0) {
            throw new OpInputError(
              this.id,
              'layout',
              `has a second start 'S' at row ${r}, col ${c}`,
            );
          }
          start = r * cols + c;
        }
        this.kinds.push(kind);
      });
    });
    if (start < 0) throw new OpInputError(this.id, 'layout', "has no start cell 'S'");
    this.startState = start;
    this.rewardOverride = new Array<number | null>(this.states).fill(null);
    this.cache = new Array<readonly Transition[] | undefined>(this.states * 4);

    this.stepRewardValue = finite(this.id, 'stepReward', options.stepReward ?? 0);
    this.kindRewards = {
      goal: finite(this.id, 'goalReward', options.goalReward ?? 1),
      hole: finite(this.id, 'holeReward', options.holeReward ?? -1),
      cliff: finite(this.id, 'cliffReward', options.cliffReward ?? -100),
    };
    checkRange(this.id, 'slip', options.slip ?? 0, 0, 1);
    this.slipProbability = options.slip ?? 0;
    this.limit = checkLimit(
      this.id,
      options.maxEpisodeSteps === undefined ? 100 : options.maxEpisodeSteps,
    );
    const directions = options.actionDirections ?? [LEFT, DOWN, RIGHT, UP];
    if (directions.length !== 4 || [0, 1, 2, 3].some((d) => !directions.includes(d))) {
      throw new OpInputError(
        this.id,
        'actionDirections',
        `must be a permutation of [0, 1, 2, 3] (left, down, right, up), got [${directions.join(', ')}]`,
      );
    }
    this.actionDirections = [...directions];
    for (const { row, col, reward } of options.cellRewards ?? []) this.setReward(row, col, reward);
    this.edits = 0;
    const seed = options.seed ?? 0;
    checkInt(this.id, 'seed', seed, 0, 2 ** 32 - 1);
    this.random = seededRandom(seed);
  }

  // ---- geometry -------------------------------------------------------------------------------

  /** State index of (row, col); throws OpInputError when the cell is off the grid. */
  stateOf(row: number, col: number): number {
    checkInt(this.id, 'row', row, 0, this.rows - 1);
    checkInt(this.id, 'col', col, 0, this.cols - 1);
    return row * this.cols + col;
  }

  /** (row, col) of a state index. */
  cellOf(state: number): { row: number; col: number } {
    this.checkState(state);
    return { row: Math.floor(state / this.cols), col: state % this.cols };
  }

  kindAt(state: number): CellKind {
    this.checkState(state);
    return this.kinds[state]!;
  }

  /** The reward for landing in `state`: its own reward if set, else its kind's default. */
  rewardAt(state: number): number {
    this.checkState(state);
    const kind = this.kinds[state]!;
    const fallback =
      kind === 'goal' || kind === 'hole' || kind === 'cliff'
        ? this.kindRewards[kind]
        : this.stepRewardValue;
    return this.rewardOverride[state] ?? fallback;
  }

  /** Counts edits, so viewers and planners can tell the world changed. */
  get version(): number {
    return this.edits;
  }
  get start(): number {
    return this.startState;
  }
  get slip(): number {
    return this.slipProbability;
  }
  get stepReward(): number {
    return this.stepRewardValue;
  }
  get maxEpisodeSteps(): number | null {
    return this.limit;
  }
  /** The agent's cell, or null before the first reset. */
  get agent(): number | null {
    return this.position;
  }

  /** The current world as layout rows ('S' marks the start; floor prints as '.'). */
  layout(): string[] {
    const out: string[] = [];
    for (let r = 0; r < this.rows; r++) {
      let line = '';
      for (let c = 0; c < this.cols; c++) {
        const s = r * this.cols + c;
        line += s === this.startState ? 'S' : CHAR_OF_KIND[this.kinds[s]!];
      }
      out.push(line);
    }
    return out;
  }

  // ---- edits (the model reflects them at once) -------------------------------------------------

  /**
   * Paints a cell with a kind, clearing its own reward. The start cell must stay floor, and
   * during an episode the agent's cell must too.
   */
  setCell(row: number, col: number, kind: CellKind): void {
    const s = this.stateOf(row, col);
    checkKind(this.id, kind);
    if (kind !== 'floor' && s === this.startState) {
      throw new OpInputError(
        this.id,
        'cell',
        `(${row}, ${col}) is the start; move the start first`,
      );
    }
    if (kind !== 'floor' && s === this.position && !this.ended) {
      throw new OpInputError(
        this.id,
        'cell',
        `(${row}, ${col}) holds the agent mid-episode; edit it between episodes`,
      );
    }
    this.kinds[s] = kind;
    this.rewardOverride[s] = null;
    this.edited();
  }

  /** Adds or removes a wall. */
  setWall(row: number, col: number, wall: boolean): void {
    this.setCell(row, col, wall ? 'wall' : 'floor');
  }

  /** Sets the reward for landing in one cell; null restores its kind's default. */
  setReward(row: number, col: number, reward: number | null): void {
    const s = this.stateOf(row, col);
    if (reward !== null) finite(this.id, `reward of (${row}, ${col})`, reward);
    this.rewardOverride[s] = reward;
    this.edited();
  }

  /** Moves the start (a floor cell); takes effect at the next reset and the next cliff fall. */
  setStart(row: number, col: number): void {
    const s = this.stateOf(row, col);
    if (this.kinds[s] !== 'floor') {
      throw new OpInputError(
        this.id,
        'start',
        `must be a floor cell, but (${row}, ${col}) is ${this.kinds[s]}`,
      );
    }
    this.startState = s;
    this.edited();
  }

  setSlip(slip: number): void {
    checkRange(this.id, 'slip', slip, 0, 1);
    this.slipProbability = slip;
    this.edited();
  }

  setStepReward(reward: number): void {
    this.stepRewardValue = finite(this.id, 'stepReward', reward);
    this.edited();
  }

  /** Sets the time limit (≥ 1 step, or null for none); applies from the next step. */
  setMaxEpisodeSteps(limit: number | null): void {
    this.limit = checkLimit(this.id, limit);
    this.edited();
  }

  private edited(): void {
    this.cache = new Array<readonly Transition[] | undefined>(this.states * 4);
    this.edits += 1;
  }

  // ---- the model -------------------------------------------------------------------------------

  isTerminal(state: number): boolean {
    const kind = this.kindAt(state);
    return kind === 'goal' || kind === 'hole';
  }

  /** Walls and cliffs are never occupied: entering a cliff puts the agent back on the start. */
  canOccupy(state: number): boolean {
    const kind = this.kindAt(state);
    return kind !== 'wall' && kind !== 'cliff';
  }

  transitions(state: number, action: number): readonly Transition[] {
    this.checkState(state);
    checkInt(this.id, 'action', action, 0, 3);
    const key = state * 4 + action;
    const cached = this.cache[key];
    if (cached) return cached;
    const kind = this.kinds[state]!;
    let out: Transition[];
    if (kind !== 'floor') {
      // Terminal cells absorb; walls and cliffs are never occupied. Value 0 either way.
      out = [{ probability: 1, next: state, reward: 0, terminal: this.isTerminal(state) }];
    } else {
      const d = this.actionDirections[action]!;
      const side = this.slipProbability / 2;
      const outcomes: [number, number][] = [
        [(d + 3) % 4, side],
        [d, 1 - this.slipProbability],
        [(d + 1) % 4, side],
      ];
      out = outcomes
        .filter(([, p]) => p > 0)
        .map(([direction, probability]) => this.move(state, direction, probability));
    }
    const frozen = Object.freeze(out.map((t) => Object.freeze(t)));
    this.cache[key] = frozen;
    return frozen;
  }

  /** The outcome of actually moving in `direction` from floor cell `state`. */
  private move(state: number, direction: number, probability: number): Transition {
    const [dr, dc] = OFFSETS[direction]!;
    const row = Math.floor(state / this.cols) + dr;
    const col = (state % this.cols) + dc;
    const inside = row >= 0 && row < this.rows && col >= 0 && col < this.cols;
    let next = inside ? row * this.cols + col : state;
    if (this.kinds[next] === 'wall') next = state;
    const reward = this.rewardAt(next);
    const kind = this.kinds[next]!;
    if (kind === 'cliff') return { probability, next: this.startState, reward, terminal: false };
    return { probability, next, reward, terminal: kind === 'goal' || kind === 'hole' };
  }

  // ---- the env -------------------------------------------------------------------------------

  reset(seed?: number): { obs: number; info: Info } {
    if (seed !== undefined) {
      if (!Number.isInteger(seed) || seed < 0 || seed > 2 ** 32 - 1) {
        throw new EnvError(this.id, 0, `seed must be an integer in [0, 2^32 − 1], got ${seed}`);
      }
      this.random = seededRandom(seed);
    }
    this.position = this.startState;
    this.elapsed = 0;
    this.ended = false;
    return { obs: this.startState, info: { prob: 1 } };
  }

  step(action: number): StepResult<number> {
    if (this.position === null) throw new EnvError(this.id, 0, 'step() before reset()');
    if (this.ended) {
      throw new EnvError(this.id, this.elapsed, 'the episode has ended; call reset() first');
    }
    if (!Number.isInteger(action) || action < 0 || action > 3) {
      throw new EnvError(
        this.id,
        this.elapsed,
        `action must be an integer in [0, 3], got ${action}`,
      );
    }
    const outcomes = this.transitions(this.position, action);
    // One uniform per step whatever the slip, so edits of slip do not shift later draws.
    const u = this.random();
    let chosen = outcomes[outcomes.length - 1]!;
    let cumulative = 0;
    for (const t of outcomes) {
      cumulative += t.probability;
      if (u < cumulative) {
        chosen = t;
        break;
      }
    }
    this.position = chosen.next;
    this.elapsed += 1;
    const truncated = this.limit !== null && this.elapsed >= this.limit;
    this.ended = chosen.terminal || truncated;
    return {
      obs: chosen.next,
      reward: chosen.reward,
      terminated: chosen.terminal,
      truncated,
      info: { prob: chosen.probability },
    };
  }

  private checkState(state: number): void {
    checkInt(this.id, 'state', state, 0, this.states - 1);
  }
}

function finite(scope: string, field: string, value: number): number {
  checkRange(scope, field, value, -Infinity, Infinity);
  return value;
}

function checkLimit(scope: string, limit: number | null): number | null {
  if (limit !== null) checkInt(scope, 'maxEpisodeSteps', limit, 1, 2 ** 31 - 1);
  return limit;
}

function checkKind(scope: string, kind: string): void {
  if (!Object.hasOwn(CHAR_OF_KIND, kind)) {
    throw new OpInputError(
      scope,
      'kind',
      `must be one of 'floor', 'wall', 'goal', 'hole', 'cliff', got '${kind}'`,
    );
  }
}
