import { describe, expect, it } from 'vitest';
import { LabRun } from '../../src/state/lab-run.svelte';
import type { RunPort } from '../../src/state/run-port';
import { liveCount, runToPark } from '../../src/state/run-room';
import type { RunStatus } from '../../src/worker/run-protocol';

const port = { terminate: () => {} } as unknown as RunPort;
const spec = {
  algo: 'q-learning',
  env: 'cliffwalking',
  seed: 1,
  config: {},
  backend: 'auto' as const,
};

/** A run with a worker (unless stored), from a lesson when it has an origin. */
function run(id: string, status: RunStatus, origin?: string, busy = false): LabRun {
  const r = new LabRun(id, id, '#000', spec, status === 'stored' ? undefined : port);
  r.status = status;
  r.origin = origin;
  r.busy = busy;
  return r;
}

describe('runToPark', () => {
  it('parks nothing below the limit; stored runs do not count', () => {
    const runs = [run('a', 'idle', 'l#1'), run('b', 'stored', 'l#2')];
    expect(liveCount(runs)).toBe(1);
    expect(runToPark(runs, 2)).toBeUndefined();
  });

  it('at the limit: the oldest lesson run not training, else the oldest lesson run', () => {
    const lab = run('lab', 'idle');
    const training = run('a', 'running', 'l#1');
    const idle = run('b', 'paused', 'l#2');
    expect(runToPark([lab, training, idle], 3)).toBe(idle);
    expect(runToPark([lab, training, run('c', 'running', 'l#3')], 3)).toBe(training);
  });

  it("never parks the lab's own runs, the run that asks, or a busy one", () => {
    const asking = run('a', 'idle', 'l#1');
    expect(runToPark([run('lab', 'idle'), asking], 2, asking)).toBeUndefined();
    expect(runToPark([run('lab', 'idle'), run('b', 'idle', 'l#2', true)], 2)).toBeUndefined();
  });
});
