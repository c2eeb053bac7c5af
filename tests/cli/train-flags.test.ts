/**
 * `npm run train`'s flags, read before any training: every bad value refused with the flag and
 * its range named, prototype names refused as unknown, and a property test that no flag soup
 * makes the parser crash (a TypeError) or accept a value the lab's run-file import would refuse.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FlagError } from '../../src/cli/args';
import { MAX_UPDATES, readTrainFlags } from '../../src/cli/train-flags';
import { MAX_SEED } from '../../src/compare/run-file';
import { OpInputError } from '../../src/ops/errors';
import { SFT_STEPS } from '../../src/worker/run-spec';

const LM = ['--algo=grpo', '--task=copy'];

describe('readTrainFlags', () => {
  it.each<[string, string[], string]>([
    ['negative updates', ['--updates=-5'], "--updates must be an integer in [1, 100000], got '-5'"],
    [
      'fractional updates',
      ['--updates=1.5'],
      "--updates must be an integer in [1, 100000], got '1.5'",
    ],
    ['no updates', ['--updates=0'], "--updates must be an integer in [1, 100000], got '0'"],
    ['empty updates', ['--updates='], '--updates= has no value'],
    ['log-every 0', ['--log-every=0'], "--log-every must be an integer in [1, 100000], got '0'"],
    [
      'a negative seed',
      [...LM, '--seed=-1'],
      "--seed must be an integer in [0, 2147483647], got '-1'",
    ],
    [
      'a fractional seed',
      ['--algo=sarsa', '--seed=0.5'],
      "--seed must be an integer in [0, 2147483647], got '0.5'",
    ],
    [
      'fractional sft-steps',
      [...LM, '--sft-steps=2.5'],
      "--sft-steps must be an integer in [0, 5000], got '2.5'",
    ],
    [
      'negative sft-steps',
      [...LM, '--sft-steps=-1'],
      "--sft-steps must be an integer in [0, 5000], got '-1'",
    ],
    [
      'an unknown backend',
      [...LM, '--backend=gpu'],
      "--backend must be one of auto, webgpu, cpu, got 'gpu'",
    ],
    [
      'a width below the limit',
      [...LM, '--width=8'],
      "--width must be an integer in [16, 256], got '8'",
    ],
    [
      'a width not a multiple of heads',
      [...LM, '--width=18', '--heads=4'],
      'train: width must be a multiple of --heads (4), got 18',
    ],
    ['--out with no value', ['--out'], '--out needs a value: --out=<value>'],
    ['--init with no value', [...LM, '--init'], '--init needs a value: --init=<value>'],
    [
      'a save interval of 0',
      ['--save-every=0'],
      "--save-every must be a number in (0, 86400], got '0'",
    ],
    ['a prototype name as the algorithm', ['--algo=__proto__'], 'train: algo must be one of'],
    ['constructor as the algorithm', ['--algo=constructor'], "got 'constructor'"],
    ['toString as the task', ['--algo=grpo', '--task=toString'], 'train: task must be one of'],
    [
      'hasOwnProperty as the env',
      ['--algo=sarsa', '--env=hasOwnProperty'],
      'train: env must be one of',
    ],
    [
      '__proto__ as the retained task',
      [...LM, '--retained=__proto__'],
      'train: retained must be one of',
    ],
    [
      'constructor as a setting flag',
      ['--algo=sarsa', '--constructor=1'],
      'unknown option(s): --constructor',
    ],
    ['an empty setting', ['--algo=sarsa', '--alpha='], '--alpha= has no value'],
  ])('refuses %s', (_what, argv, message) => {
    expect(() => readTrainFlags(argv)).toThrow(message);
  });

  it.each<[string, string, string]>([
    [
      'a reward weight without a reward model',
      '--reward-model-weight=0.5',
      'grpo: rewardModelWeight must be 0 in a run without a reward model',
    ],
    [
      'ptx without a retained task',
      '--ptx-coef=1',
      'grpo: ptxCoef needs a retained task in the run',
    ],
  ])('refuses %s before the warm-up', (_what, bad, message) => {
    expect(() => readTrainFlags([...LM, bad])).toThrow(message);
  });

  it('reads a run the lab can import: the seed, updates and warm-up within its ranges', () => {
    const flags = readTrainFlags([
      ...LM,
      '--seed=0',
      '--updates=7',
      '--sft-steps=0',
      '--backend=cpu',
    ]);
    expect([flags.seed, flags.updates]).toEqual([0, 7]);
    expect(flags.run.family === 'lm' && [flags.run.sftSteps, flags.run.backend]).toEqual([
      0,
      'cpu',
    ]);
  });

  it('reads --positions: learned unless given, rotary when asked', () => {
    const positions = (...argv: string[]) => {
      const flags = readTrainFlags([...LM, ...argv]);
      return flags.run.family === 'lm' ? flags.run.positions : undefined;
    };
    expect(positions()).toBe('learned');
    expect(positions('--positions=learned')).toBe('learned');
    expect(positions('--positions=rotary')).toBe('rotary');
    // A head size of 2 (width 16, 8 heads) is the smallest rotary can rotate in pairs.
    expect(positions('--positions=rotary', '--width=16', '--heads=8')).toBe('rotary');
  });

  it.each<[string, string[], string]>([
    [
      'an unknown kind',
      ['--positions=alibi'],
      "--positions must be one of learned, rotary, got 'alibi'",
    ],
    ['a bare flag', ['--positions'], '--positions needs a value: --positions=<value>'],
    [
      'another case',
      ['--positions=Rotary'],
      "--positions must be one of learned, rotary, got 'Rotary'",
    ],
    [
      'an odd head size for rotary',
      ['--positions=rotary', '--width=24', '--heads=8'],
      'train: positions rotary needs an even head size (--width / --heads), got 24 / 8',
    ],
    [
      'positions beside --init',
      ['--positions=rotary', '--init=public/models/copy.onnx'],
      'train: positions is for a new model; --init=public/models/copy.onnx keeps the positions of its own model',
    ],
  ])('refuses --positions with %s, naming the flag and its values', (_what, argv, message) => {
    expect(() => readTrainFlags([...LM, ...argv])).toThrow(message);
  });

  // Flag names the parser knows, and values chosen to break it: prototype names, empty and bare
  // values, negative, fractional, huge and non-finite numbers, and ordinary ones.
  const names = [
    'algo',
    'task',
    'env',
    'seed',
    'updates',
    'log-every',
    'sft-steps',
    'backend',
    'reference',
    'width',
    'heads',
    'layers',
    'positions',
    'lr',
    'group-size',
    'retained',
    'curriculum',
    'reward-model',
    'reward-model-steps',
    'save-every',
    'alpha',
    '__proto__',
    'constructor',
    'to-string',
    'has-own-property',
  ];
  const values = [
    '__proto__',
    'constructor',
    'toString',
    'hasOwnProperty',
    'valueOf',
    '',
    '-1',
    '-0',
    '0',
    '0.5',
    '1',
    '2',
    '3',
    '16',
    '1e9',
    '1e400',
    '-1e400',
    'NaN',
    'Infinity',
    '0x10',
    ' ',
    'true',
    'false',
    'grpo',
    'sarsa',
    'q-learning',
    'copy',
    'cpu',
    'cliffwalking',
    'rotary',
  ];
  const flag = fc
    .tuple(fc.constantFrom(...names), fc.option(fc.constantFrom(...values)))
    .map(([name, value]) => (value === null ? `--${name}` : `--${name}=${value}`));

  it('never crashes on any mix of flags: a named refusal or a run the lab would accept', () => {
    let accepted = 0;
    fc.assert(
      fc.property(fc.array(flag, { maxLength: 6 }), (argv) => {
        let flags;
        try {
          flags = readTrainFlags(argv);
        } catch (error) {
          // A refusal names a flag or a field; a TypeError or RangeError would be a crash.
          expect(error instanceof FlagError || error instanceof OpInputError, String(error)).toBe(
            true,
          );
          return;
        }
        accepted += 1;
        expect(Number.isInteger(flags.seed) && flags.seed >= 0 && flags.seed <= MAX_SEED).toBe(
          true,
        );
        expect(Number.isInteger(flags.updates) && flags.updates >= 1).toBe(true);
        expect(flags.updates).toBeLessThanOrEqual(MAX_UPDATES);
        expect(Number.isInteger(flags.logEvery) && flags.logEvery >= 1).toBe(true);
        expect(flags.saveEvery > 0 && Number.isFinite(flags.saveEvery)).toBe(true);
        for (const value of Object.values(flags.config)) {
          if (typeof value === 'number') expect(Number.isFinite(value)).toBe(true);
        }
        if (flags.run.family === 'lm') {
          const { sftSteps } = flags.run;
          expect(Number.isInteger(sftSteps) && sftSteps >= SFT_STEPS.min).toBe(true);
          expect(sftSteps).toBeLessThanOrEqual(SFT_STEPS.max);
          expect(['auto', 'webgpu', 'cpu']).toContain(flags.run.backend);
          expect(['learned', 'rotary']).toContain(flags.run.positions);
        }
      }),
      { numRuns: 2000, seed: 29 },
    );
    // Enough mixes pass for the accepted side of the property to be tested too.
    expect(accepted).toBeGreaterThan(100);
    // How long a parse takes (it builds no model) is a row of the bench's input-guards suite.
  });
});
