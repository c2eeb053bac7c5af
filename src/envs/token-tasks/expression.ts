/**
 * Arithmetic expressions for the countdown task: a small recursive-descent parser over whole
 * numbers, + − × ÷ (written + - * /) and parentheses, exact rational evaluation with BigInt, and
 * a printer that writes the fewest parentheses. Model output is untrusted text: it is parsed,
 * never evaluated as code, and every failure is an ExpressionError (never another exception).
 *
 * Grammar (spaces between tokens are skipped; × and ÷ bind tighter; all four are
 * left-associative; no unary minus — every number must be one the task gave):
 *
 *   expr   = term   { ("+" | "-") term }
 *   term   = factor { ("*" | "/") factor }
 *   factor = number | "(" expr ")"
 *   number = "0" | [1-9][0-9]*            (no leading zeros)
 */

export type Operator = '+' | '-' | '*' | '/';

export type Expr =
  | { kind: 'number'; value: bigint; /** index of its first character */ index: number }
  | { kind: 'binary'; op: Operator; left: Expr; right: Expr; /** index of `op` */ index: number };

/** An exact fraction num/den in lowest terms with den > 0 (so equal values compare equal). */
export interface Rational {
  num: bigint;
  den: bigint;
}

export type ExpressionErrorReason =
  | 'too-long'
  | 'unexpected-character'
  | 'unexpected-token'
  | 'unexpected-end'
  | 'leading-zero'
  | 'too-deep'
  | 'division-by-zero';

/** Why a text is not a valid expression (or has no value), and where. */
export class ExpressionError extends Error {
  override readonly name = 'ExpressionError';
  constructor(
    readonly reason: ExpressionErrorReason,
    /** Index in the text where the problem is. */
    readonly index: number,
    message: string,
  ) {
    super(`expression: ${message} (index ${index})`);
  }
}

/** Longer texts are refused before parsing: work stays bounded on any input. */
export const MAX_EXPRESSION_LENGTH = 256;
/** Deepest parenthesis nesting accepted (a countdown answer needs at most count − 2). */
export const MAX_EXPRESSION_DEPTH = 64;

const PRECEDENCE: Record<Operator, number> = { '+': 1, '-': 1, '*': 2, '/': 2 };

/** Parses `text` into an expression tree; throws ExpressionError on anything else. */
export function parseExpression(text: string): Expr {
  if (typeof text !== 'string') {
    throw new ExpressionError('unexpected-character', 0, `must be a string, got ${typeof text}`);
  }
  if (text.length > MAX_EXPRESSION_LENGTH) {
    throw new ExpressionError(
      'too-long',
      MAX_EXPRESSION_LENGTH,
      `longer than ${MAX_EXPRESSION_LENGTH} characters (${text.length})`,
    );
  }
  let pos = 0;
  let depth = 0;

  const skipSpaces = (): void => {
    while (text[pos] === ' ') pos++;
  };
  /** The next non-space character (undefined at the end), without consuming it. */
  const peek = (): string | undefined => {
    skipSpaces();
    return text[pos];
  };

  const parseSum = (): Expr => {
    let left = parseProduct();
    for (let c = peek(); c === '+' || c === '-'; c = peek()) {
      const index = pos++;
      left = { kind: 'binary', op: c, left, right: parseProduct(), index };
    }
    return left;
  };

  const parseProduct = (): Expr => {
    let left = parseFactor();
    for (let c = peek(); c === '*' || c === '/'; c = peek()) {
      const index = pos++;
      left = { kind: 'binary', op: c, left, right: parseFactor(), index };
    }
    return left;
  };

  const parseFactor = (): Expr => {
    const c = peek();
    if (c === '(') {
      const open = pos++;
      if (++depth > MAX_EXPRESSION_DEPTH) {
        throw new ExpressionError(
          'too-deep',
          open,
          `parentheses nest deeper than ${MAX_EXPRESSION_DEPTH}`,
        );
      }
      const inner = parseSum();
      if (peek() !== ')') {
        if (pos >= text.length) {
          throw new ExpressionError('unexpected-end', pos, `"(" at index ${open} is not closed`);
        }
        throw unexpected(text[pos]!, pos, '")"');
      }
      pos++;
      depth--;
      return inner;
    }
    if (c !== undefined && c >= '0' && c <= '9') {
      const start = pos;
      while (pos < text.length && text[pos]! >= '0' && text[pos]! <= '9') pos++;
      if (text[start] === '0' && pos - start > 1) {
        throw new ExpressionError(
          'leading-zero',
          start,
          `number "${text.slice(start, pos)}" has a leading zero`,
        );
      }
      return { kind: 'number', value: BigInt(text.slice(start, pos)), index: start };
    }
    if (c === undefined) {
      throw new ExpressionError('unexpected-end', pos, 'expected a number or "(", got the end');
    }
    throw unexpected(c, pos, 'a number or "("');
  };

  const tree = parseSum();
  const rest = peek();
  if (rest !== undefined) throw unexpected(rest, pos, 'an operator or the end');
  return tree;
}

/** A character the grammar knows in the wrong place, or one it does not know at all. */
function unexpected(c: string, index: number, expected: string): ExpressionError {
  const known = '0123456789+-*/() '.includes(c);
  return new ExpressionError(
    known ? 'unexpected-token' : 'unexpected-character',
    index,
    `expected ${expected}, got ${JSON.stringify(c)}`,
  );
}

/** The exact value of `expr`; division by zero is an ExpressionError naming the '/'. */
export function evaluateExpression(expr: Expr): Rational {
  if (expr.kind === 'number') return { num: expr.value, den: 1n };
  const a = evaluateExpression(expr.left);
  const b = evaluateExpression(expr.right);
  switch (expr.op) {
    case '+':
      return makeRational(a.num * b.den + b.num * a.den, a.den * b.den);
    case '-':
      return makeRational(a.num * b.den - b.num * a.den, a.den * b.den);
    case '*':
      return makeRational(a.num * b.num, a.den * b.den);
    case '/':
      if (b.num === 0n) {
        throw new ExpressionError('division-by-zero', expr.index, 'division by zero');
      }
      return makeRational(a.num * b.den, a.den * b.num);
  }
}

/** num/den in lowest terms with a positive denominator; den must not be 0. */
export function makeRational(num: bigint, den: bigint): Rational {
  if (den === 0n) throw new RangeError('makeRational: zero denominator');
  if (den < 0n) {
    num = -num;
    den = -den;
  }
  const g = gcd(num < 0n ? -num : num, den);
  return { num: num / g, den: den / g };
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a === 0n ? 1n : a;
}

/** The numbers of `expr` in reading order. */
export function expressionNumbers(expr: Expr): bigint[] {
  return expr.kind === 'number'
    ? [expr.value]
    : [...expressionNumbers(expr.left), ...expressionNumbers(expr.right)];
}

/**
 * `expr` as text with the fewest parentheses that keep its tree: a child is wrapped when it
 * binds looser than its parent, or when it is the right operand of '-' or '/' at the same
 * level (a−(b+c), a/(b*c)). Exact arithmetic makes a+(b−c) = a+b−c and a*(b/c) = a*b/c, so
 * those lose their parentheses: parsing the text back gives the same value, not always the
 * same tree.
 */
export function formatExpression(expr: Expr): string {
  if (expr.kind === 'number') return expr.value.toString();
  const p = PRECEDENCE[expr.op];
  const wrap = (child: Expr, right: boolean): string => {
    const text = formatExpression(child);
    if (child.kind === 'number') return text;
    const q = PRECEDENCE[child.op];
    const needs = q < p || (right && q === p && (expr.op === '-' || expr.op === '/'));
    return needs ? `(${text})` : text;
  };
  return `${wrap(expr.left, false)}${expr.op}${wrap(expr.right, true)}`;
}
