import fc from 'fast-check';
import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import {
  comparisonFromHash,
  decodeComparison,
  encodeComparison,
  hashWithComparison,
  UrlStateError,
  type LinkedRun,
} from '../../src/compare/url-state';
import type { FieldSpec } from '../../src/util/hyperparams';
import { catalog, defaultsOf } from './fixtures';

/** A hand-built token: compact JSON → UTF-8 → base64url by Node's Buffer (not the code under test). */
const token = (json: unknown) =>
  `v1.${Buffer.from(JSON.stringify(json), 'utf8').toString('base64url')}`;

function error(run: () => unknown): UrlStateError {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(UrlStateError);
    return e as UrlStateError;
  }
  throw new Error('expected a UrlStateError');
}

/** A valid value of one setting. */
function settingValue(spec: FieldSpec): fc.Arbitrary<number | boolean | string> {
  switch (spec.kind) {
    case 'boolean':
      return fc.boolean();
    case 'choice':
      return fc.constantFrom(...spec.options);
    case 'int':
      return fc.integer({ min: spec.min, max: spec.max });
    case 'number':
      return fc
        .double({ min: spec.min, max: spec.max, noNaN: true })
        .map((v) => v + 0)
        .filter((v) => !(spec.minOpen && v <= spec.min) && !(spec.maxOpen && v >= spec.max));
  }
}

/** A run of any algorithm in the catalog: a few settings changed from the defaults. */
const linkedRun: fc.Arbitrary<LinkedRun> = fc.constantFrom(...catalog.algorithms).chain((algo) => {
  const tasks = algo.family === 'env' ? algo.envs : catalog.tasks.map((t) => t.name);
  const keys = Object.keys(algo.spec);
  return fc.record({
    algorithm: fc.constant(algo.name),
    task: fc.constantFrom(...tasks),
    seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
    config: fc
      .subarray(keys, { maxLength: Math.min(4, keys.length) })
      .chain((picked) =>
        fc.record(Object.fromEntries(picked.map((k) => [k, settingValue(algo.spec[k]!)]))),
      )
      .map((changes) => ({ ...algo.defaults, ...changes })),
    ...(algo.family === 'lm'
      ? {
          sftSteps: fc.integer({ min: catalog.sftSteps.min, max: catalog.sftSteps.max }),
          init: fc.constantFrom(
            { kind: 'shipped' as const, model: 'reverse' },
            { kind: 'shipped' as const, model: 'multiply' },
          ),
        }
      : {}),
    ...(algo.curriculum
      ? {
          curriculum: fc.record({
            threshold: fc.double({ min: 0.01, max: 1, noNaN: true }),
            patience: fc.integer({ min: 1, max: 1000 }),
          }),
        }
      : {}),
    ...(algo.rewardModel
      ? {
          rewardModel: fc.record({
            prompts: fc.integer({ min: 4, max: 1024 }),
            samplesPerPrompt: fc.integer({ min: 2, max: 16 }),
            labelNoise: fc.double({ min: 0, max: 0.49, noNaN: true }).map((v) => v + 0),
            steps: fc.integer({ min: 1, max: 2000 }),
            pairsPerStep: fc.integer({ min: 1, max: 256 }),
            lr: fc.double({ min: 1e-6, max: 1, noNaN: true }),
          }),
        }
      : {}),
    ...(algo.retained
      ? {
          retained: fc.constantFrom(
            { task: 'multiply' },
            { task: 'addition', taskOptions: { maxDigits: 3, reverseAnswer: true } },
          ),
        }
      : {}),
  });
});

/** Valid reward-model settings, by hand within REWARD_MODEL_CONFIG_SPEC's ranges. */
const rewardModel = {
  prompts: 64,
  samplesPerPrompt: 4,
  labelNoise: 0.1,
  steps: 30,
  pairsPerStep: 16,
  lr: 0.002,
};

describe('URL state', () => {
  it('decodes a hand-built link, filling in the defaults', () => {
    const runs = decodeComparison(
      token([
        { a: 'grpo', t: 'reverse', s: 1, c: { lr: 0.01 } },
        { a: 'ppo', t: 'reverse', s: 2, w: 50, i: 'reverse' },
      ]),
      catalog,
    );
    expect(runs).toEqual([
      { algorithm: 'grpo', task: 'reverse', seed: 1, config: { ...defaultsOf('grpo'), lr: 0.01 } },
      {
        algorithm: 'ppo',
        task: 'reverse',
        seed: 2,
        config: defaultsOf('ppo'),
        sftSteps: 50,
        init: { kind: 'shipped', model: 'reverse' },
      },
    ]);
  });

  it('encodes only the settings that differ from the defaults', () => {
    const encoded = encodeComparison(
      [
        {
          algorithm: 'grpo',
          task: 'reverse',
          seed: 1,
          config: { ...defaultsOf('grpo'), lr: 0.01 },
        },
      ],
      catalog,
    );
    expect(encoded).toBe(token([{ a: 'grpo', t: 'reverse', s: 1, c: { lr: 0.01 } }]));
  });

  it('carries a reward model as r: [prompts, samplesPerPrompt, labelNoise, steps, pairsPerStep, lr]', () => {
    const linked: LinkedRun = {
      algorithm: 'ppo',
      task: 'reverse',
      seed: 4,
      config: defaultsOf('ppo'),
      rewardModel,
    };
    const hand = token([{ a: 'ppo', t: 'reverse', s: 4, r: [64, 4, 0.1, 30, 16, 0.002] }]);
    expect(encodeComparison([linked], catalog)).toBe(hand);
    expect(decodeComparison(hand, catalog)).toEqual([linked]);
    const grpo = decodeComparison(
      token([{ a: 'grpo', t: 'copy', s: 0, u: [0.8, 5], r: [4, 2, 0, 1, 1, 1] }]),
      catalog,
    );
    expect(grpo[0]!.curriculum).toEqual({ threshold: 0.8, patience: 5 });
    expect(grpo[0]!.rewardModel).toEqual({
      prompts: 4,
      samplesPerPrompt: 2,
      labelNoise: 0,
      steps: 1,
      pairsPerStep: 1,
      lr: 1,
    });
  });

  it('round-trips: decode(encode(runs)) = runs, or the link is refused as too long', () => {
    fc.assert(
      fc.property(fc.array(linkedRun, { minLength: 1, maxLength: 4 }), (runs) => {
        let encoded: string;
        try {
          encoded = encodeComparison(runs, catalog);
        } catch (e) {
          expect((e as UrlStateError).path).toBe('(link)');
          return;
        }
        expect(encoded.length).toBeLessThanOrEqual(2000);
        expect(decodeComparison(encoded, catalog)).toEqual(runs);
      }),
    );
  });

  // Each bad link → a UrlStateError naming the run index (when one is at fault) and the field.
  it.each<[string, string, string, number | undefined, string]>([
    ['no version', 'abc', '(link)', undefined, "must start with 'v1.'"],
    ['a newer version', 'v2.W10', '(link)', undefined, 'is version v2; this lab reads v1'],
    [
      'damaged base64',
      'v1.!!',
      '(link)',
      undefined,
      'is damaged (character "!" at index 0 is not base64)',
    ],
    [
      'invalid UTF-8',
      `v1.${Buffer.from([0xff, 0xfe]).toString('base64url')}`,
      '(link)',
      undefined,
      'is damaged',
    ],
    [
      'not JSON',
      `v1.${Buffer.from('[{').toString('base64url')}`,
      '(link)',
      undefined,
      'is damaged',
    ],
    [
      'not a list',
      token({ a: 'grpo' }),
      'runs',
      undefined,
      'must be a list of runs, got an object',
    ],
    ['no runs', token([]), 'runs', undefined, 'must hold 1 to 16 runs, got 0'],
    [
      'too many runs',
      token(new Array(17).fill({ a: 'grpo', t: 'reverse', s: 1 })),
      'runs',
      undefined,
      'got 17',
    ],
    [
      'an unknown field',
      token([{ a: 'grpo', t: 'reverse', s: 1, x: 1 }]),
      'runs[0].x',
      0,
      'is not a known field (known: a (algorithm)',
    ],
    ['a missing seed', token([{ a: 'grpo', t: 'reverse' }]), 'runs[0].seed', 0, 'is missing'],
    [
      'an unknown algorithm',
      token([{ a: 'a2c', t: 'reverse', s: 1 }]),
      'runs[0].algorithm',
      0,
      'must be one of',
    ],
    [
      'a wrong task in the second run',
      token([
        { a: 'grpo', t: 'reverse', s: 1 },
        { a: 'sarsa', t: 'reverse', s: 1 },
      ]),
      'runs[1].task',
      1,
      "must be one of 'gridworld'",
    ],
    [
      'a fractional seed',
      token([{ a: 'grpo', t: 'reverse', s: 1.5 }]),
      'runs[0].seed',
      0,
      'must be an integer in [0, 2147483647], got 1.5',
    ],
    [
      'a setting out of range',
      token([{ a: 'grpo', t: 'reverse', s: 1, c: { lr: 2 } }]),
      'runs[0].config.lr',
      0,
      'must be a number in (0, 1], got 2',
    ],
    [
      'an unknown setting',
      token([{ a: 'grpo', t: 'reverse', s: 1, c: { toString: 1 } }]),
      'runs[0].config.toString',
      0,
      'is not a setting of grpo',
    ],
    [
      'warm-up steps for an env run',
      token([{ a: 'sarsa', t: 'cliffwalking', s: 1, w: 5 }]),
      'runs[0].sftSteps',
      0,
      'only for language-model runs',
    ],
    [
      'a start for an env run',
      token([{ a: 'sarsa', t: 'cliffwalking', s: 1, i: 'reverse' }]),
      'runs[0].init',
      0,
      'only for language-model runs',
    ],
    [
      'a curriculum for an algorithm without one',
      token([{ a: 'dpo', t: 'reverse', s: 1, u: [0.8, 5] }]),
      'runs[0].curriculum',
      0,
      'is not a setting of dpo',
    ],
    [
      'a curriculum that is not a pair',
      token([{ a: 'grpo', t: 'reverse', s: 1, u: [0.8] }]),
      'runs[0].curriculum',
      0,
      'must be [threshold, patience], got',
    ],
    [
      'a curriculum patience out of range',
      token([{ a: 'grpo', t: 'reverse', s: 1, u: [0.8, 0] }]),
      'runs[0].curriculum.patience',
      0,
      'must be an integer in [1, 1000], got 0',
    ],
    [
      'a retained task for dpo (its catalog entry keeps none)',
      token([{ a: 'dpo', t: 'reverse', s: 1, k: { t: 'addition' } }]),
      'runs[0].retained',
      0,
      'is not a setting of dpo',
    ],
    [
      'a retained task with an unknown field',
      token([{ a: 'grpo', t: 'reverse', s: 1, k: { t: 'addition', w: 1 } }]),
      'runs[0].retained.w',
      0,
      'is not a known field (known: t, o)',
    ],
    [
      "a retained task's option out of range",
      token([{ a: 'ppo', t: 'reverse', s: 1, k: { t: 'addition', o: { maxDigits: 0 } } }]),
      'runs[0].retained.taskOptions.maxDigits',
      0,
      'must be an integer in',
    ],
    [
      'a reward model for dpo (its catalog entry has no reward model)',
      token([{ a: 'dpo', t: 'reverse', s: 1, r: [64, 4, 0.1, 30, 16, 0.002] }]),
      'runs[0].rewardModel',
      0,
      'is not a setting of dpo',
    ],
    [
      'a reward model for an env run',
      token([{ a: 'q-learning', t: 'cliffwalking', s: 1, r: [64, 4, 0.1, 30, 16, 0.002] }]),
      'runs[0].rewardModel',
      0,
      'is not a setting of q-learning',
    ],
    [
      'a reward model missing its last value',
      token([{ a: 'grpo', t: 'reverse', s: 1, r: [64, 4, 0.1, 30, 16] }]),
      'runs[0].rewardModel',
      0,
      'must be [prompts, samplesPerPrompt, labelNoise, steps, pairsPerStep, lr], got an array of 5',
    ],
    [
      'a reward model with a seventh value',
      token([{ a: 'grpo', t: 'reverse', s: 1, r: [64, 4, 0.1, 30, 16, 0.002, 1] }]),
      'runs[0].rewardModel',
      0,
      'got an array of 7',
    ],
    [
      'a reward model as an object (links hold the array)',
      token([{ a: 'grpo', t: 'reverse', s: 1, r: rewardModel }]),
      'runs[0].rewardModel',
      0,
      'must be [prompts, samplesPerPrompt, labelNoise, steps, pairsPerStep, lr], got an object',
    ],
    [
      'a reward model with too many samples per prompt',
      token([{ a: 'grpo', t: 'reverse', s: 1, r: [64, 17, 0.1, 30, 16, 0.002] }]),
      'runs[0].rewardModel.samplesPerPrompt',
      0,
      'must be an integer in [2, 16], got 17',
    ],
    [
      'a reward model with negative label noise',
      token([{ a: 'ppo', t: 'reverse', s: 1, r: [64, 4, -0.1, 30, 16, 0.002] }]),
      'runs[0].rewardModel.labelNoise',
      0,
      'must be a number in [0, 0.5), got -0.1',
    ],
    [
      'a reward model with a null learning rate',
      token([{ a: 'grpo', t: 'reverse', s: 1, r: [64, 4, 0.1, 30, 16, null] }]),
      'runs[0].rewardModel.lr',
      0,
      'must be a number in (0, 1], got null',
    ],
    [
      'a start that is not a model name',
      token([{ a: 'grpo', t: 'reverse', s: 1, i: '../x' }]),
      'runs[0].init',
      0,
      'must be a model name (a-z, 0-9, -), got "../x"',
    ],
    [
      'warm-up steps out of range',
      token([{ a: 'grpo', t: 'reverse', s: 1, w: -1 }]),
      'runs[0].sftSteps',
      0,
      'must be an integer in [0, 5000], got -1',
    ],
    [
      'a link over 2000 characters',
      `v1.${'A'.repeat(1998)}`,
      '(link)',
      undefined,
      'must be text of at most 2000 characters, got 2001 characters',
    ],
  ])('refuses %s', (_what, link, path, run, message) => {
    const e = error(() => decodeComparison(link, catalog));
    expect(e.path).toBe(path);
    expect(e.run).toBe(run);
    expect(e.problem).toContain(message);
  });

  it('refuses to encode an invalid run or a link that would be too long', () => {
    const bad = error(() =>
      encodeComparison(
        [
          { algorithm: 'grpo', task: 'reverse', seed: 1, config: defaultsOf('grpo') },
          { algorithm: 'grpo', task: 'reverse', seed: 1, config: { ...defaultsOf('grpo'), lr: 7 } },
        ],
        catalog,
      ),
    );
    expect([bad.path, bad.run]).toEqual(['runs[1].config.lr', 1]);
    const partial = defaultsOf('grpo');
    delete partial.lr;
    const missing = error(() =>
      encodeComparison([{ algorithm: 'grpo', task: 'reverse', seed: 1, config: partial }], catalog),
    );
    expect([missing.path, missing.problem]).toEqual(['runs[0].config.lr', 'is missing']);
    const badModel = error(() =>
      encodeComparison(
        [
          {
            algorithm: 'grpo',
            task: 'reverse',
            seed: 1,
            config: defaultsOf('grpo'),
            rewardModel: { ...rewardModel, pairsPerStep: 0 },
          },
        ],
        catalog,
      ),
    );
    expect([badModel.path, badModel.run]).toEqual(['runs[0].rewardModel.pairsPerStep', 0]);
    const onDpo = error(() =>
      encodeComparison(
        [{ algorithm: 'dpo', task: 'reverse', seed: 1, config: defaultsOf('dpo'), rewardModel }],
        catalog,
      ),
    );
    expect([onDpo.path, onDpo.problem]).toEqual(['runs[0].rewardModel', 'is not a setting of dpo']);
    // 16 runs with every setting changed: far over 2000 characters.
    const busy = {
      algorithm: 'grpo',
      task: 'reverse',
      seed: 123456789,
      config: {
        ...defaultsOf('grpo'),
        lr: 0.000123456789,
        temperature: 0.987654321,
        topP: 0.123456789,
      },
    };
    const long = error(() => encodeComparison(new Array(16).fill(busy), catalog));
    expect(long.path).toBe('(link)');
    expect(long.problem).toMatch(/^would be \d+ characters; a link holds at most 2000/);
  });

  it('lives in the hash query, next to the route', () => {
    const value = token([{ a: 'grpo', t: 'reverse', s: 1 }]);
    expect(comparisonFromHash('#/lab', catalog)).toBeUndefined();
    expect(hashWithComparison('#/lab', value)).toBe(`#/lab?compare=${value}`);
    expect(hashWithComparison(`#/lab?x=1&compare=old`, value)).toBe(`#/lab?x=1&compare=${value}`);
    expect(hashWithComparison(`#/lab?compare=${value}`, undefined)).toBe('#/lab');
    expect(comparisonFromHash(`#/lab?compare=${value}`, catalog)).toEqual([
      { algorithm: 'grpo', task: 'reverse', seed: 1, config: defaultsOf('grpo') },
    ]);
  });
});

describe('URL state: a new model’s positions', () => {
  const rotary: LinkedRun = {
    algorithm: 'grpo',
    task: 'reverse',
    seed: 1,
    config: defaultsOf('grpo'),
    positions: 'rotary',
  };

  it('carries them as p, and a link without p reads as before (learned, left out)', () => {
    const hand = token([{ a: 'grpo', t: 'reverse', s: 1, p: 'rotary' }]);
    expect(encodeComparison([rotary], catalog)).toBe(hand);
    expect(decodeComparison(hand, catalog)).toEqual([rotary]);
    const old = decodeComparison(token([{ a: 'grpo', t: 'reverse', s: 1 }]), catalog);
    expect('positions' in old[0]!).toBe(false);
  });

  it.each<[string, Record<string, unknown>, string]>([
    ['an unknown kind', { p: 'alibi' }, `must be one of 'learned', 'rotary', got "alibi"`],
    ['positions beside a shipped start', { p: 'rotary', i: 'reverse' }, 'leave out i'],
  ])('refuses %s, naming runs[i].positions', (_what, extra, problem) => {
    const e = error(() =>
      decodeComparison(token([{ a: 'grpo', t: 'reverse', s: 1, ...extra }]), catalog),
    );
    expect(e.path).toBe('runs[0].positions');
    expect(e.run).toBe(0);
    expect(e.message).toContain(problem);
  });

  it('refuses positions on an environment run', () => {
    const e = error(() =>
      decodeComparison(token([{ a: 'q-learning', t: 'cliffwalking', s: 1, p: 'rotary' }]), catalog),
    );
    expect(e.message).toBe('runs[0].positions: is only for language-model runs, not q-learning');
  });
});
