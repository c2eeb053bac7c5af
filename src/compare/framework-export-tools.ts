/**
 * The lab's agent tools (src/agents/tools/*.ts) as Python functions for the TRL export:
 * GRPOTrainer(tools=[calc, price, search]) lets the policy call them during its rollouts, as the
 * lab's agent tasks do. TRL builds each tool's JSON schema from the function's name, type hints and
 * Google-style docstring, calls it with keyword arguments, shows str(result) to the model and turns
 * a raised exception into {"error": str(e)}.
 *
 * Parity: on every call the lab's tool answers, the Python returns the same text; where the lab's
 * tool throws a ToolError, the Python raises ValueError with the same detail text (the lab shows
 * "error: <detail>", TRL {"error": "<detail>"}). What that takes:
 *   - calc is a port of the hand-written recursive-descent parser, over fractions.Fraction (never
 *     Python's ast or eval: a float literal would lose exactness), with the same limits, error order
 *     and output rules;
 *   - lengths are counted as JavaScript counts them, in UTF-16 code units (a character beyond
 *     U+FFFF is two), and a character named in an error is its first code unit;
 *   - price trims what JavaScript's String.prototype.trim trims, not what str.strip() does;
 *   - search sums the BM25 terms in the lab's order with the lab's operation order, so the float
 *     scores, and so their ties, come out bit for bit the same;
 *   - a number given for the parameter (chatToolArgs accepts a finite one) becomes the text
 *     JavaScript writes for it, not the text Python's json.dumps writes (1.0 → "1", 1e16 →
 *     "10000000000000000"), since that is the text the lab's tool runs on.
 * The data (prices, documents) and the limits are written out from the TypeScript at export time.
 */
import { DOCUMENTS } from '../agents/data/documents';
import { PRICES } from '../agents/data/prices';
import { TOOL_NAMES, type ToolName } from '../agents/tools';
import { BM25_B, BM25_K1 } from '../agents/tools/search';
import { MAX_TOOL_ARGS_CHARS, MAX_TOOL_RESULT_CHARS } from '../agents/tools/tool';
import { calcPiece } from './framework-export-tool-calc';
import { py, signature, type Piece } from './framework-export-tool-parts';
import { pythonFloat } from './python-literal';

/** Python source split so a script can put every import first. */
export interface ToolsCode {
  imports: string[];
  /** Data tables, then the helper and tool functions; no trailing blank line. */
  body: string;
}

/**
 * Every BMP character String.prototype.trim removes, asked of this JavaScript engine (none lie
 * beyond U+FFFF): Python's str.strip() differs (it strips U+001C–U+001F and U+0085, keeps U+FEFF).
 */
function jsTrimmed(): string {
  let chars = '';
  for (let code = 0; code < 0x10000; code++) {
    const c = String.fromCharCode(code);
    if (c.trim() === '') chars += c;
  }
  return chars;
}

/** Limits and helpers every tool uses: JavaScript lengths and the lab's reading of an argument. */
function sharedPiece(): Piece {
  return {
    imports: ['from decimal import Decimal', 'import math'],
    tables: [
      `_MAX_ARGS_CHARS = ${MAX_TOOL_ARGS_CHARS}  # in UTF-16 code units, as JavaScript counts`,
      `_MAX_RESULT_CHARS = ${MAX_TOOL_RESULT_CHARS}`,
    ],
    functions: [
      `def _js_length(text):
    """len(text) as JavaScript counts it, in UTF-16 code units: a character beyond U+FFFF is two."""
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)`,
      `def _js_number(value):
    """A finite float as JavaScript's String() writes it: repr's digits (the shortest that read
    back to the same double, as JavaScript's are), placed by ECMAScript's Number::toString rules."""
    if value == 0:
        return "0"  # -0 included
    sign, digits, exponent = Decimal(repr(value)).as_tuple()
    text = "".join(str(d) for d in digits)
    significant = text.rstrip("0")
    exponent += len(text) - len(significant)
    k = len(significant)
    n = k + exponent  # value = 0.<significant> * 10**n
    if k <= n <= 21:
        out = significant + "0" * (n - k)
    elif 0 < n <= 21:
        out = significant[:n] + "." + significant[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * -n + significant
    else:
        mantissa = significant if k == 1 else significant[0] + "." + significant[1:]
        out = f"{mantissa}e{'+' if n >= 1 else '-'}{abs(n - 1)}"
    return ("-" if sign else "") + out`,
      `def _argument_text(value, parameter):
    """The text the lab's tool runs on (chatToolArgs): text as it is; a finite number as the lab's
    JSON holds it, a double (an int is read as one, as JSON.parse would), written as JavaScript
    writes it. Anything else, a bool included, is refused."""
    if isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            number = float(value)
        except OverflowError:
            number = math.inf  # JSON.parse reads an int beyond the doubles as Infinity
        if math.isfinite(number):
            return _js_number(number)
    raise ValueError(f'"{parameter}" must be text')`,
    ],
  };
}

function pricePiece(): Piece {
  const entries = [...PRICES].map(([item, price]) => {
    if (!Number.isSafeInteger(price)) {
      throw new Error(`pythonTools: price of ${py(item)} must be a whole number, got ${price}`);
    }
    return `    ${py(item)}: ${price},`;
  });
  return {
    imports: [],
    tables: [
      `_PRICES = {\n${entries.join('\n')}\n}`,
      "# What JavaScript's String.prototype.trim removes (the lab trims the item with it).",
      `_JS_TRIMMED = ${py(jsTrimmed())}`,
    ],
    functions: [
      [
        ...signature(
          'price',
          'The price as a whole number, e.g. "7".',
          'the item is not in the shop, or the argument is empty or too long.',
        ),
        '    name = text.strip(_JS_TRIMMED)',
        '    if name == "":',
        '        raise ValueError("expected an item name")',
        '    if name not in _PRICES:',
        '        # As in the lab, the error lists no items: the table cannot be read out of errors.',
        '        raise ValueError("unknown item")',
        '    return str(_PRICES[name])',
      ].join('\n'),
    ],
  };
}

function searchPiece(): Piece {
  return {
    imports: [],
    tables: [
      `_DOCUMENTS = [\n${DOCUMENTS.map((d) => `    ${py(d.text)},`).join('\n')}\n]`,
      `_BM25_K1 = ${pythonFloat(BM25_K1)}`,
      `_BM25_B = ${pythonFloat(BM25_B)}`,
    ],
    functions: [
      `def _search_tokens(text):
    """Lowercase [a-z0-9] runs of text; only ASCII capitals are lowered, all else separates."""
    tokens, current = [], ""
    for c in text:
        if "a" <= c <= "z" or "0" <= c <= "9":
            current += c
        elif "A" <= c <= "Z":
            current += c.lower()
        elif current:
            tokens.append(current)
            current = ""
    if current:
        tokens.append(current)
    return tokens`,
      `def _search_index():
    """Per document term counts and lengths, the average length and each term's idf."""
    counts, lengths, frequency = [], [], {}
    for text in _DOCUMENTS:
        tokens = _search_tokens(text)
        count = {}
        for t in tokens:
            count[t] = count.get(t, 0) + 1
        counts.append(count)
        lengths.append(len(tokens))
        for t in count:
            frequency[t] = frequency.get(t, 0) + 1
    n = len(_DOCUMENTS)
    idf = {t: math.log(1 + (n - df + 0.5) / (df + 0.5)) for t, df in frequency.items()}
    return counts, lengths, sum(lengths) / len(lengths), idf`,
      '_SEARCH_COUNTS, _SEARCH_LENGTHS, _SEARCH_AVERAGE, _SEARCH_IDF = _search_index()',
      `def _bm25_scores(query):
    """Each document's BM25 score. Distinct terms in first-occurrence order and the lab's order of
    operations, so the floats (and their ties) are the lab's bit for bit."""
    terms = list(dict.fromkeys(_search_tokens(query)))
    scores = []
    for d, count in enumerate(_SEARCH_COUNTS):
        norm = _BM25_K1 * (1 - _BM25_B + (_BM25_B * _SEARCH_LENGTHS[d]) / _SEARCH_AVERAGE)
        score = 0.0
        for t in terms:
            tf = count.get(t, 0)
            if tf > 0:
                score += (_SEARCH_IDF[t] * tf * (_BM25_K1 + 1)) / (tf + norm)
        scores.append(score)
    return scores`,
      [
        ...signature(
          'search',
          'The text of the best-matching fact.',
          'the query has no words, none of them is in any fact, or it is too long.',
        ),
        '    if not _search_tokens(text):',
        '        raise ValueError("expected search words")',
        '    # The best score wins, ties going to the lower index; all zero is no match.',
        '    best, best_score = -1, 0.0',
        '    for d, score in enumerate(_bm25_scores(text)):',
        '        if score > best_score:',
        '            best, best_score = d, score',
        '    if best < 0:',
        '        raise ValueError("no matching document")',
        '    return _DOCUMENTS[best]',
      ].join('\n'),
    ],
  };
}

const PIECES: Readonly<Record<ToolName, () => Piece>> = {
  calc: calcPiece,
  price: pricePiece,
  search: searchPiece,
};

/**
 * Python source of the lab's tools `names` (in that order, a repeated name once), for a TRL
 * script: its imports (deduplicated, sorted) and its definitions (data tables, then functions),
 * ready for GRPOTrainer(tools=[...names]). An unknown name throws naming its index and the valid
 * names.
 */
export function pythonTools(names: readonly ToolName[]): ToolsCode {
  names.forEach((name, i) => {
    if (!(TOOL_NAMES as readonly string[]).includes(name)) {
      throw new RangeError(
        `pythonTools: names[${i}] ${JSON.stringify(name)} is not a tool; valid: ${TOOL_NAMES.join(', ')}`,
      );
    }
  });
  const unique = [...new Set(names)];
  if (unique.length === 0) return { imports: [], body: '' };
  const pieces = [sharedPiece(), ...unique.map((name) => PIECES[name]())];
  const imports = [...new Set(pieces.flatMap((p) => p.imports))].sort();
  // One blank line between the tables of different tools, two before the functions.
  const tables = pieces
    .filter((p) => p.tables.length > 0)
    .map((p) => p.tables.join('\n'))
    .join('\n\n');
  const functions = pieces.flatMap((p) => p.functions);
  const body = [
    `# The lab's agent tools (${unique.join(', ')}): the same results and error texts as the lab's;`,
    "# a failed call raises ValueError with the lab's error text.",
    tables,
    '',
    '',
    functions.join('\n\n\n'),
  ].join('\n');
  return { imports, body };
}
