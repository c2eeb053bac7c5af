/** The CLIs' flag parser: bare and empty values, switches, ranges, choices, prototype names. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CliArgs, FlagError } from '../../src/cli/args';

describe('CliArgs', () => {
  it('reads values, switches and the defaults of flags left out', () => {
    const args = new CliArgs(['--updates=5', '--verify', '--name=a=b', '--off=false']);
    expect(args.int('updates', 1, { min: 1, max: 10 })).toBe(5);
    expect(args.flag('verify')).toBe(true);
    expect(args.flag('off')).toBe(false);
    expect(args.flag('absent')).toBe(false);
    expect(args.string('name', '')).toBe('a=b');
    expect(args.real('lr', 0.5, { min: 0, max: 1 })).toBe(0.5);
    args.checkAllUsed();
  });

  it.each<[string, string[], (a: CliArgs) => unknown, string]>([
    [
      'an empty value',
      ['--out='],
      () => 0,
      '--out= has no value: give --out=<value> or leave it out',
    ],
    [
      'a bare value flag',
      ['--out'],
      (a) => a.optional('out'),
      '--out needs a value: --out=<value>',
    ],
    [
      'a switch given a word it does not know',
      ['--verify=yes'],
      (a) => a.flag('verify'),
      "--verify is a switch (--verify or --verify=false), got 'yes'",
    ],
    [
      'a negative count',
      ['--updates=-5'],
      (a) => a.int('updates', 1, { min: 1, max: 100 }),
      "--updates must be an integer in [1, 100], got '-5'",
    ],
    [
      'a fractional count',
      ['--updates=2.5'],
      (a) => a.int('updates', 1, { min: 1, max: 100 }),
      "--updates must be an integer in [1, 100], got '2.5'",
    ],
    [
      'a number too large to be finite',
      ['--lr=1e400'],
      (a) => a.real('lr', 1, { min: 0, max: 1, minOpen: true }),
      "--lr must be a number in (0, 1], got '1e400'",
    ],
    [
      'a word for a number',
      ['--seed=abc'],
      (a) => a.int('seed', 1, { min: 0, max: 10 }),
      "--seed must be an integer in [0, 10] in decimal notation (digits, an optional . and e-exponent: 3, 0.001, 1e-3), got 'abc'",
    ],
    [
      'a prototype name as a choice',
      ['--backend=__proto__'],
      (a) => a.choice('backend', ['auto', 'cpu'], 'auto'),
      "--backend must be one of auto, cpu, got '__proto__'",
    ],
    [
      'a flag nobody reads',
      ['--constructor=1'],
      (a) => a.checkAllUsed(),
      'unknown option(s): --constructor',
    ],
    ['a flag with a prototype name', ['--__proto__=1'], () => 0, 'unexpected argument'],
  ])('refuses %s, naming the flag', (_what, argv, read, message) => {
    const run = () => read(new CliArgs(argv));
    expect(run).toThrow(FlagError);
    expect(run).toThrow(message);
  });

  it('on any argument text: a FlagError or values within their ranges, never another error', () => {
    const value = fc.oneof(
      fc.string({ maxLength: 8 }),
      fc.constantFrom('__proto__', 'constructor', '-1', '1.5', '1e400', 'NaN', '', ' 7 ', '0x1f'),
    );
    const arg = fc.oneof(
      fc.string({ maxLength: 12 }),
      fc
        .tuple(fc.constantFrom('n', 'x', 'out', '__proto__', 'to-string'), fc.option(value))
        .map(([name, v]) => (v === null ? `--${name}` : `--${name}=${v}`)),
    );
    fc.assert(
      fc.property(fc.array(arg, { maxLength: 5 }), (argv) => {
        try {
          const args = new CliArgs(argv);
          const n = args.int('n', 1, { min: 1, max: 100 });
          const x = args.real('x', 0.5, { min: 0, max: 1, minOpen: true });
          const out = args.optional('out');
          expect(Number.isInteger(n) && n >= 1 && n <= 100).toBe(true);
          expect(x > 0 && x <= 1).toBe(true);
          expect(out === undefined || out.length > 0).toBe(true);
        } catch (error) {
          expect(error, String(error)).toBeInstanceOf(FlagError);
        }
      }),
      { numRuns: 3000, seed: 29 },
    );
  });

  it('gives spec-generated options bare switches as "true"', () => {
    expect([...new CliArgs(['--use-tools', '--lr=0.1']).all()]).toEqual([
      ['use-tools', 'true'],
      ['lr', '0.1'],
    ]);
  });
});
