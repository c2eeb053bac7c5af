/**
 * The quoting of text in the framework exports' scripts, checked by the languages themselves:
 * every shell word is run through `sh -c 'printf %s <word>'` in an empty folder (its output must
 * be the text's bytes, and no file may appear: nothing in the text ran), every Python literal is
 * read back by Python's own ast.literal_eval. The texts are fuzzed with what breaks naive quoting:
 * both quotes, backslashes, newlines, $(…), backticks, $VARS, NUL, non-ASCII and lone surrogates.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { hydra, python } from '../../src/compare/framework-export-files';
import { pythonString } from '../../src/compare/python-literal';
import { shellQuote } from '../../src/compare/shell-quote';

/** Pieces that break naive quoting, mixed with arbitrary text. */
const HOSTILE = [
  "'",
  '"',
  '\\',
  '\n',
  '\r',
  '\t',
  '$(touch P)',
  '`touch Q`',
  '$HOME',
  '${IFS}',
  '; touch R',
  '&& touch S #',
  "'\\''",
  '*',
  '~',
  '!',
  ' ',
  '\0',
  'é',
  '😀',
  '\u2028',
];

const hostileText = fc
  .array(fc.oneof(fc.constantFrom(...HOSTILE), fc.string({ maxLength: 6, unit: 'binary' })), {
    maxLength: 8,
  })
  .map((parts) => parts.join(''));

/** A high surrogate without its low half, or a low one without its high half. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** What `sh` prints for `printf %s <word>`, run in `cwd`. */
function shellPrints(word: string, cwd: string): Buffer {
  return execFileSync('sh', ['-c', `printf %s ${word}`], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

describe('shellQuote', () => {
  it('leaves plain words alone and quotes the rest', () => {
    expect(shellQuote('grpo-reverse_1.5')).toBe('grpo-reverse_1.5');
    expect(shellQuote("a'b")).toBe("'a'\\''b'");
    expect(shellQuote('')).toBe("''");
  });

  it('refuses a NUL, which no shell word can hold', () => {
    expect(() => shellQuote('a\0b')).toThrow('NUL');
  });

  it('gives sh back the exact bytes of any text, and runs nothing in it (fuzzed, run in sh)', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'shell-quote-'));
    let ran = 0;
    fc.assert(
      fc.property(hostileText, (text) => {
        // Node cannot pass a lone surrogate to a process: such text is not a file's text either.
        fc.pre(!LONE_SURROGATE.test(text));
        if (text.includes('\0')) {
          expect(() => shellQuote(text)).toThrow(RangeError);
          return;
        }
        ran += 1;
        expect(shellPrints(shellQuote(text), cwd)).toEqual(Buffer.from(text, 'utf8'));
      }),
      { numRuns: 100, seed: 42 },
    );
    expect(ran).toBeGreaterThan(40);
    // touch P, Q, R or S would have left a file.
    expect(readdirSync(cwd)).toEqual([]);
  });
});

describe('hydra (verl launch script values)', () => {
  it("passes a'$(touch P)' on as text: the command in it does not run", () => {
    const cwd = mkdtempSync(join(tmpdir(), 'hydra-'));
    const value = "a'$(touch P)'";
    const word = hydra({ name: 'actor_rollout_ref.model.path', value });
    expect(shellPrints(word, cwd).toString('utf8')).toBe(value);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('expands only the script’s own placeholders, nothing that merely starts with $', () => {
    const cwd = mkdtempSync(join(tmpdir(), 'hydra-'));
    expect(hydra({ name: 'x', value: '$MODEL_PATH' })).toBe('"$MODEL_PATH"');
    const word = hydra({ name: 'x', value: '$(touch P)' });
    expect(shellPrints(word, cwd).toString('utf8')).toBe('$(touch P)');
    expect(readdirSync(cwd)).toEqual([]);
  });
});

describe('pythonString', () => {
  it('writes repr-like literals: double quotes, escapes, plain ASCII', () => {
    expect(pythonString('abc')).toBe('"abc"');
    expect(pythonString('say "hi"')).toBe(`'say "hi"'`);
    expect(pythonString(`it's "x"`)).toBe(`"it's \\"x\\""`);
    expect(pythonString('a\nb\0\\')).toBe('"a\\nb\\x00\\\\"');
    expect(pythonString('é😀')).toBe('"\\xe9\\U0001f600"');
  });

  it('reads back as the same text in Python (fuzzed, parsed by ast.literal_eval)', () => {
    const texts = fc.sample(fc.oneof(hostileText, fc.string({ maxLength: 12, unit: 'binary' })), {
      numRuns: 400,
      seed: 7,
    });
    texts.push('', '\ud800', 'a\udfffb', '\ud83d\ude00', "'''", '"""', '\\N{DASH}', '{x}');
    const literals = texts.map(pythonString);
    for (const literal of literals) {
      // One ASCII line each: no editor, encoding or line ending can change what it means.
      expect(literal).toMatch(/^[\x20-\x7e]*$/);
    }
    const program = [
      'import ast, json, sys',
      'out = []',
      'for line in sys.stdin.read().split("\\n"):',
      '    value = ast.literal_eval(line)',
      '    assert type(value) is str',
      '    out.append([ord(c) for c in value])',
      'print(json.dumps(out))',
    ].join('\n');
    const printed = execFileSync('python3', ['-c', program], { input: literals.join('\n') });
    const codePoints = JSON.parse(printed.toString('utf8')) as number[][];
    // JavaScript's code points: a pair is one, a lone surrogate its own (as Python reads \udxxx).
    expect(codePoints).toEqual(texts.map((t) => Array.from(t, (c) => c.codePointAt(0))));
  });

  it('is what the TRL script writes for a string setting', () => {
    expect(python({ name: 'model', value: "org/it's\n$(x)" })).toBe(`"org/it's\\n$(x)"`);
  });
});
