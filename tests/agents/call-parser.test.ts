import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { findAnswer, MAX_THOUGHT_CHARS, parseTurn } from '../../src/agents/call-parser';
import { SPECIAL_TOKENS } from '../../src/models/tokenizer';

describe('parseTurn: golden turns', () => {
  it.each([
    ['<call>calc(12*34)</call>', { kind: 'call', tool: 'calc', args: '12*34' }],
    ['i need a product<call>calc(12*34)</call>', { kind: 'call', tool: 'calc', args: '12*34' }],
    ['<call>calc()</call>', { kind: 'call', tool: 'calc', args: '' }], // empty args
    ['<call>calc((1+2)*3)</call>', { kind: 'call', tool: 'calc', args: '(1+2)*3' }],
    // args run from the first '(' to the last ')': inner parentheses are kept as written
    ['<call>calc(f(x)) )</call>', { kind: 'call', tool: 'calc', args: 'f(x)) ' }],
    ['<call>calc(1+(2)</call>', { kind: 'call', tool: 'calc', args: '1+(2' }],
    ['<call>price( apple )</call>', { kind: 'call', tool: 'price', args: ' apple ' }],
    [
      '<call>search(depth of lake miro)</call>\n \t',
      { kind: 'call', tool: 'search', args: 'depth of lake miro' }, // whitespace after is fine
    ],
    ['<call>nosuchtool(1)</call>', { kind: 'call', tool: 'nosuchtool', args: '1' }], // runTool judges names
    ['<call>calc(<b)</call>', { kind: 'call', tool: 'calc', args: '<b' }], // '<' alone is no tag
    ['<answer>408</answer>', { kind: 'answer', text: '408' }],
    ['so: <answer> 408 </answer>', { kind: 'answer', text: ' 408 ' }], // not trimmed
    ['<answer></answer>', { kind: 'answer', text: '' }],
    ['<answer>408</answer>\n', { kind: 'answer', text: '408' }],
    ['3 < 5 <answer>yes</answer>', { kind: 'answer', text: 'yes' }],
    [`${'t'.repeat(MAX_THOUGHT_CHARS)}<answer>1</answer>`, { kind: 'answer', text: '1' }], // 64: allowed
  ])('%j', (turn, expected) => {
    expect(parseTurn(turn)).toEqual(expected);
  });
});

describe('parseTurn: malformed turns say what is wrong', () => {
  it.each([
    ['', 'no <call> or <answer> tag'],
    ['just thinking', 'no <call> or <answer> tag'],
    ['408<eos>', '<eos> at index 3 before any <call> or <answer>'],
    ['<result>5</result>', '<result> at index 0 before any <call> or <answer>'], // no forged results
    ['</call>', '</call> at index 0 before any'],
    ['<bos><answer>1</answer>', '<bos> at index 0'],
    ['<pad><answer>1</answer>', '<pad> at index 0'],
    [
      `${'t'.repeat(MAX_THOUGHT_CHARS + 1)}<answer>1</answer>`,
      'text before <answer> is 65 characters, more than 64',
    ],
    ['<call>calc(1)', '<call> at index 0 is not closed'],
    ['<answer>5', '<answer> at index 0 is not closed'],
    ['<call>calc(1)<eos>', '<eos> at index 13 inside <call>'],
    ['<answer>5<eos>', '<eos> at index 9 inside <answer>'],
    ['<call>calc(1)</answer>', '</answer> at index 13 inside <call>'],
    ['<answer>5</call>', '</call> at index 9 inside <answer>'],
    ['<call><call>calc(1)</call>', '<call> at index 6 inside <call>'],
    ['<call>calc(<result>1</result>)</call>', '<result> at index 11 inside <call>'],
    ['<answer><answer>1</answer></answer>', '<answer> at index 8 inside <answer>'],
    [
      '<call>calc(1)</call><call>calc(2)</call>',
      '<call> at index 20 after </call>: one tag pair per turn',
    ],
    ['<answer>1</answer><eos>', '<eos> at index 18 after </answer>'],
    ['<call>calc(1)</call> and more', 'text after </call> at index 20'],
    ['<answer>1</answer>.', 'text after </answer> at index 18'],
    ['<call>(1)</call>', 'tool name at index 6 must be lowercase letters a-z'],
    ['<call> calc(1)</call>', 'tool name at index 6'],
    ['<call>Calc(1)</call>', 'tool name at index 6'],
    ['<call></call>', 'tool name at index 6'],
    ['<call>calc1(1)</call>', 'expected "(" after the tool name at index 10'],
    ['<call>calc</call>', 'expected "(" after the tool name at index 10'],
    ['<call>calc (1)</call>', 'expected "(" after the tool name at index 10'],
    ['<call>calc(1</call>', 'expected ")" right before </call> at index 12'],
    ['<call>calc(1) </call>', 'expected ")" right before </call> at index 14'],
    ['<call>calc(</call>', 'expected ")" right before </call>'],
  ])('%j → %s', (turn, reason) => {
    const action = parseTurn(turn);
    expect(action.kind).toBe('malformed');
    expect(action.kind === 'malformed' && action.reason).toContain(reason);
  });

  it('refuses a non-string without throwing', () => {
    expect(parseTurn(undefined as unknown as string).kind).toBe('malformed');
  });
});

describe('findAnswer', () => {
  it.each<[string, string | null]>([
    ['12*34=<call>calc(12*34)</call><result>408</result><answer>408</answer>', '408'],
    ['<answer>7</answer><answer>8</answer>', '7'], // the first
    ['<result><answer>9</answer></result><answer>2</answer>', '2'], // results are skipped
    ['<result>unclosed <answer>3</answer>', null], // all of it is inside a result
    ['<call>calc(1)</call><result>1</result>', null],
    ['<answer>2', null],
    ['<answer>2<eos>', null],
    ['<answer></answer>', ''],
    ['', null],
  ])('%j → %j', (transcript, expected) => {
    expect(findAnswer(transcript)).toBe(expected);
  });
});

// ---------------------------------------------------------------------------------------------

const fragments = [
  ...SPECIAL_TOKENS,
  '<',
  '>',
  '/',
  '(',
  ')',
  ' ',
  '\n',
  'calc',
  'price',
  'search',
  'a',
  'Z',
  '1',
  '*',
  '<call',
  'call>',
  'é',
  '\ud800',
];
const turnText = fc.oneof(
  fc.array(fc.constantFrom(...fragments), { maxLength: 30 }).map((parts) => parts.join('')),
  fc.string({ unit: 'binary', maxLength: 80 }),
  fc
    .tuple(
      fc.string({ maxLength: 70 }),
      fc.constantFrom('calc', 'Calc', ''),
      fc.string({ maxLength: 20 }),
    )
    .map(([thought, tool, args]) => `${thought}<call>${tool}(${args})</call>`),
  fc
    .tuple(
      fc.string({ maxLength: 70 }),
      fc.string({ maxLength: 20 }),
      fc.constantFrom('', ' ', 'x', '<eos>'),
    )
    .map(([thought, text, tail]) => `${thought}<answer>${text}</answer>${tail}`),
);

const hasSpecial = (text: string): boolean => SPECIAL_TOKENS.some((t) => text.includes(t));

describe('parseTurn: fuzz', () => {
  it('never throws, and every call or answer it returns is well-formed and round-trips', () => {
    const seen = { call: 0, answer: 0, malformed: 0 };
    fc.assert(
      fc.property(turnText, (text) => {
        const action = parseTurn(text);
        seen[action.kind]++;
        if (action.kind === 'call') {
          expect(action.tool).toMatch(/^[a-z]+$/);
          expect(hasSpecial(action.args)).toBe(false);
          expect(parseTurn(`<call>${action.tool}(${action.args})</call>`)).toEqual(action);
          expect(text.trimEnd().endsWith(`${action.tool}(${action.args})</call>`)).toBe(true);
        } else if (action.kind === 'answer') {
          expect(hasSpecial(action.text)).toBe(false);
          expect(parseTurn(`<answer>${action.text}</answer>`)).toEqual(action);
          expect(findAnswer(text)).toBe(action.text);
        } else {
          expect(action.reason.length).toBeGreaterThan(0);
        }
        expect(() => findAnswer(text)).not.toThrow();
      }),
      { numRuns: 6000 },
    );
    for (const count of Object.values(seen)) expect(count).toBeGreaterThan(100);
  });

  it('runs in linear time on 10,000-character adversarial turns', () => {
    const n = 10_000;
    const inputs = [
      '<'.repeat(n),
      '<call>'.repeat(n / 6),
      '</'.repeat(n / 2),
      `<call>calc${'('.repeat(n)}</call>`,
      `<call>calc(${')'.repeat(n)}</call>`,
      `<call>${'a'.repeat(n)}(1)</call>`,
      `${'<answe'.repeat(n / 6)}<answer>1</answer>`,
      `<answer>${'<result'.repeat(n / 7)}</answer>`,
      `<call>calc(1)</call>${' '.repeat(n)}`,
      `${'<result>x</result>'.repeat(n / 18)}<answer>1</answer>`,
      'x'.repeat(n),
    ];
    for (const text of inputs) {
      expect(parseTurn(text).kind).toBeTypeOf('string');
      expect(() => findAnswer(text)).not.toThrow();
    }
  });

  it('reads a 200,000-character turn (a backtracking scanner would not finish)', () => {
    const text = `<call>calc(${'(<'.repeat(100_000)}</call>`;
    expect(parseTurn(text).kind).toBe('malformed');
  });
});
