/**
 * calc(expr): exact arithmetic for the agent tasks. A hand-written recursive-descent parser and an
 * exact rational evaluator over BigInt; untrusted text is parsed, never evaluated as code, and
 * every failure is a ToolError with the index of the character at fault.
 *
 * Grammar (spaces, tabs and newlines between tokens are skipped; * and / bind tighter than + and -;
 * all four are left-associative; unary minus may stand before any operand: "2*-3", "-(4-9)"):
 *
 *   sum     = product { ("+" | "-") product }
 *   product = unary   { ("*" | "/") unary }
 *   unary   = { "-" } primary
 *   primary = number | "(" sum ")"
 *   number  = digit { digit } [ "." digit { digit } ]     ("0.5", not ".5" or "5."; "007" is 7)
 *
 * Limits, so that no input can make the work blow up: at most MAX_TOOL_ARGS_CHARS (64) characters,
 * parentheses nested at most 16 deep, at most 18 digits per number (integer and fraction digits
 * together), and every intermediate value, in lowest terms, must have |numerator| ≤ 2^128 and
 * denominator ≤ 2^128 (else out-of-range at the operator).
 *
 * Output: an integer prints exactly ("408", "-12"); a value whose decimal expansion ends within
 * 18 places prints exactly with no trailing zeros ("0.125", "-3.5", "0.3" for 0.1+0.2); any
 * other value is rounded half-to-even to 6 decimal places, trailing zeros stripped, with no mark
 * that it was rounded ("0.333333" for 1/3, "0.666667" for 2/3, "0" for 10^-19).
 * (A tie at the 7th place would need a value that ends within 7 places, which prints exactly, so
 * in practice the rounding never meets a tie; roundHalfEven handles one all the same.) A result
 * longer than MAX_TOOL_RESULT_CHARS is out-of-range rather than cut short.
 */
import {
  describeChar,
  MAX_TOOL_ARGS_CHARS,
  MAX_TOOL_RESULT_CHARS,
  ToolError,
  type Tool,
  type ToolErrorReason,
} from './tool';

/** Deepest parenthesis nesting accepted. */
export const MAX_CALC_DEPTH = 16;
/** Most digits in one number literal. */
export const MAX_CALC_DIGITS = 18;
/** Bound on |numerator| and denominator of every value during evaluation. */
export const MAX_CALC_MAGNITUDE = 1n << 128n;
/** Values whose decimal expansion ends within this many places print exactly. */
export const MAX_EXACT_DECIMALS = 18;
/** Places other values are rounded to. */
export const CALC_DECIMALS = 6;

/** An exact fraction in lowest terms with den > 0. */
export interface Fraction {
  num: bigint;
  den: bigint;
}

type BinaryOp = '+' | '-' | '*' | '/';

type CalcNode =
  | { kind: 'number'; value: Fraction; index: number }
  | { kind: 'negate'; operand: CalcNode; index: number }
  | { kind: 'binary'; op: BinaryOp; left: CalcNode; right: CalcNode; index: number };

const fail = (reason: ToolErrorReason, detail: string, index?: number): ToolError =>
  new ToolError(reason, 'calc', index === undefined ? detail : `${detail} at ${index}`, index);

const isDigit = (c: string | undefined): boolean => c !== undefined && c >= '0' && c <= '9';
const isSpace = (c: string | undefined): boolean =>
  c === ' ' || c === '\t' || c === '\n' || c === '\r';

/** Parses `text` into a tree; throws ToolError (bad-arguments, too-long, too-deep, out-of-range). */
function parseCalc(text: string): CalcNode {
  if (typeof text !== 'string') throw fail('bad-arguments', 'arguments must be text');
  if (text.length > MAX_TOOL_ARGS_CHARS) {
    throw fail(
      'too-long',
      `expression over ${MAX_TOOL_ARGS_CHARS} characters`,
      MAX_TOOL_ARGS_CHARS,
    );
  }
  let pos = 0;
  let depth = 0;
  const peek = (): string | undefined => {
    while (isSpace(text[pos])) pos++;
    return text[pos];
  };

  const parseSum = (): CalcNode => {
    let left = parseProduct();
    for (let c = peek(); c === '+' || c === '-'; c = peek()) {
      const index = pos++;
      left = { kind: 'binary', op: c, left, right: parseProduct(), index };
    }
    return left;
  };

  const parseProduct = (): CalcNode => {
    let left = parseUnary();
    for (let c = peek(); c === '*' || c === '/'; c = peek()) {
      const index = pos++;
      left = { kind: 'binary', op: c, left, right: parseUnary(), index };
    }
    return left;
  };

  const parseUnary = (): CalcNode => {
    // A loop, not recursion: a run of minus signs costs no stack.
    const signs: number[] = [];
    while (peek() === '-') signs.push(pos++);
    let node = parsePrimary();
    for (let i = signs.length - 1; i >= 0; i--)
      node = { kind: 'negate', operand: node, index: signs[i]! };
    return node;
  };

  const parsePrimary = (): CalcNode => {
    const c = peek();
    if (c === '(') {
      const open = pos++;
      if (++depth > MAX_CALC_DEPTH) {
        throw fail('too-deep', `parentheses nest deeper than ${MAX_CALC_DEPTH}`, open);
      }
      const inner = parseSum();
      const close = peek();
      if (close !== ')') {
        if (close === undefined) throw fail('bad-arguments', `"(" not closed`, open);
        throw fail('bad-arguments', `expected ")", got ${describeChar(close)}`, pos);
      }
      pos++;
      depth--;
      return inner;
    }
    if (isDigit(c)) return parseNumber();
    if (c === '.') throw fail('bad-arguments', `a number needs a digit before "."`, pos);
    if (c === undefined) throw fail('bad-arguments', 'expected a number, got the end', pos);
    throw fail('bad-arguments', `expected a number, got ${describeChar(c)}`, pos);
  };

  const parseNumber = (): CalcNode => {
    const start = pos;
    while (isDigit(text[pos])) pos++;
    let digits = text.slice(start, pos);
    let places = 0;
    if (text[pos] === '.') {
      pos++;
      const fraction = pos;
      while (isDigit(text[pos])) pos++;
      if (pos === fraction) throw fail('bad-arguments', `a digit must follow "."`, pos);
      places = pos - fraction;
      digits += text.slice(fraction, pos);
    }
    if (digits.length > MAX_CALC_DIGITS) {
      throw fail('out-of-range', `number longer than ${MAX_CALC_DIGITS} digits`, start);
    }
    return { kind: 'number', value: reduce(BigInt(digits), 10n ** BigInt(places)), index: start };
  };

  if (peek() === undefined) throw fail('bad-arguments', 'empty expression', pos);
  const tree = parseSum();
  const rest = peek();
  if (rest !== undefined) {
    if (rest === ')') throw fail('bad-arguments', `unmatched ")"`, pos);
    if (rest === '.') throw fail('bad-arguments', `a number has at most one "."`, pos);
    throw fail('bad-arguments', `expected an operator, got ${describeChar(rest)}`, pos);
  }
  return tree;
}

/** Exact value of `node`, left operand before right; throws division-by-zero / out-of-range. */
function evaluate(node: CalcNode): Fraction {
  switch (node.kind) {
    case 'number':
      return node.value;
    case 'negate': {
      const v = evaluate(node.operand);
      return { num: -v.num, den: v.den };
    }
    case 'binary': {
      const a = evaluate(node.left);
      const b = evaluate(node.right);
      let value: Fraction;
      switch (node.op) {
        case '+':
          value = reduce(a.num * b.den + b.num * a.den, a.den * b.den);
          break;
        case '-':
          value = reduce(a.num * b.den - b.num * a.den, a.den * b.den);
          break;
        case '*':
          value = reduce(a.num * b.num, a.den * b.den);
          break;
        case '/':
          if (b.num === 0n) throw fail('division-by-zero', 'division by zero', node.index);
          value = reduce(a.num * b.den, a.den * b.num);
          break;
      }
      if (abs(value.num) > MAX_CALC_MAGNITUDE || value.den > MAX_CALC_MAGNITUDE) {
        throw fail('out-of-range', 'value beyond 2^128', node.index);
      }
      return value;
    }
  }
}

/** The exact value of a calc expression; throws ToolError on anything else. */
export function evaluateCalc(text: string): Fraction {
  return evaluate(parseCalc(text));
}

/** The calc tool's result text for `text` (see the file comment for the output rules). */
export function calculate(text: string): string {
  const result = formatFraction(evaluateCalc(text));
  if (result.length > MAX_TOOL_RESULT_CHARS) {
    throw fail('out-of-range', `result longer than ${MAX_TOOL_RESULT_CHARS} characters`);
  }
  return result;
}

/** Exact text when the expansion ends within MAX_EXACT_DECIMALS places, else rounded to 6. */
export function formatFraction(value: Fraction): string {
  const { num, den } = reduce(value.num, value.den);
  if (den === 1n) return num.toString();
  let rest = den;
  let twos = 0;
  let fives = 0;
  while (rest % 2n === 0n) {
    rest /= 2n;
    twos++;
  }
  while (rest % 5n === 0n) {
    rest /= 5n;
    fives++;
  }
  const places = Math.max(twos, fives);
  if (rest === 1n && places <= MAX_EXACT_DECIMALS) return roundHalfEven({ num, den }, places);
  return roundHalfEven({ num, den }, CALC_DECIMALS);
}

/**
 * num/den rounded half-to-even to `places` decimals, as text without trailing zeros (and without
 * "." when nothing follows it); a value that rounds to zero prints "0", never "-0".
 */
export function roundHalfEven(value: Fraction, places: number): string {
  const { num, den } = reduce(value.num, value.den);
  const scaled = abs(num) * 10n ** BigInt(places);
  let q = scaled / den;
  const twice = 2n * (scaled % den);
  if (twice > den || (twice === den && q % 2n === 1n)) q += 1n;
  const sign = num < 0n && q !== 0n ? '-' : '';
  if (places === 0) return sign + q.toString();
  const digits = q.toString().padStart(places + 1, '0');
  const whole = digits.slice(0, -places);
  const fraction = digits.slice(-places).replace(/0+$/, '');
  return sign + (fraction === '' ? whole : `${whole}.${fraction}`);
}

function abs(x: bigint): bigint {
  return x < 0n ? -x : x;
}

/** num/den in lowest terms with den > 0 (den must not be 0). */
function reduce(num: bigint, den: bigint): Fraction {
  if (den < 0n) {
    num = -num;
    den = -den;
  }
  let a = abs(num);
  let b = den;
  while (b !== 0n) [a, b] = [b, a % b];
  const g = a === 0n ? 1n : a;
  return { num: num / g, den: den / g };
}

export const calculatorTool: Tool = {
  name: 'calc',
  doc: 'calc(expr): exact arithmetic with + - * / ( ) and decimals',
  run: calculate,
};
