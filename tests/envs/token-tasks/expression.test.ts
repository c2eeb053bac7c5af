import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  evaluateExpression,
  ExpressionError,
  expressionNumbers,
  formatExpression,
  makeRational,
  MAX_EXPRESSION_DEPTH,
  MAX_EXPRESSION_LENGTH,
  parseExpression,
  type Expr,
  type ExpressionErrorReason,
  type Operator,
} from '../../../src/envs/token-tasks/expression';

/** The value of `text` as "num/den" (lowest terms). */
const valueOf = (text: string): string => {
  const { num, den } = evaluateExpression(parseExpression(text));
  return `${num}/${den}`;
};

/** The reason and index of the ExpressionError `run` throws. */
const failure = (run: () => unknown): { reason: ExpressionErrorReason; index: number } => {
  try {
    run();
  } catch (error) {
    if (error instanceof ExpressionError) return { reason: error.reason, index: error.index };
    throw error;
  }
  throw new Error('expected an ExpressionError');
};

const num = (n: number): Expr => ({ kind: 'number', value: BigInt(n), index: 0 });
const bin = (op: Operator, left: Expr, right: Expr): Expr => ({
  kind: 'binary',
  op,
  left,
  right,
  index: 0,
});

describe('parseExpression + evaluateExpression', () => {
  it.each([
    ['7', '7/1'],
    ['0', '0/1'],
    ['2+3*4', '14/1'], // × binds tighter: 2 + 12
    ['2*3+4', '10/1'],
    ['(2+3)*4', '20/1'],
    ['8-3-2', '3/1'], // left-associative: (8 − 3) − 2
    ['8-(3-2)', '7/1'],
    ['8/4/2', '1/1'], // (8 / 4) / 2
    ['8/(4/2)', '4/1'],
    ['1/3+1/6', '1/2'], // 2/6 + 1/6 = 3/6, exact
    ['3-5', '-2/1'],
    ['7/2*4', '14/1'], // a fraction on the way is fine
    ['2/4', '1/2'],
    [' ( 3 * 7 ) + 5 ', '26/1'], // spaces between tokens are skipped
    ['((((5))))', '5/1'],
    ['99999999999*99999999999', '9999999999800000000001/1'], // BigInt: exact past 2^53
  ])('%s = %s', (text, value) => {
    expect(valueOf(text)).toBe(value);
  });

  it('builds the tree precedence and associativity say', () => {
    // 1 + 2·3 − 4 reads as ((1 + (2·3)) − 4); `index` is where each token starts.
    expect(parseExpression('1+2*3-4')).toEqual({
      kind: 'binary',
      op: '-',
      index: 5,
      left: {
        kind: 'binary',
        op: '+',
        index: 1,
        left: { kind: 'number', value: 1n, index: 0 },
        right: {
          kind: 'binary',
          op: '*',
          index: 3,
          left: { kind: 'number', value: 2n, index: 2 },
          right: { kind: 'number', value: 3n, index: 4 },
        },
      },
      right: { kind: 'number', value: 4n, index: 6 },
    });
  });

  it.each<[string, ExpressionErrorReason, number]>([
    ['', 'unexpected-end', 0],
    ['   ', 'unexpected-end', 3],
    ['3+', 'unexpected-end', 2],
    ['(3+4', 'unexpected-end', 4],
    ['3 4', 'unexpected-token', 2],
    ['3)', 'unexpected-token', 1],
    ['-3', 'unexpected-token', 0], // no unary minus
    ['3+*4', 'unexpected-token', 2],
    ['()', 'unexpected-token', 1],
    ['(3+4]', 'unexpected-character', 4],
    ['3a', 'unexpected-character', 1],
    ['3x4', 'unexpected-character', 1],
    ['3=3', 'unexpected-character', 1],
    ['3.5', 'unexpected-character', 1],
    ['3\n+4', 'unexpected-character', 1],
    ['03+4', 'leading-zero', 0],
    ['4+00', 'leading-zero', 2],
  ])('%j fails: %s at %i', (text, reason, index) => {
    expect(failure(() => parseExpression(text))).toEqual({ reason, index });
  });

  it('reports division by zero at its "/", without throwing anything else', () => {
    expect(failure(() => valueOf('7/0'))).toEqual({ reason: 'division-by-zero', index: 1 });
    expect(failure(() => valueOf('1+2/(3-3)'))).toEqual({ reason: 'division-by-zero', index: 3 });
    expect(failure(() => valueOf('0/0'))).toEqual({ reason: 'division-by-zero', index: 1 });
    expect(valueOf('0/5')).toBe('0/1');
  });

  it('bounds the work: refuses long texts before parsing and deep nesting', () => {
    const huge = '1+'.repeat(100_000) + '1';
    expect(failure(() => parseExpression(huge))).toEqual({
      reason: 'too-long',
      index: MAX_EXPRESSION_LENGTH,
    });
    // Refused on its length alone, before a character is parsed: a text that parsing would refuse
    // at its first character is still reported as too long, from one character past the limit.
    const badFromTheStart = ')' + '1'.repeat(MAX_EXPRESSION_LENGTH);
    expect(failure(() => parseExpression(badFromTheStart.slice(0, -1)))).toEqual({
      reason: 'unexpected-token',
      index: 0,
    });
    expect(failure(() => parseExpression(badFromTheStart))).toEqual({
      reason: 'too-long',
      index: MAX_EXPRESSION_LENGTH,
    });
    // "1+1+…+1" of 255 characters (≤ 256) still parses: a long left-leaning chain is fine.
    expect(valueOf('1' + '+1'.repeat(127))).toBe('128/1');
    const nest = (d: number) => '('.repeat(d) + '1' + ')'.repeat(d);
    expect(valueOf(nest(MAX_EXPRESSION_DEPTH))).toBe('1/1');
    expect(failure(() => parseExpression(nest(MAX_EXPRESSION_DEPTH + 1)))).toEqual({
      reason: 'too-deep',
      index: MAX_EXPRESSION_DEPTH,
    });
  });

  it('fuzz: any short string parses or fails with an ExpressionError, never anything else', () => {
    const chars = [...'0123456789+-*/() ', ...'0123456789+-*/()', 'x', '=', '.', '\n', 'é', '<'];
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: fc.constantFrom(...chars), maxLength: 40 }),
          fc.string({ maxLength: 300 }),
        ),
        (text) => {
          let expr: Expr;
          try {
            expr = parseExpression(text);
          } catch (error) {
            expect(error).toBeInstanceOf(ExpressionError);
            return;
          }
          try {
            const { den } = evaluateExpression(expr);
            expect(den > 0n).toBe(true);
          } catch (error) {
            expect(error).toBeInstanceOf(ExpressionError);
            expect((error as ExpressionError).reason).toBe('division-by-zero');
          }
        },
      ),
      { numRuns: 5000 },
    );
  });
});

describe('makeRational', () => {
  it('reduces to lowest terms with a positive denominator', () => {
    expect(makeRational(6n, -4n)).toEqual({ num: -3n, den: 2n });
    expect(makeRational(0n, -7n)).toEqual({ num: 0n, den: 1n });
    expect(() => makeRational(1n, 0n)).toThrow(RangeError);
  });
});

describe('formatExpression', () => {
  it.each(
    (
      [
        [bin('+', bin('*', num(3), num(7)), num(5)), '3*7+5'],
        [bin('*', bin('+', num(1), num(2)), bin('+', num(3), num(4))), '(1+2)*(3+4)'],
        [bin('-', num(5), bin('+', num(3), num(7))), '5-(3+7)'], // right of − at the same level
        [bin('-', bin('-', num(5), num(3)), num(7)), '5-3-7'],
        [bin('/', num(8), bin('*', num(4), num(2))), '8/(4*2)'], // right of ÷ at the same level
        [bin('*', num(2), bin('/', num(3), num(4))), '2*3/4'], // 2·(3/4) = (2·3)/4 exactly
        [bin('+', num(1), bin('-', num(2), num(3))), '1+2-3'],
        [bin('/', bin('-', num(9), num(1)), num(2)), '(9-1)/2'],
      ] as [Expr, string][]
    ).map(([expr, text]) => ({ expr, text })),
  )('prints $text', ({ expr, text }) => {
    expect(formatExpression(expr)).toBe(text);
  });

  // Random trees of ≤ 8 leaves in 0…9, so a plain-number oracle stays exact (|values| < 2^53).
  const tree: fc.Arbitrary<Expr> = fc
    .letrec<{ e: Expr }>((t) => ({
      e: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        fc.nat(9).map(num),
        fc
          .tuple(fc.constantFrom<Operator>('+', '-', '*', '/'), t('e'), t('e'))
          .map(([op, l, r]) => bin(op, l, r)),
      ),
    }))
    .e.filter((e) => expressionNumbers(e).length <= 8);

  /** Oracle: num/den as plain numbers, unreduced; undefined on division by zero. */
  const oracle = (e: Expr): [number, number] | undefined => {
    if (e.kind === 'number') return [Number(e.value), 1];
    const a = oracle(e.left);
    const b = oracle(e.right);
    if (!a || !b) return undefined;
    const [p, q] = a;
    const [r, s] = b;
    if (e.op === '+') return [p * s + r * q, q * s];
    if (e.op === '-') return [p * s - r * q, q * s];
    if (e.op === '*') return [p * r, q * s];
    return r === 0 ? undefined : [p * s, q * r];
  };

  /** Every inner node in parentheses: the text spells the tree out. */
  const full = (e: Expr): string =>
    e.kind === 'number' ? String(e.value) : `(${full(e.left)}${e.op}${full(e.right)})`;

  it('property: printed with fewest or all parentheses, the text parses back to its value', () => {
    fc.assert(
      fc.property(tree, (e) => {
        const expected = oracle(e);
        for (const text of [formatExpression(e), full(e)]) {
          const parsed = parseExpression(text);
          expect(expressionNumbers(parsed)).toEqual(expressionNumbers(e));
          if (expected === undefined) {
            expect(failure(() => evaluateExpression(parsed)).reason).toBe('division-by-zero');
          } else {
            const { num: n, den: d } = evaluateExpression(parsed);
            // n/d = p/q  ⇔  n·q = p·d
            expect(n * BigInt(expected[1])).toBe(BigInt(expected[0]) * d);
          }
        }
        // Fully parenthesized text gives back the very tree (up to token positions).
        expect(formatExpression(parseExpression(full(e)))).toBe(formatExpression(e));
      }),
      { numRuns: 1000 },
    );
  });
});
