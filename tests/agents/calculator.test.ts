import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  calculate,
  calculatorTool,
  evaluateCalc,
  formatFraction,
  MAX_CALC_DEPTH,
  roundHalfEven,
} from '../../src/agents/tools/calculator';
import {
  MAX_TOOL_ARGS_CHARS,
  MAX_TOOL_RESULT_CHARS,
  runTool,
  ToolError,
  type ToolErrorReason,
} from '../../src/agents/tools/tool';

/** The ToolError `run` throws, as reason/index/detail. */
const failure = (
  run: () => unknown,
): { reason: ToolErrorReason; index?: number; detail: string } => {
  try {
    run();
  } catch (error) {
    if (error instanceof ToolError) {
      return { reason: error.reason, index: error.index, detail: error.detail };
    }
    throw error;
  }
  throw new Error('expected a ToolError');
};

/** Every character of a tool text is in the default tokenizer alphabet (newline + ASCII, no capitals). */
const inAlphabet = (text: string): boolean => /^[\n\x20-\x40\x5b-\x7e]*$/.test(text);

describe('calc: golden values (worked by hand)', () => {
  it.each([
    ['12*34', '408'], // 12·34 = 360 + 48
    ['7', '7'],
    ['0', '0'],
    ['-0', '0'], // no negative zero
    ['2+3*4', '14'], // * binds tighter: 2 + 12
    ['2*3+4', '10'],
    ['(2+3)*4', '20'],
    ['8-3-2', '3'], // left-associative: (8 − 3) − 2
    ['8-(3-2)', '7'],
    ['8/4/2', '1'], // (8 / 4) / 2
    ['8/(4/2)', '4'],
    ['-3+5', '2'], // unary minus
    ['2*-3', '-6'],
    ['2--3', '5'], // 2 − (−3)
    ['--4', '4'],
    ['-(4-9)', '5'],
    ['-2*-2', '4'],
    [' ( 1 + 2 ) * 3 ', '9'], // spaces skipped
    ['1\n+\t2', '3'], // other whitespace too
    ['007', '7'], // leading zeros are allowed
    ['0.1+0.2', '0.3'], // 1/10 + 2/10 = 3/10, exact (no binary floating point)
    ['1/3', '0.333333'], // 0.3333333…: 7th digit 3 → down
    ['2/3', '0.666667'], // 0.6666666…: 7th digit 6 → up
    ['-1/3', '-0.333333'],
    ['1/7', '0.142857'], // 0.1428571…: 7th digit 1 → down
    ['-7/2', '-3.5'],
    ['1/8', '0.125'], // 1/2³ ends after 3 places: exact
    ['10/4', '2.5'],
    ['3.25*4', '13'], // 325/100 · 4 = 13
    ['1.50', '1.5'], // trailing zeros stripped
    ['0.5*0.5', '0.25'],
    ['7/7', '1'],
    ['1/100000000000000000', '0.00000000000000001'], // 10⁻¹⁷: ends within 18 places, exact
    ['1/100000000000000000/10', '0.000000000000000001'], // 10⁻¹⁸: still exact
    ['1/100000000000000000/100', '0'], // 10⁻¹⁹: 19 places → rounded to 6 → 0
    ['-1/100000000000000000/100', '0'], // rounds to 0, printed without a sign
    ['1/1048576', '0.000001'], // 2⁻²⁰ = 0.00000095367…: 20 places → rounded: 0.000000|95… → up
    ['123456789*987654321', '121932631112635269'], // exact past 2^53
    ['999999999999999999', '999999999999999999'], // 18 digits: the most a number may have
    // (10¹⁸ − 1)² = 10³⁶ − 2·10¹⁸ + 1
    ['999999999999999999*999999999999999999', '999999999999999998000000000000000001'],
    // 2³² four times = 2¹²⁸, the largest magnitude allowed
    ['4294967296*4294967296*4294967296*4294967296', '340282366920938463463374607431768211456'],
    ['-4294967296*4294967296*4294967296*4294967296', '-340282366920938463463374607431768211456'],
    // 1/2¹²⁸: the largest denominator allowed; 128 places → rounded to 0
    ['1/4294967296/4294967296/4294967296/4294967296', '0'],
    [`${'('.repeat(MAX_CALC_DEPTH)}1${')'.repeat(MAX_CALC_DEPTH)}`, '1'], // 16 deep: allowed
    [`1${'+1'.repeat(31)} `, '32'], // exactly 64 characters
  ])('%j → %s', (expression, expected) => {
    expect(calculate(expression)).toBe(expected);
    expect(calculatorTool.run(expression)).toBe(expected);
  });

  it('keeps values exact while evaluating', () => {
    // 1/3 · 3 = 1 exactly (a float would give 0.9999…): a rounded 1/3 is never carried forward.
    expect(evaluateCalc('1/3*3')).toEqual({ num: 1n, den: 1n });
    expect(evaluateCalc('0.1+0.2')).toEqual({ num: 3n, den: 10n });
    expect(evaluateCalc('-6/4')).toEqual({ num: -3n, den: 2n }); // lowest terms, den > 0
    expect(evaluateCalc('6/-4')).toEqual({ num: -3n, den: 2n });
  });
});

describe('calc: rounding', () => {
  it.each([
    [5n, 2n, 0, '2'], // 2.5 → tie → even 2
    [7n, 2n, 0, '4'], // 3.5 → tie → even 4
    [-5n, 2n, 0, '-2'],
    [1n, 8n, 2, '0.12'], // 0.125 → tie → even 0.12
    [3n, 8n, 2, '0.38'], // 0.375 → tie → even 0.38
    [1n, 3n, 2, '0.33'],
    [2n, 3n, 2, '0.67'],
    [1n, 20n, 1, '0'], // 0.05 → tie → even 0.0 → "0"
    [-1n, 20n, 1, '0'], // never "-0"
    [3n, 20n, 1, '0.2'], // 0.15 → tie → even 0.2
    [5n, 4n, 6, '1.25'], // trailing zeros stripped
  ])('%i/%i to %i places → %s', (num, den, places, expected) => {
    expect(roundHalfEven({ num, den }, places)).toBe(expected);
  });

  it('formatFraction: exact when the expansion ends within 18 places, else 6 places', () => {
    expect(formatFraction({ num: 3n, den: 4n })).toBe('0.75');
    expect(formatFraction({ num: 6n, den: 8n })).toBe('0.75'); // reduced first
    expect(formatFraction({ num: 1n, den: 6n })).toBe('0.166667'); // 0.1666666…
    expect(formatFraction({ num: 1n, den: 5n ** 18n })).toBe(
      '0.000000000000262144', // 1/5¹⁸ = 2¹⁸/10¹⁸ = 262144·10⁻¹⁸: 18 places, exact
    );
    expect(formatFraction({ num: 1n, den: 5n ** 19n })).toBe('0'); // 19 places → rounded
  });
});

describe('calc: errors name the reason and the index', () => {
  it.each<[string, ToolErrorReason, number | undefined]>([
    ['', 'bad-arguments', 0], // empty
    ['   ', 'bad-arguments', 3], // only spaces: the end is at 3
    ['1+', 'bad-arguments', 2], // a number expected at the end
    ['1+*2', 'bad-arguments', 2],
    ['+5', 'bad-arguments', 0], // no unary plus
    ['.5', 'bad-arguments', 0], // write 0.5
    ['1+.5', 'bad-arguments', 2],
    ['5.', 'bad-arguments', 2], // a digit must follow '.'
    ['5.+1', 'bad-arguments', 2],
    ['1.2.3', 'bad-arguments', 3], // the second '.'
    ['(1+2', 'bad-arguments', 0], // the unclosed '('
    ['1+2)', 'bad-arguments', 3], // the unmatched ')'
    ['(1+2]', 'bad-arguments', 4],
    ['2x3', 'bad-arguments', 1], // no 'x' for ×
    ['2^3', 'bad-arguments', 1],
    ['1 2', 'bad-arguments', 2],
    ['()', 'bad-arguments', 1],
    ['é', 'bad-arguments', 0],
    ['12*34=', 'bad-arguments', 5],
    ['1/0', 'division-by-zero', 1], // the '/'
    ['0/0', 'division-by-zero', 1],
    ['1/(2-2)', 'division-by-zero', 1],
    ['1/0.000', 'division-by-zero', 1],
    ['2*3/(1-1)+4', 'division-by-zero', 3],
    [`${'('.repeat(MAX_CALC_DEPTH + 1)}1${')'.repeat(MAX_CALC_DEPTH + 1)}`, 'too-deep', 16], // the 17th '('
    [`1${'+1'.repeat(31)}  `, 'too-long', MAX_TOOL_ARGS_CHARS], // 65 characters
    ['1234567890123456789', 'out-of-range', 0], // 19 digits
    ['1+0.000000000000000001', 'out-of-range', 2], // 19 digits counting the 0 before '.'
    // (10¹⁸ − 1)²·999 ≈ 10³⁹ > 2¹²⁸ ≈ 3.4·10³⁸: fails at the second '*' (index 37)
    ['999999999999999999*999999999999999999*999', 'out-of-range', 37],
    ['4294967296*4294967296*4294967296*4294967296*2', 'out-of-range', 43], // 2¹²⁹
    ['1/4294967296/4294967296/4294967296/4294967296/2', 'out-of-range', 45], // den 2¹²⁹
    // (2³² − 1)⁴ / 2¹⁸: in range, but 34 digits + "." + 18 places = 53 characters > 48
    ['4294967295*4294967295*4294967295*4294967295/262144', 'out-of-range', undefined],
  ])('%j → %s at %s', (expression, reason, index) => {
    const error = failure(() => calculate(expression));
    expect(error.reason).toBe(reason);
    expect(error.index).toBe(index);
    if (index !== undefined) expect(error.detail).toMatch(new RegExp(` at ${index}$`));
    expect(inAlphabet(error.detail)).toBe(true);
    expect(`error: ${error.detail}`.length).toBeLessThanOrEqual(MAX_TOOL_RESULT_CHARS);
  });

  it('describes characters outside the alphabet by code, never raw', () => {
    expect(failure(() => calculate('1+É')).detail).toBe('expected a number, got u+00c9 at 2');
    expect(failure(() => calculate('1X')).detail).toBe('expected an operator, got u+0058 at 1');
    expect(failure(() => calculate('1"')).detail).toBe('expected an operator, got u+0022 at 1');
    expect(failure(() => calculate('1$')).detail).toBe('expected an operator, got "$" at 1');
  });

  it('refuses text that is not a string', () => {
    expect(failure(() => calculate(42 as unknown as string)).reason).toBe('bad-arguments');
  });
});

// ---------------------------------------------------------------------------------------------
// Properties against a tiny independent evaluator.

type Tree =
  | { k: 'n'; v: bigint }
  | { k: 'neg'; e: Tree }
  | { k: 'b'; op: '+' | '-' | '*' | '/'; l: Tree; r: Tree };

const LIMIT = 1n << 128n;
class Refused extends Error {
  constructor(readonly reason: 'division-by-zero' | 'out-of-range') {
    super(reason);
  }
}
const gcd = (a: bigint, b: bigint): bigint => (b === 0n ? (a < 0n ? -a : a) : gcd(b, a % b));
/** [num, den] in lowest terms, den > 0. */
const frac = (n: bigint, d: bigint): [bigint, bigint] => {
  const g = gcd(n, d) * (d < 0n ? -1n : 1n);
  return [n / g, d / g];
};
/** Value of `t`, left before right; throws Refused like the calculator must. */
function value(t: Tree): [bigint, bigint] {
  if (t.k === 'n') return [t.v, 1n];
  if (t.k === 'neg') {
    const [n, d] = value(t.e);
    return [-n, d];
  }
  const [a, b] = value(t.l);
  const [c, d] = value(t.r);
  let out: [bigint, bigint];
  if (t.op === '+') out = frac(a * d + c * b, b * d);
  else if (t.op === '-') out = frac(a * d - c * b, b * d);
  else if (t.op === '*') out = frac(a * c, b * d);
  else if (c === 0n) throw new Refused('division-by-zero');
  else out = frac(a * d, b * c);
  if ((out[0] < 0n ? -out[0] : out[0]) > LIMIT || out[1] > LIMIT) throw new Refused('out-of-range');
  return out;
}
const prec = (op: string): number => (op === '+' || op === '-' ? 1 : 2);
/** Prints `t`; `full` parenthesizes every binary operand, else only where the tree needs it. */
function print(t: Tree, full: boolean): string {
  if (t.k === 'n') return t.v.toString();
  if (t.k === 'neg') return `-${t.e.k === 'b' ? `(${print(t.e, full)})` : print(t.e, full)}`;
  const side = (child: Tree, right: boolean): string => {
    const s = print(child, full);
    if (child.k !== 'b') return s;
    const wrap = full || prec(child.op) < prec(t.op) || (right && prec(child.op) === prec(t.op));
    return wrap ? `(${s})` : s;
  };
  return `${side(t.l, false)}${t.op}${side(t.r, true)}`;
}
/** The decimal text `s` ("-12.5") as a fraction. */
const parseDecimal = (s: string): [bigint, bigint] => {
  const negative = s.startsWith('-');
  const [whole, part = ''] = (negative ? s.slice(1) : s).split('.');
  const n = BigInt(whole! + part) * (negative ? -1n : 1n);
  return frac(n, 10n ** BigInt(part.length));
};

const treeArbitrary = (ops: readonly ('+' | '-' | '*' | '/')[]) =>
  fc.letrec<{ node: Tree; leaf: Tree; neg: Tree; bin: Tree }>((tie) => ({
    node: fc.oneof(
      { maxDepth: 5, depthSize: 'small' },
      { arbitrary: tie('leaf'), weight: 2 },
      { arbitrary: tie('neg'), weight: 1 },
      { arbitrary: tie('bin'), weight: 3 },
    ),
    leaf: fc
      .oneof(fc.bigInt(0n, 12n), fc.bigInt(0n, 999_999n), fc.bigInt(0n, 10n ** 18n - 1n))
      .map((v): Tree => ({ k: 'n', v })),
    neg: tie('node').map((e): Tree => ({ k: 'neg', e })),
    bin: fc
      .record({ op: fc.constantFrom(...ops), l: tie('node'), r: tie('node') })
      .map((b): Tree => ({ k: 'b', ...b })),
  })).node;

describe('calc: agrees with an independent evaluator', () => {
  it('integer expressions (+ − × and unary minus) give the exact BigInt value', () => {
    const seen = { value: 0, 'out-of-range': 0 };
    fc.assert(
      fc.property(treeArbitrary(['+', '-', '*']), fc.boolean(), (tree, full) => {
        const text = print(tree, full);
        fc.pre(text.length <= MAX_TOOL_ARGS_CHARS);
        let expected: string;
        try {
          expected = value(tree)[0].toString();
        } catch (error) {
          if (!(error instanceof Refused)) throw error;
          expect(failure(() => calculate(text)).reason).toBe(error.reason);
          seen['out-of-range']++;
          return;
        }
        expect(calculate(text)).toBe(expected);
        seen.value++;
      }),
      { numRuns: 2000 },
    );
    // Every branch is reached (about 15 of 2000 runs overflow; the products test below has more).
    expect(seen.value).toBeGreaterThan(1000);
    expect(seen['out-of-range']).toBeGreaterThan(0);
  });

  it('with division: exact when the value ends within 18 places, else within half a millionth', () => {
    const seen = { exact: 0, rounded: 0, 'division-by-zero': 0, 'out-of-range': 0 };
    fc.assert(
      fc.property(treeArbitrary(['+', '-', '*', '/']), fc.boolean(), (tree, full) => {
        const text = print(tree, full);
        fc.pre(text.length <= MAX_TOOL_ARGS_CHARS);
        let num: bigint, den: bigint;
        try {
          [num, den] = value(tree);
        } catch (error) {
          if (!(error instanceof Refused)) throw error;
          expect(failure(() => calculate(text)).reason).toBe(error.reason);
          seen[error.reason]++;
          return;
        }
        let rest = den;
        let places = 0;
        for (const p of [2n, 5n]) {
          let count = 0;
          while (rest % p === 0n) {
            rest /= p;
            count++;
          }
          places = Math.max(places, count);
        }
        const exact = rest === 1n && places <= 18;
        let result: string;
        try {
          result = calculate(text);
        } catch (error) {
          // Only an exact decimal too long to show may fail here.
          expect(error).toBeInstanceOf(ToolError);
          expect((error as ToolError).reason).toBe('out-of-range');
          expect(exact).toBe(true);
          const digits = ((num < 0n ? -num : num) * 10n ** BigInt(places)) / den;
          expect(digits.toString().length + 2).toBeGreaterThan(MAX_TOOL_RESULT_CHARS);
          return;
        }
        expect(result).toMatch(/^-?\d+(\.\d*[1-9])?$/);
        const [rn, rd] = parseDecimal(result);
        seen[exact ? 'exact' : 'rounded']++;
        if (exact) {
          expect([rn, rd]).toEqual([num, den]);
        } else {
          expect((result.split('.')[1] ?? '').length).toBeLessThanOrEqual(6);
          // |result − value| ≤ ½·10⁻⁶  ⇔  2·10⁶·|rn·den − num·rd| ≤ rd·den
          const diff = rn * den - num * rd;
          expect(2n * 1_000_000n * (diff < 0n ? -diff : diff) <= rd * den).toBe(true);
        }
      }),
      { numRuns: 2000 },
    );
    // Every branch is reached (typical counts: 1600 exact, 350 rounded, 30 ÷0, 12 overflow).
    for (const count of Object.values(seen)) expect(count).toBeGreaterThan(0);
    expect(seen.rounded).toBeGreaterThan(100);
  });
});

describe('calc: products of large factors', () => {
  it('are exact up to 2^128 and fail out-of-range at the first "*" past it', () => {
    const factors = fc.array(fc.bigInt(1n, 10n ** 18n - 1n), { minLength: 2, maxLength: 3 });
    fc.assert(
      fc.property(factors, fc.boolean(), (list, negative) => {
        let text = (negative ? '-' : '') + list[0]!.toString();
        let product = negative ? -list[0]! : list[0]!;
        let overflowAt = -1; // index of the first '*' whose product passes 2^128
        for (const f of list.slice(1)) {
          if (overflowAt < 0) {
            product *= f;
            if ((product < 0n ? -product : product) > LIMIT) overflowAt = text.length;
          }
          text += `*${f}`;
        }
        if (overflowAt < 0) {
          expect(calculate(text)).toBe(product.toString());
        } else {
          const error = failure(() => calculate(text));
          expect(error).toMatchObject({ reason: 'out-of-range', index: overflowAt });
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('calc: fuzz', () => {
  const calcChars = '0123456789+-*/(). '.split('');
  const inputs = fc.oneof(
    fc.string({ unit: fc.constantFrom(...calcChars), maxLength: 80 }),
    fc.string({ unit: fc.constantFrom(...calcChars, 'x', 'e', '^', '\n', 'É'), maxLength: 40 }),
    fc.string({ unit: 'binary', maxLength: 70 }),
    fc.string({ unit: 'grapheme', maxLength: 30 }),
  );

  // No wall-clock assertions (timings belong in the bench): a hang would fail by the test timeout.
  it('only a ToolError escapes and results stay in the alphabet', () => {
    fc.assert(
      fc.property(inputs, (text) => {
        try {
          const result = calculatorTool.run(text);
          expect(result).toMatch(/^-?\d+(\.\d+)?$/);
        } catch (error) {
          expect(error).toBeInstanceOf(ToolError);
          expect(inAlphabet((error as ToolError).detail)).toBe(true);
        }
        const outcome = runTool(new Map([['calc', calculatorTool]]), 'calc', text);
        expect(inAlphabet(outcome.text)).toBe(true);
        expect(outcome.text.length).toBeLessThanOrEqual(MAX_TOOL_RESULT_CHARS);
      }),
      { numRuns: 6000 },
    );
  });

  it('worst cases the limits allow end in a result or a typed error', () => {
    const worst = [
      '-'.repeat(63) + '1',
      '('.repeat(64),
      `${'('.repeat(16)}${'999999999999999999*'.repeat(2)}9${')'.repeat(16)}`.slice(0, 64),
      '999999999999999999/999999999999999997/999999999999999989/7',
      '1/3+1/7+1/11+1/13+1/17+1/19+1/23+1/29+1/31+1/37+1/41+1/43+1/47',
    ];
    for (const text of worst) {
      const outcome = runTool(new Map([['calc', calculatorTool]]), 'calc', text);
      expect(outcome.ok || outcome.reason !== undefined).toBe(true);
    }
  });
});
