/**
 * Environment snapshots (checkpoints of PPO on CartPole): a restored copy takes exactly the steps
 * the original would have taken, resets included, through a JSON round trip; a bad snapshot is
 * refused with the field's name and range and changes nothing.
 */
import { describe, expect, it } from 'vitest';
import { CartPole } from '../../src/envs/cartpole';
import { EnvError, type EnvSnapshot } from '../../src/envs/types';
import { RecordEpisodeStatistics, SyncVectorEnv } from '../../src/envs/vector';
import { seededRandom } from '../../src/util/random';

const wrapped = () => new RecordEpisodeStatistics(new CartPole(), 5);
const vector = (n: number) => new SyncVectorEnv(Array.from({ length: n }, () => wrapped));
/** Through JSON, as a lab-run file carries it. */
const viaJson = (snapshot: EnvSnapshot): EnvSnapshot => JSON.parse(JSON.stringify(snapshot));

/** Steps with actions from a seeded stream; each step's outcome as plain data. */
function play(vec: SyncVectorEnv<Float32Array, number>, steps: number, seed: number) {
  const next = seededRandom(seed);
  const out: unknown[] = [];
  for (let t = 0; t < steps; t++) {
    const r = vec.step(Array.from({ length: vec.numEnvs }, () => (next() < 0.5 ? 0 : 1)));
    out.push([
      r.obs.map((o) => Array.from(o)),
      [...r.rewards],
      r.terminated,
      r.truncated,
      r.finalInfo,
    ]);
  }
  return out;
}

describe('CartPole snapshots', () => {
  it('go on exactly: the same states, and the same reset draws after the episode ends', () => {
    const env = new CartPole();
    env.reset(4);
    for (let t = 0; t < 5; t++) env.step(t % 2);
    const copy = new CartPole();
    copy.restore(viaJson(env.snapshot()));
    expect(copy.state).toEqual(env.state);
    expect(copy.elapsedSteps).toBe(5);
    for (let episode = 0; episode < 3; episode++) {
      for (let done = false; !done;) {
        const [a, b] = [env.step(1), copy.step(1)];
        expect(b).toEqual(a);
        done = a.terminated || a.truncated;
      }
      // The next episode's start comes from the stream the snapshot brought back.
      expect(copy.reset().obs).toEqual(env.reset().obs);
    }
  });

  it('take a fresh env that was never reset', () => {
    const copy = new CartPole();
    copy.restore(new CartPole().snapshot());
    expect(() => copy.step(0)).toThrow('step() before reset()');
    expect(copy.reset().obs).toEqual(new CartPole().reset().obs);
  });

  it.each([
    [{ state: [0, 0, 0] }, 'snapshot.state must be a list of 4 finite numbers, got 3 values'],
    [{ state: [0, 0, null, 0] }, 'snapshot.state[2] must be a finite number, got null'],
    [{ steps: 501 }, 'snapshot.steps must be an integer in [0, 500], got 501'],
    [{ steps: 2.5 }, 'snapshot.steps must be an integer in [0, 500], got 2.5'],
    [{ draws: -1 }, 'snapshot.draws must be an integer in [0, 9007199254740991], got -1'],
    [{ seed: -1 }, 'snapshot.seed must be an integer in [0, 4294967295], got -1'],
    [{ done: 'no' }, 'snapshot.done must be true or false, got "no"'],
    [{ steps: null, done: true }, 'snapshot.done must be false before a reset'],
  ] as [EnvSnapshot, string][])('refuses %o by name and stays as it was', (change, message) => {
    const env = new CartPole();
    env.reset(2);
    env.step(1);
    const before = env.snapshot();
    expect(() => env.restore({ ...before, ...change })).toThrow(EnvError);
    expect(() => env.restore({ ...before, ...change })).toThrow(message);
    expect(env.snapshot()).toEqual(before);
  });
});

describe('vector snapshots', () => {
  it('bring back every sub-env and its episode statistics', () => {
    const vec = vector(3);
    vec.reset(11);
    play(vec, 70, 1); // several episodes end: the queues hold returns
    const snapshot = viaJson(vec.snapshot());
    const copy = vector(3);
    copy.restore(snapshot);
    copy.envs.forEach((env, i) => {
      const [a, b] = [
        vec.envs[i] as RecordEpisodeStatistics<Float32Array, number>,
        env as RecordEpisodeStatistics<Float32Array, number>,
      ];
      expect(b.returnQueue).toEqual(a.returnQueue);
      expect(b.lengthQueue).toEqual(a.lengthQueue);
    });
    expect(
      (vec.envs[0] as RecordEpisodeStatistics<Float32Array, number>).returnQueue.length,
    ).toBeGreaterThan(0);
    // The ended episodes' returns count the steps before the snapshot too.
    expect(play(copy, 200, 2)).toEqual(play(vec, 200, 2));
  });

  it('refuse a snapshot with one bad sub-env, leaving all of them as they were', () => {
    const vec = vector(4);
    vec.reset(3);
    play(vec, 10, 5);
    const before = vec.snapshot();
    const other = vector(4);
    other.reset(90);
    const bad = viaJson(other.snapshot()) as { envs: EnvSnapshot[] };
    (bad.envs[2]!.env as EnvSnapshot).state = [0, 0, 0, Number.MAX_VALUE, 0];
    expect(() => vec.restore(bad as EnvSnapshot)).toThrow(
      /sub-env 2: .*snapshot\.state must be a list of 4 finite numbers, got 5 values/,
    );
    expect(vec.snapshot()).toEqual(before);
  });

  it('refuse a snapshot of another size, and queues longer than the buffer', () => {
    const vec = vector(2);
    vec.reset(0);
    expect(() => vec.restore(vector(3).snapshot())).toThrow(
      'snapshot.envs must be a list of 2 objects, got 3 entries',
    );
    const stats = wrapped();
    stats.reset(0);
    const snap = stats.snapshot();
    expect(() =>
      stats.restore({ ...snap, returnQueue: [1, 2, 3, 4, 5, 6], lengthQueue: [1, 2, 3, 4, 5, 6] }),
    ).toThrow('snapshot.returnQueue must be a list of at most 5 finite numbers, got 6 values');
    expect(() => stats.restore({ ...snap, returnQueue: [1], lengthQueue: [] })).toThrow(
      'snapshot.lengthQueue must be a list of 1 finite numbers, got 0 values',
    );
  });
});
