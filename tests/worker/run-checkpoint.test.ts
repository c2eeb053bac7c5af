/**
 * A run's checkpoint inside its lab-run file: a real checkpoint comes back bit for bit, and the run
 * resumed from the imported one goes on exactly as the run that never stopped; a damaged one is
 * refused with the JSON path of the first bad value.
 */
import { describe, expect, it, vi } from 'vitest';
import { writeLabRunFile, ImportError, parseRunFile } from '../../src/compare/run-file';
import type { RunCheckpoint } from '../../src/worker/run-checkpoint';
import type { Settings } from '../../src/worker/run-protocol';
import {
  cartPoleSpec,
  checkpointAt,
  copySpec,
  host,
  steps,
  straight,
  training,
} from '../worker/checkpoint-runs';
import { catalog, defaultsOf } from '../compare/fixtures';

/** A lab-run file of `updates` updates of a grpo copy run, carrying `checkpoint`. */
function fileWith(checkpoint: RunCheckpoint, updates: number, config: Settings): string {
  return writeLabRunFile({
    algorithm: 'grpo',
    task: 'copy',
    seed: 3,
    config,
    metrics: { 'reward/mean': Array.from({ length: updates }, (_, i) => i / updates) },
    events: [],
    checkpoint,
  });
}

describe('a lab-run file carries its run’s checkpoint', () => {
  it('brings a real checkpoint back bit for bit, and the run resumes from it exactly', async () => {
    // klCoef > 0: the checkpoint holds the reference too; the live change puts an event in it.
    const spec = copySpec('grpo', { klCoef: 0.1 });
    const change: [number, Settings] = [2, { lr: 5e-4 }];
    const expected = await straight(spec, 5, change);
    const checkpoint = await checkpointAt(spec, 3, change);

    const back = parseRunFile(fileWith(checkpoint, 3, spec.config), catalog).checkpoint!;
    expect(back).toEqual(checkpoint);
    expect(back.policy.params).toBeInstanceOf(Float32Array);
    expect(back.reference).toBeInstanceOf(Float32Array);
    expect(back.trainer.events).toEqual([{ step: 2, kind: 'hyperparams', changes: { lr: 5e-4 } }]);

    const { api, messages, points, listener } = host();
    await api.createRun(spec, listener, undefined, back);
    expect(messages.some((m) => m.type === 'warmup' || m.type === 'replay')).toBe(false);
    await steps(api, 2);
    expect(points().map((p) => p.step)).toEqual([4, 5]);
    expect(points().map((p) => training(p.metrics))).toEqual(expected.slice(3));
    await api.dispose();
  }, 120_000);

  it('brings PPO on CartPole back with its environments mid-episode', async () => {
    const spec = cartPoleSpec();
    const expected = await straight(spec, 5);
    const checkpoint = await checkpointAt(spec, 3);
    const file = writeLabRunFile({
      algorithm: 'ppo-mlp',
      task: 'cartpole',
      seed: spec.seed,
      config: spec.config,
      metrics: { 'charts/episodic_return': [10, 12, 15] },
      events: [],
      checkpoint,
    });
    const back = parseRunFile(file, catalog).checkpoint!;
    expect(back).toEqual(checkpoint);

    const { api, points, listener } = host();
    await api.createRun(spec, listener, undefined, back);
    await steps(api, 2);
    expect(points().map((p) => training(p.metrics))).toEqual(expected.slice(3));
    await api.dispose();
  });

  it.each<[string, (env: Json) => void, string, string]>([
    [
      'a non-finite observation',
      (env) => void ((env.nextObs as unknown[])[1] = 'x'),
      'checkpoint.trainer.env.nextObs[1]',
      'must be a finite number, got "x"',
    ],
    [
      'a negative step count',
      (env) => void (env.globalStep = -4),
      'checkpoint.trainer.env.globalStep',
      'must be',
    ],
    [
      'no vector snapshot',
      (env) => void (env.vector = [1, 2]),
      'checkpoint.trainer.env.vector',
      'must be',
    ],
  ])('refuses PPO environments with %s', async (_what, edit, path, message) => {
    const spec = cartPoleSpec();
    const file = JSON.parse(
      writeLabRunFile({
        algorithm: 'ppo-mlp',
        task: 'cartpole',
        seed: spec.seed,
        config: spec.config,
        metrics: { 'charts/episodic_return': [10] },
        events: [],
        checkpoint: await checkpointAt(spec, 1),
      }),
    ) as Json;
    edit(obj(obj(obj(file.checkpoint).trainer).env));
    expect(() => parseRunFile(JSON.stringify(file), catalog)).toThrow(ImportError);
    try {
      parseRunFile(JSON.stringify(file), catalog);
    } catch (e) {
      expect((e as ImportError).path).toBe(path);
      expect((e as ImportError).problem).toContain(message);
    }
  });

  it('refuses a vector snapshot nested 2e6 deep (10 MB) before parsing it', async () => {
    const spec = cartPoleSpec();
    const file = JSON.parse(
      writeLabRunFile({
        algorithm: 'ppo-mlp',
        task: 'cartpole',
        seed: spec.seed,
        config: spec.config,
        metrics: { 'charts/episodic_return': [10] },
        events: [],
        checkpoint: await checkpointAt(spec, 1),
      }),
    ) as Json;
    obj(obj(obj(file.checkpoint).trainer).env).vector = 'BOMB';
    // {"a":{"a":…{}…}}: an object, as a snapshot is, that no structured clone can copy.
    const depth = 2_000_000;
    const text = JSON.stringify(file).replace(
      '"BOMB"',
      '{"a":'.repeat(depth) + '{}' + '}'.repeat(depth),
    );
    // JSON.parse alone takes seconds and hundreds of MB on this: the depth scan refuses it first,
    // within the bomb's first 65 levels (5 characters each) of its 2e6, and JSON.parse never sees it.
    const bombAt = text.indexOf('{"a":{"a":');
    const parse = vi.spyOn(JSON, 'parse');
    let refusal: unknown;
    let parsed: number;
    try {
      parseRunFile(text, catalog);
    } catch (error) {
      refusal = error;
    } finally {
      parsed = parse.mock.calls.length;
      parse.mockRestore();
    }
    expect(parsed, 'JSON.parse calls').toBe(0);
    expect(refusal).toBeInstanceOf(ImportError);
    const message = (refusal as ImportError).message;
    expect(message).toMatch(
      /^\(file\): nests deeper than 64 arrays and objects \(at character \d+\)/,
    );
    const at = Number(/at character (\d+)/.exec(message)![1]);
    expect(at).toBeGreaterThan(bombAt);
    expect(at).toBeLessThanOrEqual(bombAt + 5 * 65);
    // A snapshot of a sane depth is still read (the envs check its fields when the run is built).
    obj(obj(obj(file.checkpoint).trainer).env).vector = { a: [[[[1]]]] };
    expect(parseRunFile(JSON.stringify(file), catalog).checkpoint).toBeDefined();
  });

  it('keeps a reward model and its normalization', () => {
    const back = parseRunFile(fileWith(withRewardModel(), 2, defaultsOf('grpo')), catalog);
    expect(back.checkpoint!.rewardModel).toEqual({
      params: new Float32Array([0.5, -0.25, 3]),
      mean: -0.1,
      std: 0.7,
    });
  });
});

/** A small well-formed checkpoint at update 2 (three weights), built by hand. */
function small(): RunCheckpoint {
  return {
    version: 1,
    step: 2,
    backend: 'cpu',
    policy: {
      params: new Float32Array([0.1, -0.2, 0.3]),
      m: new Float32Array([0.01, 0, -0.01]),
      v: new Float32Array([1e-4, 0, 2e-4]),
      stats: new Float32Array([0.5, 1, 1, 2]),
    },
    trainer: {
      algorithm: 'grpo',
      step: 2,
      config: defaultsOf('grpo') as RunCheckpoint['trainer']['config'],
      events: [],
      health: { healthy: true },
      skippedInARow: 0,
      random: { prompts: 16, sampler: 300 },
    },
  };
}

function withRewardModel(): RunCheckpoint {
  return {
    ...small(),
    rewardModel: { params: new Float32Array([0.5, -0.25, 3]), mean: -0.1, std: 0.7 },
  };
}

/** Base64 of float32 values, as the file writes them. */
function floats(values: number[]): string {
  return Buffer.from(new Float32Array(values).buffer).toString('base64');
}

type Json = Record<string, unknown>;
const obj = (v: unknown) => v as Json;

describe('a damaged checkpoint is refused with its path', () => {
  it.each<[string, (c: Json, file: Json) => void, string, string]>([
    [
      'a NaN weight',
      (c) => void (obj(c.policy).params = floats([0.1, NaN, 0.3])),
      'checkpoint.policy.params[1]',
      'must be finite, got NaN',
    ],
    [
      'an infinite moment',
      (c) => void (obj(c.policy).m = floats([0, Infinity, 0])),
      'checkpoint.policy.m[1]',
      'must be finite, got Infinity',
    ],
    [
      'a negative second moment',
      (c) => void (obj(c.policy).v = floats([0, -1, 0])),
      'checkpoint.policy.v[1]',
      'must be finite and ≥ 0, got -1',
    ],
    [
      'moments of another size',
      (c) => void (obj(c.policy).m = floats([0, 0])),
      'checkpoint.policy.m',
      'must hold 3 values, got 2',
    ],
    [
      'a reference of another size',
      (c) => void (c.reference = floats([1])),
      'checkpoint.reference',
      'must hold 3 values, got 1',
    ],
    [
      'optimizer stats of another size',
      (c) => void (obj(c.policy).stats = floats([1])),
      'checkpoint.policy.stats',
      'must hold 4 values, got 1',
    ],
    [
      'weights that are not base64',
      (c) => void (obj(c.policy).params = 'AAA$'),
      'checkpoint.policy.params',
      'must be base64 (character "$" at index 3 is not base64)',
    ],
    [
      'bytes that are not whole floats',
      (c) => void (obj(c.policy).params = 'AAAAAAA='),
      'checkpoint.policy.params',
      'must hold whole float32 values, got 5 bytes',
    ],
    [
      'a step after the file’s updates',
      (c) => void (c.step = 9),
      'checkpoint.step',
      'must be an integer in [0, 4], got 9',
    ],
    ['another version', (c) => void (c.version = 2), 'checkpoint.version', 'must be 1, got 2'],
    [
      'an unknown backend',
      (c) => void (c.backend = 'tpu'),
      'checkpoint.backend',
      "must be one of 'webgpu', 'cpu'",
    ],
    [
      'a trainer at another step',
      (c) => void (obj(c.trainer).step = 1),
      'checkpoint.trainer.step',
      'must be an integer in [2, 2], got 1',
    ],
    [
      'a trainer of another algorithm',
      (c) => void (obj(c.trainer).algorithm = 'ppo'),
      'checkpoint.trainer.algorithm',
      'must be one of \'grpo\', got "ppo"',
    ],
    [
      'a config out of range',
      (c) => void (obj(obj(c.trainer).config).lr = 5),
      'checkpoint.trainer.config.lr',
      'must be a number in (0, 1], got 5',
    ],
    [
      'an event after the checkpoint',
      (c) => void (obj(c.trainer).events = [{ step: 4, kind: 'unhealthy', reason: 'x' }]),
      'checkpoint.trainer.events[0].step',
      'must be an integer in [1, 3], got 4',
    ],
    [
      'a negative draw count',
      (c) => void (obj(obj(c.trainer).random).sampler = -1),
      'checkpoint.trainer.random.sampler',
      'must be an integer in [0,',
    ],
    [
      'health that is not a boolean',
      (c) => void (obj(c.trainer).health = { healthy: 'yes' }),
      'checkpoint.trainer.health.healthy',
      'must be true or false, got "yes"',
    ],
    [
      'a reward model with std 0',
      (c) => void (c.rewardModel = { params: floats([1]), mean: 0, std: 0 }),
      'checkpoint.rewardModel.std',
      'must be a number > 0, got 0',
    ],
    [
      'an unknown field',
      (c) => void (c.optimizer = {}),
      'checkpoint.optimizer',
      'is not a known field here',
    ],
    [
      'a checkpoint on a run whose algorithm has none',
      (_c, f) =>
        void Object.assign(obj(f.spec), {
          algorithm: 'q-learning',
          task: 'cliffwalking',
          config: defaultsOf('q-learning'),
        }),
      'checkpoint',
      'is only for runs that keep checkpoints (language models, ppo-mlp), not q-learning',
    ],
    [
      'environments on a language-model run',
      (c) => void (obj(c.trainer).env = { globalStep: 0, seconds: 0, nextObs: [], vector: {} }),
      'checkpoint.trainer.env',
      'is not a known field here',
    ],
  ])('refuses %s', (_what, edit, path, message) => {
    const file = JSON.parse(fileWith(small(), 4, defaultsOf('grpo'))) as Json;
    edit(obj(file.checkpoint), file);
    let error: unknown;
    try {
      parseRunFile(JSON.stringify(file), catalog);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ImportError);
    expect((error as ImportError).path).toBe(path);
    expect((error as ImportError).problem).toContain(message);
  });
});

describe('checkpoint random streams with prototype-named names', () => {
  it('keeps each as a name of its own, for the worker to refuse', () => {
    for (const name of ['__proto__', 'constructor', 'toString']) {
      const file = JSON.parse(fileWith(small(), 2, defaultsOf('grpo'))) as Json;
      const random = obj(obj(obj(file.checkpoint).trainer).random);
      Object.defineProperty(random, name, { value: 5, enumerable: true });
      const back = parseRunFile(JSON.stringify(file), catalog).checkpoint!;
      expect(Object.getOwnPropertyDescriptor(back.trainer.random, name)?.value).toBe(5);
      expect(Object.keys(back.trainer.random)).toEqual(['prompts', 'sampler', name]);
    }
  });
});
