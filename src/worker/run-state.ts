/**
 * The life of a run in its worker (run-host.ts) as named states and the moves between them, so
 * that what the host may do at any moment is read from one table rather than from a set of flags.
 *
 *   created ─build→ warming ─built→ ready ─start→ training ─pause→ pausing ─stopped→ paused
 *                                                     ↑                                 │
 *                                                     └──────────────start──────────────┘
 *   warming, ready, training, pausing, paused ─fail→ failed;   any state but disposed ─dispose→ disposed
 *
 * `ready` and `paused` also take single steps (RunWorkerApi.step); a step does not change the
 * state, and a step whose update throws fails the run like a training update that throws.
 */

export type RunState =
  'created' | 'warming' | 'ready' | 'training' | 'pausing' | 'paused' | 'failed' | 'disposed';

/**
 * build: createRun() has checked its spec and begins the model. built: the trainer is ready.
 * start/pause: the user's commands. stopped: the training loop has ended after a pause. fail: the
 * build, an update or a step threw. dispose: the worker is being freed.
 */
export type RunEvent = 'build' | 'built' | 'start' | 'pause' | 'stopped' | 'fail' | 'dispose';

export const RUN_STATES: readonly RunState[] = [
  'created',
  'warming',
  'ready',
  'training',
  'pausing',
  'paused',
  'failed',
  'disposed',
];

export const RUN_EVENTS: readonly RunEvent[] = [
  'build',
  'built',
  'start',
  'pause',
  'stopped',
  'fail',
  'dispose',
];

/** Every allowed move; an event missing from a state's row is refused in that state. */
const TRANSITIONS: Readonly<Record<RunState, Partial<Record<RunEvent, RunState>>>> = {
  created: { build: 'warming', dispose: 'disposed' },
  warming: { built: 'ready', fail: 'failed', dispose: 'disposed' },
  ready: { start: 'training', fail: 'failed', dispose: 'disposed' },
  training: { pause: 'pausing', fail: 'failed', dispose: 'disposed' },
  pausing: { stopped: 'paused', fail: 'failed', dispose: 'disposed' },
  paused: { start: 'training', fail: 'failed', dispose: 'disposed' },
  // A failed run is kept only to be read (its last inspection) and freed: the page duplicates,
  // resets or resumes it in a fresh worker.
  failed: { dispose: 'disposed' },
  disposed: {},
};

/** The state `event` leads to from `state`, or undefined where the move is refused. */
export function nextRunState(state: RunState, event: RunEvent): RunState | undefined {
  return TRANSITIONS[state][event];
}

/** States in which the run has a trainer that takes updates, live changes and single steps. */
export function hasTrainer(state: RunState): boolean {
  return state === 'ready' || state === 'training' || state === 'pausing' || state === 'paused';
}

/**
 * What the run's thread is doing within its state: an update (a live change that comes in now
 * starts with the update after it), waiting for the lab's turn at training (no update is under
 * way; work between updates may run), or neither.
 */
export type RunActivity = 'idle' | 'updating' | 'awaiting-turn';

/** The current state of one run, moved only through the table. */
export class RunLife {
  private current: RunState = 'created';
  /** Why the run failed (the 'fail' move's reason). */
  failure: string | undefined;

  get state(): RunState {
    return this.current;
  }

  /** Whether `event` is allowed now. */
  can(event: RunEvent): boolean {
    return nextRunState(this.current, event) !== undefined;
  }

  /** Makes the move; a refused one throws, naming the state and the event. */
  move(event: RunEvent): RunState {
    const next = nextRunState(this.current, event);
    if (next === undefined) {
      throw new Error(`a run that is ${this.current} cannot ${event}`);
    }
    this.current = next;
    return next;
  }
}
