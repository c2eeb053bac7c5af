import { describe, expect, it } from 'vitest';
import {
  hasTrainer,
  nextRunState,
  RUN_EVENTS,
  RUN_STATES,
  RunLife,
  type RunEvent,
  type RunState,
} from '../../src/worker/run-state';

/** The run's life as the protocol describes it (run-protocol.ts RunWorkerApi), move by move. */
const ALLOWED: [RunState, RunEvent, RunState][] = [
  ['created', 'build', 'warming'],
  ['created', 'dispose', 'disposed'],
  ['warming', 'built', 'ready'],
  ['warming', 'fail', 'failed'],
  ['warming', 'dispose', 'disposed'],
  ['ready', 'start', 'training'],
  ['ready', 'fail', 'failed'],
  ['ready', 'dispose', 'disposed'],
  ['training', 'pause', 'pausing'],
  ['training', 'fail', 'failed'],
  ['training', 'dispose', 'disposed'],
  ['pausing', 'stopped', 'paused'],
  ['pausing', 'fail', 'failed'],
  ['pausing', 'dispose', 'disposed'],
  ['paused', 'start', 'training'],
  ['paused', 'fail', 'failed'],
  ['paused', 'dispose', 'disposed'],
  ['failed', 'dispose', 'disposed'],
];

const allowed = new Set(ALLOWED.map(([from, event]) => `${from} ${event}`));
const REFUSED: [RunState, RunEvent][] = RUN_STATES.flatMap((from) =>
  RUN_EVENTS.filter((event) => !allowed.has(`${from} ${event}`)).map(
    (event) => [from, event] as [RunState, RunEvent],
  ),
);

/** A RunLife brought to `state` through allowed moves only. */
function lifeAt(state: RunState): RunLife {
  const path: Record<RunState, RunEvent[]> = {
    created: [],
    warming: ['build'],
    ready: ['build', 'built'],
    training: ['build', 'built', 'start'],
    pausing: ['build', 'built', 'start', 'pause'],
    paused: ['build', 'built', 'start', 'pause', 'stopped'],
    failed: ['build', 'fail'],
    disposed: ['dispose'],
  };
  const life = new RunLife();
  for (const event of path[state]) life.move(event);
  expect(life.state).toBe(state);
  return life;
}

describe('run states', () => {
  it('lists 8 states and 7 events, and 56 pairs split into allowed and refused', () => {
    expect(RUN_STATES).toHaveLength(8);
    expect(RUN_EVENTS).toHaveLength(7);
    expect(ALLOWED.length + REFUSED.length).toBe(56);
    expect(REFUSED).toHaveLength(38);
  });

  it.each(ALLOWED)('%s --%s--> %s', (from, event, to) => {
    expect(nextRunState(from, event)).toBe(to);
    const life = lifeAt(from);
    expect(life.can(event)).toBe(true);
    expect(life.move(event)).toBe(to);
    expect(life.state).toBe(to);
  });

  it.each(REFUSED)('%s refuses %s', (from, event) => {
    expect(nextRunState(from, event)).toBeUndefined();
    const life = lifeAt(from);
    expect(life.can(event)).toBe(false);
    expect(() => life.move(event)).toThrow(`a run that is ${from} cannot ${event}`);
    expect(life.state).toBe(from); // a refused move changes nothing
  });

  it('has a trainer to command only between built and failed or disposed', () => {
    expect(RUN_STATES.filter(hasTrainer)).toEqual(['ready', 'training', 'pausing', 'paused']);
  });

  it('ends in disposed, from which nothing leads on', () => {
    for (const from of RUN_STATES) {
      if (from !== 'disposed') expect(nextRunState(from, 'dispose')).toBe('disposed');
    }
    expect(RUN_EVENTS.map((event) => nextRunState('disposed', event))).toEqual(
      RUN_EVENTS.map(() => undefined),
    );
  });
});
