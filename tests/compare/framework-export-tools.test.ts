import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { chatToolArgs, chatToolDefinitions } from '../../src/agents/chat-tools';
import { DOCUMENTS } from '../../src/agents/data/documents';
import { PRICE_ITEMS } from '../../src/agents/data/prices';
import {
  createToolSet,
  MAX_TOOL_ARGS_CHARS,
  runTool,
  TOOL_NAMES,
  ToolError,
  type ToolName,
} from '../../src/agents/tools';
import { calculate } from '../../src/agents/tools/calculator';
import { lookupPrice } from '../../src/agents/tools/lookup';
import { bm25Idf, bm25Scores, search, searchTokens } from '../../src/agents/tools/search';
import { pythonTools } from '../../src/compare/framework-export-tools';

/** A call's outcome, compared across the two languages: the result text, or the error's detail. */
type Outcome = { ok: string } | { error: string };

const LAB: Readonly<Record<ToolName, (args: string) => string>> = {
  calc: calculate,
  price: lookupPrice,
  search,
};

/**
 * What a lab episode's call gives: runTool refuses arguments over MAX_TOOL_ARGS_CHARS before the
 * tool runs (checked against runTool itself below), then the tool's own text or error detail.
 */
function lab(name: ToolName, args: string): Outcome {
  if (args.length > MAX_TOOL_ARGS_CHARS) {
    return { error: `arguments longer than ${MAX_TOOL_ARGS_CHARS} characters` };
  }
  try {
    return { ok: LAB[name](args) };
  } catch (error) {
    if (!(error instanceof ToolError)) throw error;
    return { error: error.detail };
  }
}

/** A temp dir holding one module per entry, each the imports and body of pythonTools(names). */
function modules(files: Record<string, readonly ToolName[]>): string {
  const dir = mkdtempSync(join(tmpdir(), 'lab-tools-'));
  for (const [name, names] of Object.entries(files)) {
    const { imports, body } = pythonTools(names);
    writeFileSync(join(dir, `${name}.py`), [...imports, '', '', body, ''].join('\n'));
  }
  return dir;
}

const DIR = modules({ lab_tools: TOOL_NAMES });

/** Runs `lines` in python3 with DIR on the path and `input` as JSON on stdin; parses its JSON. */
function python(lines: readonly string[], input: unknown = null, dir = DIR): unknown {
  const program = ['import json, sys', `sys.path.insert(0, ${JSON.stringify(dir)})`, ...lines];
  const printed = execFileSync('python3', ['-c', program.join('\n')], {
    input: JSON.stringify(input),
    maxBuffer: 1 << 28,
  });
  return JSON.parse(printed.toString('utf8'));
}

/**
 * Python's outcome of each [tool, argument] (the argument a JSON value, as TRL passes it); a
 * ValueError is an error outcome, any other exception fails the run. stdin is read as UTF-8 and
 * json.dumps writes ASCII, so no locale can change the texts (lone surrogates included).
 */
const CALL = [
  'import lab_tools',
  'def call(name, arg):',
  '    try:',
  '        return {"ok": getattr(lab_tools, name)(arg)}',
  '    except ValueError as e:',
  '        return {"error": str(e)}',
  'cases = json.loads(sys.stdin.buffer.read().decode("utf-8"))',
];

function pythonOutcomes(cases: readonly [ToolName, unknown][]): Outcome[] {
  return python(
    [...CALL, 'print(json.dumps([call(name, arg) for name, arg in cases]))'],
    cases,
  ) as Outcome[];
}

/** Asserts parity for every case and that both outcomes occur often enough to mean something. */
function expectParity(cases: readonly [ToolName, string][], least: number): void {
  const expected = cases.map(([name, args]) => lab(name, args));
  const actual = pythonOutcomes(cases);
  // Compared per case so a failure names the input.
  const mismatches = cases.flatMap(([name, args], i) =>
    JSON.stringify(actual[i]) === JSON.stringify(expected[i])
      ? []
      : [{ name, args, lab: expected[i], python: actual[i] }],
  );
  expect(mismatches).toEqual([]);
  expect(actual).toHaveLength(cases.length);
  expect(expected.filter((o) => 'ok' in o).length).toBeGreaterThanOrEqual(least);
  expect(expected.filter((o) => 'error' in o).length).toBeGreaterThanOrEqual(least);
}

const POW32 = '4294967296';
const POW128 = [POW32, POW32, POW32, POW32].join('*');

const CALC_CASES: string[] = [
  // integers and decimals
  '0',
  '7',
  '408',
  '007',
  '347*86',
  '(3*7+2)/4',
  '12-20',
  '2.50',
  '3.25*4',
  '0.1+0.2',
  '0.1*3',
  '1/3',
  '2/3',
  '-1/3',
  '-2/3',
  '1/7',
  '22/7',
  '1/8',
  '-3.5',
  '1/1024',
  '1/262144',
  '1/524288',
  '3/524288',
  '0.5/3',
  '1/3*3',
  '0.000001',
  '0.0000001/3',
  '0.000000001*0.0000000001',
  '-0.000000001*0.0000000001',
  '0.000000000000000001',
  '0.0000000000000000001',
  '1/10000000000000000000',
  '1/1000000000000000000',
  '2/30000000',
  // signs
  '-0',
  '-0.0',
  '0*-1',
  '--5',
  '---5',
  '- - 4',
  '-(-(3))',
  '-(4-9)',
  '2*-3',
  '1--1',
  '1 - -1',
  '-'.repeat(63) + '1',
  '+1',
  '1+',
  '1+*2',
  '1-',
  '*',
  // nesting: 16 deep is allowed, 17 is not
  `${'('.repeat(16)}1${')'.repeat(16)}`,
  `${'('.repeat(17)}1${')'.repeat(17)}`,
  `${'('.repeat(16)}1+(2)${')'.repeat(16)}`,
  `(${'(1)+'.repeat(12)}1)`,
  // digits: 18 per number, integer and fraction digits together
  '123456789012345678',
  '12345678901234567.8',
  '0.12345678901234567',
  '1234567890123456789',
  '1.234567890123456789',
  '0.123456789012345678',
  '999999999999999999*999999999999999999',
  // 2^128 is allowed, one past it is not
  POW128,
  `-${POW128}`,
  `${POW128}+1`,
  `${POW128}-1`,
  `0-${POW128}-1`,
  `${POW128}*1`,
  `${POW128}*2`,
  `1/${POW128}`,
  `1/${POW32}/${POW32}/${POW32}/${POW32}`,
  `1/${POW32}/${POW32}/${POW32}/${POW32}/2`,
  `(${POW128}+1)/0`,
  // a result over MAX_TOOL_RESULT_CHARS (odd numerator over 2^18: 18 exact places)
  '999999999999999999*999999999999999999/262144',
  '999999999999999999*99999999999999999/262144',
  // division by zero
  '1/0',
  '0/0',
  '1/0.0',
  '1/(2-2)',
  '5/(1-1)+1/0',
  '1/0+(',
  // empty and spaces
  '',
  ' ',
  '   ',
  '\t\n\r',
  ' 1 +\t2\n*3 \r',
  '1 2',
  '1 .5',
  '12 34',
  '( 1 + 2 ) * 3',
  '\u000b1',
  '1\u000c',
  '1\u00a0+1',
  // number shapes
  '.5',
  '5.',
  '5.+1',
  '1..2',
  '1.2.3',
  '1.2.',
  '-.5',
  '1e5',
  '1,5',
  '0x10',
  '1_000',
  // parentheses
  '(1',
  '1)',
  '((1)',
  '(1))',
  ')',
  '(',
  '()',
  '(1+2',
  '(1 x',
  '(1"',
  // other characters
  'A',
  'x',
  '"',
  '1"',
  '1+A',
  '2^3',
  '3%2',
  '\u0000',
  '\u007f',
  // length: 64 code units pass, 65 do not
  `${'1+'.repeat(31)}10`,
  `${'1+'.repeat(32)}1`,
  `1${' '.repeat(63)}`,
  `1${' '.repeat(64)}`,
  // unicode: named by its (first) UTF-16 code unit; length counted in code units
  'é',
  '1+é',
  '１',
  '٣',
  '1+\u{1f600}',
  '\u{1f600}',
  '\u{1f600}'.repeat(32),
  '\u{1f600}'.repeat(33),
  `1+${'\u{1f600}'.repeat(31)}`,
  '\ud800',
  '1+\udc00',
  '\ufeff1',
];

/** Random text over the calculator's alphabet: mostly errors, some values. */
const CALC_NOISE = fc.sample(
  fc.string({ unit: fc.constantFrom(...'0123456789.+-*/() '), maxLength: 24 }),
  { numRuns: 500, seed: 7 },
);

/** Random well-formed expressions (some too long, too deep, over 2^128 or dividing by zero). */
const CALC_EXPRESSIONS = fc.sample(
  fc.letrec<{ expr: string }>((tie) => ({
    expr: fc.oneof(
      { maxDepth: 5 },
      fc.constantFrom(
        '0',
        '1',
        '2',
        '3',
        '7',
        '10',
        '0.5',
        '0.1',
        '0.25',
        '1.5',
        '3.14159',
        '0.000001',
        '999999999',
        POW32,
        '123456789012345678',
      ),
      fc
        .tuple(tie('expr'), fc.constantFrom('+', '-', '*', '/', ' + ', ' / ', '*-'), tie('expr'))
        .map(([a, op, b]) => `${a}${op}${b}`),
      tie('expr').map((e) => `(${e})`),
      tie('expr').map((e) => `-${e}`),
    ),
  })).expr,
  { numRuns: 500, seed: 8 },
);

const PRICE_CASES: string[] = [
  ...PRICE_ITEMS,
  ...PRICE_ITEMS.flatMap((item) => [
    ` ${item} `,
    `\t${item}\n`,
    item.toUpperCase(),
    item[0]!.toUpperCase() + item.slice(1),
    `${item}s`,
    item.slice(0, -1),
  ]),
  '',
  ' ',
  '\t\n',
  'apple pie',
  'app le',
  'unknown',
  'constructor',
  '__proto__',
  'toString',
  'hasOwnProperty',
  '3',
  'apple\u00a0',
  '\ufeffapple',
  'apple\u0085',
  '\u001capple',
  '\u2028apple\u3000',
  '\u200bapple',
  'a'.repeat(64),
  'a'.repeat(65),
  `apple${' '.repeat(59)}`,
  `apple${' '.repeat(60)}`,
  `${'\u{1f600}'.repeat(30)}apple`,
  `${'\u{1f600}'.repeat(30)}bolt`,
  'apple\ud800',
];

/** Every word of the collection, its questions included. */
const WORDS = [...new Set(DOCUMENTS.flatMap((d) => searchTokens(`${d.text} ${d.question}`)))];

const SEARCH_CASES: string[] = [
  ...DOCUMENTS.map((d) => d.question),
  ...DOCUMENTS.map((d) => d.text),
  ...DOCUMENTS.map((d) => d.answer),
  ...WORDS,
  '',
  ' ',
  '?!',
  '...',
  'é',
  'ｌａｋｅ ｍｉｒｏ',
  'the',
  'is',
  'm',
  'the is a',
  'zzz',
  'unknownword',
  'depth of lake miro',
  'LAKE MIRO',
  'Lake Miro?',
  'lake-miro',
  'lake_miro',
  'lakemiro',
  'miro miro miro',
  'MiRo',
  'lake\u{1f600}miro',
  'lake\u00e9miro',
  'İstanbul miro',
  `lake${'\u{1f600}'.repeat(30)}`,
  `lake${'\u{1f600}'.repeat(31)}`,
  `miro ${'x'.repeat(59)}`,
  `miro ${'x'.repeat(60)}`,
  '37',
  '2841 m',
  'how deep',
  'how many',
  '\ud800miro',
];

/** Random queries: collection words in mixed case with punctuation, unknown words and unicode. */
const SEARCH_FUZZ = fc.sample(
  fc
    .array(
      fc.tuple(
        fc.oneof(
          fc.constantFrom(...WORDS),
          fc.constantFrom(...WORDS).map((w) => w.toUpperCase()),
          fc.constantFrom('zzz', 'qwerty', 'é', '?', '', 'Miro', 'the'),
        ),
        fc.constantFrom(' ', '', ',', '  ', '\t', '-', '?'),
      ),
      { maxLength: 6 },
    )
    .map((parts) => parts.map(([word, sep]) => word + sep).join('')),
  { numRuns: 500, seed: 9 },
);

describe('pythonTools: parity with the lab tools', () => {
  it('calc: the same text or the same error on edge cases and random expressions', () => {
    const cases = [...CALC_CASES, ...CALC_NOISE, ...CALC_EXPRESSIONS].map(
      (args): [ToolName, string] => ['calc', args],
    );
    expectParity(cases, 200);
    // The limits are met on both sides of each boundary.
    const outcomes = new Map(CALC_CASES.map((args) => [args, lab('calc', args)]));
    expect(outcomes.get('0.1+0.2')).toEqual({ ok: '0.3' });
    expect(outcomes.get('2/3')).toEqual({ ok: '0.666667' });
    expect(outcomes.get('-0.000000001*0.0000000001')).toEqual({ ok: '0' });
    expect(outcomes.get(POW128)).toEqual({ ok: (1n << 128n).toString() });
    expect(outcomes.get(`${POW128}+1`)).toEqual({ error: 'value beyond 2^128 at 43' });
    expect(outcomes.get(`${'('.repeat(17)}1${')'.repeat(17)}`)).toEqual({
      error: 'parentheses nest deeper than 16 at 16',
    });
    expect(outcomes.get('999999999999999999*999999999999999999/262144')).toEqual({
      error: 'result longer than 48 characters',
    });
    // 33 astral characters are 66 UTF-16 units (too long) but 33 code points.
    expect(outcomes.get('\u{1f600}'.repeat(33))).toEqual({
      error: 'arguments longer than 64 characters',
    });
    expect(runTool(createToolSet(['calc']), 'calc', '\u{1f600}'.repeat(33)).text).toBe(
      'error: arguments longer than 64 characters',
    );
    expect(outcomes.get('1+\u{1f600}')).toEqual({ error: 'expected a number, got u+d83d at 2' });
  });

  it('price: every item, near misses and every BMP character around an item', () => {
    expectParity(
      PRICE_CASES.map((args): [ToolName, string] => ['price', args]),
      40,
    );
    // Trimming is JavaScript's: each BMP code unit on both sides of an item.
    const around = Array.from({ length: 0x10000 }, (_, code): [ToolName, string] => {
      const c = String.fromCharCode(code);
      return ['price', `${c}apple${c}`];
    });
    expectParity(around, 20);
  });

  it('search: the same fact or the same error, and bit-identical BM25 scores', () => {
    const queries = [...SEARCH_CASES, ...SEARCH_FUZZ];
    expectParity(
      queries.map((args): [ToolName, string] => ['search', args]),
      50,
    );
    const [scores, idf] = python(
      [
        'import lab_tools',
        'queries = json.loads(sys.stdin.buffer.read().decode("utf-8"))',
        'print(json.dumps([[lab_tools._bm25_scores(q) for q in queries], lab_tools._SEARCH_IDF]))',
      ],
      queries,
    ) as [number[][], Record<string, number>];
    // JSON carries doubles exactly (shortest round-trip digits both ways).
    expect(scores).toEqual(queries.map((q) => bm25Scores(q)));
    const terms = [...new Set(DOCUMENTS.flatMap((d) => searchTokens(d.text)))];
    expect(Object.keys(idf).sort()).toEqual([...terms].sort());
    expect(terms.filter((t) => idf[t] !== bm25Idf(t))).toEqual([]);
    // Ties at the top happen (e.g. "m"), so the lower-index rule is exercised.
    const tied = queries.filter((q) => {
      const s = bm25Scores(q);
      const top = Math.max(...s);
      return top > 0 && s.filter((x) => x === top).length > 1;
    });
    expect(tied.length).toBeGreaterThan(5);
  });

  it('a number for the parameter is the text JavaScript writes for it; anything else is refused', () => {
    const literals = [
      '12',
      '-7',
      '0',
      '37',
      '3',
      '1.0',
      '-0.0',
      '1.5',
      '0.1',
      '2.5e-3',
      '0.000001',
      '1e-7',
      '1.5e-7',
      '1e16',
      '1e21',
      '1.2345e25',
      '123456789012345678901234567890',
      '9007199254740993',
      '1e400',
      '-1e400',
      'true',
      'false',
      'null',
      '"12"',
      '[1]',
      '{"a": 1}',
    ];
    const cases = TOOL_NAMES.flatMap((name) =>
      literals.map((lit): [ToolName, string] => [name, lit]),
    );
    const actual = python(
      [...CALL, 'print(json.dumps([call(name, json.loads(lit)) for name, lit in cases]))'],
      cases,
    ) as Outcome[];
    const expected = cases.map(([name, lit]): Outcome => {
      const [definition] = chatToolDefinitions([name]);
      const parameter = Object.keys(definition!.parameters.properties as object)[0]!;
      const args = chatToolArgs(name, { [parameter]: JSON.parse(lit) as unknown });
      return args.ok ? lab(name, args.text) : { error: args.error.replace(/^error: /, '') };
    });
    expect(actual).toEqual(expected);
    const at = (name: ToolName, lit: string) =>
      actual[cases.findIndex(([n, l]) => n === name && l === lit)];
    expect(at('calc', '12')).toEqual({ ok: '12' });
    expect(at('calc', '1e16')).toEqual({ ok: '10000000000000000' });
    expect(at('price', '3')).toEqual({ error: 'unknown item' });
    expect(at('search', '37')).toEqual({ ok: 'lake miro is 37 m deep' });
    expect(at('calc', 'true')).toEqual({ error: '"expression" must be text' });
    // What JSON cannot carry: Python's own non-finite floats, bools and None are refused too.
    const refused = python(
      [
        ...CALL,
        'values = [float("nan"), float("inf"), -float("inf"), True, None, b"1", 10**400]',
        'print(json.dumps([call(n, v) for n in ("calc", "price", "search") for v in values]))',
      ],
      [],
    ) as Outcome[];
    expect(refused.map((o) => 'error' in o && /^"\w+" must be text$/.test(o.error))).toEqual(
      Array<boolean>(21).fill(true),
    );
  });
});

/** The three parts transformers' get_json_schema reads from a Google-style docstring. */
function googleDocstring(doc: string): {
  description: string;
  args: Record<string, string>;
  returns: string | undefined;
} {
  const description = /^(.*?)\s*(?:\n\s*Args:|\n\s*Returns:|\n\s*Raises:|$)/s.exec(doc)![1]!;
  const argsBlock = /\n\s*Args:\n(.*?)(?:\n\s*Returns:|\n\s*Raises:|$)/s.exec(doc)?.[1] ?? '';
  const args = Object.fromEntries(
    argsBlock
      .split('\n')
      .map((line) => /^\s*(\w+):\s*(.*?)\s*$/.exec(line))
      .filter((m) => m !== null)
      .map((m) => [m[1]!, m[2]!]),
  );
  const returns = /\n\s*Returns:\n\s*(.*?)\s*(?:\n\s*Raises:|$)/s.exec(doc)?.[1];
  return { description, args, returns };
}

describe('pythonTools: the functions TRL reads', () => {
  it('names, str type hints and Google-style docstrings from the chat schemas', () => {
    const info = python([
      'import inspect, typing',
      'import lab_tools',
      'out = {}',
      'for name in ("calc", "price", "search"):',
      '    f = getattr(lab_tools, name)',
      '    parameters = inspect.signature(f).parameters.values()',
      '    out[name] = {',
      '        "name": f.__name__,',
      '        "parameters": [[p.name, p.kind.name, p.default is p.empty] for p in parameters],',
      '        "hints": {k: v.__name__ for k, v in typing.get_type_hints(f).items()},',
      '        "doc": inspect.getdoc(f),',
      '    }',
      'print(json.dumps(out))',
    ]) as Record<
      ToolName,
      { name: string; parameters: [string, string, boolean][]; hints: object; doc: string }
    >;
    for (const definition of chatToolDefinitions(TOOL_NAMES)) {
      const name = definition.name as ToolName;
      const properties = definition.parameters.properties as Record<
        string,
        { description: string }
      >;
      const [parameter] = Object.keys(properties);
      const got = info[name];
      expect(got.name).toBe(name);
      expect(got.parameters).toEqual([[parameter, 'POSITIONAL_OR_KEYWORD', true]]);
      expect(got.hints).toEqual({ [parameter!]: 'str', return: 'str' });
      expect(got.doc.split('\n')[0]).toBe(definition.description);
      const doc = googleDocstring(got.doc);
      expect(doc.description).toBe(definition.description);
      expect(doc.args).toEqual({ [parameter!]: properties[parameter!]!.description });
      expect(doc.returns).toMatch(/^\S/);
      expect(got.doc).toMatch(/\nRaises:\n {4}ValueError: \S/);
    }
  });

  it('imports sorted and unique, no trailing blank line, no eval/exec, each subset self-contained', () => {
    const { imports, body } = pythonTools(['calc', 'price', 'search']);
    expect(imports).toEqual([...new Set(imports)].sort());
    expect(imports).toEqual([
      'from decimal import Decimal',
      'from fractions import Fraction',
      'import math',
    ]);
    expect(body).not.toMatch(/\n\s*$/);
    expect(body).not.toMatch(/\b(eval|exec|compile|__import__)\s*\(|\bimport ast\b/);
    expect(body).toMatch(/^_PRICES = \{$/m);
    expect(body.indexOf('_DOCUMENTS = [')).toBeLessThan(body.indexOf('def '));
    expect(pythonTools(['search']).imports).toEqual(['from decimal import Decimal', 'import math']);
    expect(pythonTools(['price', 'calc']).body.indexOf('def price(')).toBeLessThan(
      pythonTools(['price', 'calc']).body.indexOf('def calc('),
    );
    expect(pythonTools(['search', 'search'])).toEqual(pythonTools(['search']));
    expect(pythonTools([])).toEqual({ imports: [], body: '' });
    const subsets: Record<string, ToolName[]> = {
      only_calc: ['calc'],
      only_price: ['price'],
      only_search: ['search'],
      price_calc: ['price', 'calc'],
    };
    const dir = modules(subsets);
    const defined = python(
      [
        'import importlib',
        'out = {}',
        'for module in json.loads(sys.stdin.read()):',
        '    m = importlib.import_module(module)',
        '    out[module] = [n for n in ("calc", "price", "search") if hasattr(m, n)]',
        '    out[module + " calls"] = [getattr(m, n)("12") for n in ("calc", "price") if hasattr(m, n) and n == "calc"]',
        'print(json.dumps(out))',
      ],
      Object.keys(subsets),
      dir,
    );
    expect(defined).toEqual({
      only_calc: ['calc'],
      'only_calc calls': ['12'],
      only_price: ['price'],
      'only_price calls': [],
      only_search: ['search'],
      'only_search calls': [],
      price_calc: ['calc', 'price'],
      'price_calc calls': ['12'],
    });
  });

  it('an unknown tool name throws naming its index and the valid names', () => {
    expect(() => pythonTools(['calc', 'shell' as ToolName])).toThrow(
      'pythonTools: names[1] "shell" is not a tool; valid: calc, price, search',
    );
    expect(() => pythonTools(['Calc' as ToolName])).toThrow(/names\[0\]/);
  });
});
