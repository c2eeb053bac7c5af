/**
 * The calc tool as Python for the TRL export (framework-export-tools.ts): a port of the lab's
 * recursive-descent parser and exact evaluator (src/agents/tools/calculator.ts) over
 * fractions.Fraction, with its limits, its error texts in the order it finds them and its output
 * rules. Never Python's ast or eval: a float literal would lose exactness, and model output is
 * parsed, not run.
 */
import {
  CALC_DECIMALS,
  MAX_CALC_DEPTH,
  MAX_CALC_DIGITS,
  MAX_CALC_MAGNITUDE,
  MAX_EXACT_DECIMALS,
} from '../agents/tools/calculator';
import { py, pyBound, signature, type Piece } from './framework-export-tool-parts';

export function calcPiece(): Piece {
  return {
    imports: ['from fractions import Fraction'],
    tables: [
      `_CALC_MAX_DEPTH = ${MAX_CALC_DEPTH}`,
      `_CALC_MAX_DIGITS = ${MAX_CALC_DIGITS}`,
      `_CALC_MAX_MAGNITUDE = ${pyBound(MAX_CALC_MAGNITUDE)}`,
      `_CALC_EXACT_PLACES = ${MAX_EXACT_DECIMALS}`,
      `_CALC_PLACES = ${CALC_DECIMALS}`,
      `_CALC_SPACES = ${py(' \t\n\r')}`,
    ],
    functions: [
      `def _describe_char(c):
    """A character of the argument, safe to put in an error text (describeChar in tool.ts): "x" for
    printable ASCII other than capitals and the double quote, else its UTF-16 code unit as u+00e9
    (the first unit of a character beyond U+FFFF, the one JavaScript's text[i] reads)."""
    code = ord(c)
    if 0x20 <= code <= 0x7E and not "A" <= c <= "Z" and c != '"':
        return f'"{c}"'
    if code > 0xFFFF:
        code = 0xD800 + ((code - 0x10000) >> 10)
    return f"u+{code:04x}"`,
      `def _calc_error(detail, index=None):
    return ValueError(detail if index is None else f"{detail} at {index}")`,
      `class _CalcParser:
    """The recursive-descent parser of calculator.ts: it builds a tree and evaluates nothing.
    Nodes: ("number", Fraction, index), ("negate", node, index), (op, left, right, index).
    Every character it consumes is ASCII, so a code-point index is the lab's UTF-16 index."""

    def __init__(self, text):
        self.text = text
        self.pos = 0
        self.depth = 0

    def peek(self):
        while self.pos < len(self.text) and self.text[self.pos] in _CALC_SPACES:
            self.pos += 1
        return self.text[self.pos] if self.pos < len(self.text) else None

    def digit_at(self, pos):
        return pos < len(self.text) and "0" <= self.text[pos] <= "9"

    def parse(self):
        if self.peek() is None:
            raise _calc_error("empty expression", self.pos)
        tree = self.sum()
        rest = self.peek()
        if rest == ")":
            raise _calc_error('unmatched ")"', self.pos)
        if rest == ".":
            raise _calc_error('a number has at most one "."', self.pos)
        if rest is not None:
            raise _calc_error(f"expected an operator, got {_describe_char(rest)}", self.pos)
        return tree

    def sum(self):
        left = self.product()
        c = self.peek()
        while c == "+" or c == "-":
            index = self.pos
            self.pos += 1
            left = (c, left, self.product(), index)
            c = self.peek()
        return left

    def product(self):
        left = self.unary()
        c = self.peek()
        while c == "*" or c == "/":
            index = self.pos
            self.pos += 1
            left = (c, left, self.unary(), index)
            c = self.peek()
        return left

    def unary(self):
        # A loop, as in the lab: a run of minus signs costs no stack.
        signs = []
        while self.peek() == "-":
            signs.append(self.pos)
            self.pos += 1
        node = self.primary()
        for index in reversed(signs):
            node = ("negate", node, index)
        return node

    def primary(self):
        c = self.peek()
        if c == "(":
            opening = self.pos
            self.pos += 1
            self.depth += 1
            if self.depth > _CALC_MAX_DEPTH:
                raise _calc_error(f"parentheses nest deeper than {_CALC_MAX_DEPTH}", opening)
            inner = self.sum()
            closing = self.peek()
            if closing is None:
                raise _calc_error('"(" not closed', opening)
            if closing != ")":
                raise _calc_error(f'expected ")", got {_describe_char(closing)}', self.pos)
            self.pos += 1
            self.depth -= 1
            return inner
        if c is not None and "0" <= c <= "9":
            return self.number()
        if c == ".":
            raise _calc_error('a number needs a digit before "."', self.pos)
        if c is None:
            raise _calc_error("expected a number, got the end", self.pos)
        raise _calc_error(f"expected a number, got {_describe_char(c)}", self.pos)

    def number(self):
        # ASCII digits only ("0" <= c <= "9", not str.isdigit), with no spaces inside.
        start = self.pos
        while self.digit_at(self.pos):
            self.pos += 1
        digits = self.text[start : self.pos]
        places = 0
        if self.pos < len(self.text) and self.text[self.pos] == ".":
            self.pos += 1
            fraction = self.pos
            while self.digit_at(self.pos):
                self.pos += 1
            if self.pos == fraction:
                raise _calc_error('a digit must follow "."', self.pos)
            places = self.pos - fraction
            digits += self.text[fraction : self.pos]
        if len(digits) > _CALC_MAX_DIGITS:
            raise _calc_error(f"number longer than {_CALC_MAX_DIGITS} digits", start)
        return ("number", Fraction(int(digits), 10**places), start)`,
      `def _calc_value(node):
    """The exact value of a tree, left operand before right (so the first error is the lab's)."""
    if node[0] == "number":
        return node[1]
    if node[0] == "negate":
        return -_calc_value(node[1])
    op, left, right, index = node
    a = _calc_value(left)
    b = _calc_value(right)
    if op == "+":
        value = a + b
    elif op == "-":
        value = a - b
    elif op == "*":
        value = a * b
    else:
        if b == 0:
            raise _calc_error("division by zero", index)
        value = a / b
    if abs(value.numerator) > _CALC_MAX_MAGNITUDE or value.denominator > _CALC_MAX_MAGNITUDE:
        raise _calc_error("value beyond 2^128", index)
    return value`,
      `def _round_half_even(value, places):
    """value rounded half-to-even to places decimals, without trailing zeros; never "-0"."""
    num, den = value.numerator, value.denominator
    scaled = abs(num) * 10**places
    q, r = divmod(scaled, den)
    if 2 * r > den or (2 * r == den and q % 2 == 1):
        q += 1
    sign = "-" if num < 0 and q != 0 else ""
    if places == 0:
        return sign + str(q)
    digits = str(q).rjust(places + 1, "0")
    whole, fraction = digits[:-places], digits[-places:].rstrip("0")
    return sign + (whole if fraction == "" else f"{whole}.{fraction}")`,
      `def _calc_format(value):
    """Exact when the decimal expansion ends within _CALC_EXACT_PLACES places, else rounded."""
    if value.denominator == 1:
        return str(value.numerator)
    rest, twos, fives = value.denominator, 0, 0
    while rest % 2 == 0:
        rest //= 2
        twos += 1
    while rest % 5 == 0:
        rest //= 5
        fives += 1
    places = max(twos, fives)
    if rest == 1 and places <= _CALC_EXACT_PLACES:
        return _round_half_even(value, places)
    return _round_half_even(value, _CALC_PLACES)`,
      [
        ...signature(
          'calc',
          `The value: exact when its decimal expansion ends within ${MAX_EXACT_DECIMALS} places, else rounded to ${CALC_DECIMALS}.`,
          'the expression does not parse, divides by zero or goes out of range.',
        ),
        '    result = _calc_format(_calc_value(_CalcParser(text).parse()))',
        '    if len(result) > _MAX_RESULT_CHARS:',
        '        raise ValueError(f"result longer than {_MAX_RESULT_CHARS} characters")',
        '    return result',
      ].join('\n'),
    ],
  };
}
