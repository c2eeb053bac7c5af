import { describe, expect, it } from 'vitest';
import { parseDirective } from '../../src/lessons/directives';
import { LessonError } from '../../src/lessons/errors';
import { parseFrontMatter } from '../../src/lessons/front-matter';
import { lessonBlocks, parseLesson } from '../../src/lessons/lesson';
import { parseLessonHead } from '../../src/lessons/lesson-head';
import { checkedValue, metricCheckPassed, parseCheck } from '../../src/lessons/checks';

const F = 'lessons/01-x/01-y/index.md';

describe('front matter', () => {
  it('reads strings, numbers, inline and block lists (golden)', () => {
    const text = [
      '---', // line 1
      'title: "Returns: and discount"', // 2
      'minutes: 12', // 3
      'goals:', // 4
      '  - first goal', // 5
      '  - 3', // 6
      'prerequisites: [a/b, "c, d"]', // 7
      '---', // 8
      'body line', // 9
    ].join('\n');
    const front = parseFrontMatter(F, text);
    expect(front.fields).toEqual({
      title: 'Returns: and discount',
      minutes: 12,
      goals: ['first goal', 3],
      prerequisites: ['a/b', 'c, d'],
    });
    expect(front.lines).toEqual({ title: 2, minutes: 3, goals: 4, prerequisites: 7 });
    expect(front.body).toBe('body line');
    expect(front.bodyLine).toBe(9);
  });

  it.each([
    ['title: x\n---', 1, "must open the file with a '---'"],
    ['---\ntitle: x', 2, 'not closed'],
    ['---\n  - orphan\n---', 2, "must follow a 'key:'"],
    ['---\ntitle x\n---', 2, "expected 'key: value'"],
    ['---\na: 1\na: 2\n---', 3, "duplicate key 'a'"],
    ['---\na: "open\n---', 2, 'unterminated " string'],
    ['---\na: [1, 2\n---', 2, "must end with ']'"],
    ['---\na: [1, , 2]\n---', 2, 'empty list item at index 1'],
    ['---\na: &anchor x\n---', 2, 'unsupported YAML syntax'],
    ['---\na: 1\n  b: 2\n---', 3, 'unexpected indentation'],
  ])('bad input %j → error at line %i', (text, line, message) => {
    const error = (() => {
      try {
        parseFrontMatter(F, text);
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(LessonError);
    expect((error as LessonError).line).toBe(line);
    expect((error as LessonError).message).toContain(`${F}:${line}:`);
    expect((error as LessonError).message).toContain(message);
  });
});

describe('directives', () => {
  it('parses attributes with escapes (golden)', () => {
    const d = parseDirective(F, 7, '::predict{question="Why \\"γ\\"?" answer="a\\\\b"}');
    expect(d).toEqual({
      name: 'predict',
      attrs: { question: 'Why "γ"?', answer: 'a\\b' },
      line: 7,
    });
    expect(parseDirective(F, 3, '::clip-plot')).toEqual({ name: 'clip-plot', attrs: {}, line: 3 });
    expect(parseDirective(F, 3, '  ::clip-plot{}  ').attrs).toEqual({});
  });

  it.each([
    ['::video{src="x"}', "unknown directive 'video'"],
    ['::widget{preset="a" colour="b"}', "unknown attribute 'colour' of 'widget'"],
    ['::widget{}', "'widget' needs the attribute 'preset'"],
    ['::widget{preset=a}', 'must be written preset="value"'],
    ['::widget{preset="a"', "is not closed by '}'"],
    ['::widget{preset="a', 'has no closing quote'],
    ['::widget{preset="a" preset="b"}', "duplicate attribute 'preset'"],
    ['::widget{preset="a"} trailing', 'unexpected text after'],
    ['::widget(preset="a")', "expected '{'"],
    ['::source{file="a" region="r" caption="\\n"}', 'may be escaped'],
  ])('bad directive %j', (text, message) => {
    expect(() => parseDirective(F, 42, text)).toThrow(`${F}:42: `);
    expect(() => parseDirective(F, 42, text)).toThrow(message);
  });
});

describe('checks', () => {
  it("judges an 'after' check only from that many values on", () => {
    const check = parseCheck('x>=0.5 after 12');
    if (typeof check === 'string' || check.kind !== 'metric') throw new Error(String(check));
    const ones = (n: number) => Array.from({ length: n }, () => 1);
    expect(metricCheckPassed(check, ones(11))).toBe(false); // window full, too early
    expect(metricCheckPassed(check, ones(12))).toBe(true);
    expect(metricCheckPassed(check, [...ones(12), 0, 0, 0, 0, 0, 0])).toBe(false); // mean 0.4
  });

  it('judges a gain check on the last 10 values against the first 5', () => {
    const check = parseCheck('r gain>=0.3');
    if (typeof check === 'string' || check.kind !== 'metric') throw new Error(String(check));
    const start = [0.2, 0.3, 0.2, 0.3, 0.25]; // mean 0.25
    const at = (level: number, n: number) => Array.from({ length: n }, () => level);
    expect(metricCheckPassed(check, [...start, ...at(0.9, 9)])).toBe(false); // 14 values: too early
    expect(metricCheckPassed(check, [...start, ...at(0.56, 10)])).toBe(true); // gain 0.31
    expect(metricCheckPassed(check, [...start, ...at(0.54, 10)])).toBe(false); // gain 0.29
    // A high level from the start is no gain: the level check would pass, this one does not.
    expect(metricCheckPassed(check, at(0.9, 40))).toBe(false);
    expect(checkedValue(check, [...start, ...at(0.56, 10)])).toBeCloseTo(0.31, 12);
    const falls = parseCheck('r gain<=-0.5');
    if (typeof falls === 'string' || falls.kind !== 'metric') throw new Error(String(falls));
    expect(metricCheckPassed(falls, [...at(0.9, 5), ...at(0.3, 10)])).toBe(true);
    expect(metricCheckPassed(falls, [...at(0.9, 5), ...at(0.5, 10)])).toBe(false);
  });

  it('parses metric and path checks (golden)', () => {
    expect(parseCheck('values/converged>=1')).toEqual({
      kind: 'metric',
      metric: 'values/converged',
      op: '>=',
      value: 1,
      after: 10, // judged once the window of 10 values is full
      gain: false,
      text: 'values/converged>=1',
    });
    expect(parseCheck('reward/strict_accuracy>=0.25 after 30')).toEqual({
      kind: 'metric',
      metric: 'reward/strict_accuracy',
      op: '>=',
      value: 0.25,
      after: 30,
      gain: false,
      text: 'reward/strict_accuracy>=0.25 after 30',
    });
    expect(parseCheck('reward/accuracy gain>=0.3')).toEqual({
      kind: 'metric',
      metric: 'reward/accuracy',
      op: '>=',
      value: 0.3,
      after: 15, // the 5 values of the start, then a window of 10 that does not overlap them
      gain: true,
      text: 'reward/accuracy gain>=0.3',
    });
    expect(parseCheck(' path <= 13 ')).toEqual({
      kind: 'path',
      op: '<=',
      value: 13,
      text: 'path <= 13',
    });
    expect(parseCheck('charts/episodic_return>-40')).toMatchObject({ op: '>', value: -40 });
  });
  it.each([
    'reward=>1',
    'reward>=',
    '>=1',
    'path<=0',
    'path<=2.5',
    'reward>=1; x',
    'reward>=1 after',
    'reward>=1 after 9', // fewer values than the window
    'reward>=1 after 2.5',
    'reward>=1 after 10001',
    'path<=13 after 20',
    'path gain<=13',
    'reward gain>=0.3 after 14', // its two windows would overlap
    'reward gains>=0.3',
  ])('refuses %j', (text) => {
    expect(typeof parseCheck(text)).toBe('string');
  });
});

const lesson = (body: string) =>
  [
    '---',
    'title: T',
    'goals: [g]',
    'prerequisites: []',
    'minutes: 5',
    '---',
    ...body.split('\n'),
  ].join('\n');

describe('lessons', () => {
  it('cuts the body into markdown and directives, lines counted from the file top', () => {
    // Front matter is lines 1–6, so the body starts at line 7.
    const parsed = parseLesson(
      F,
      lesson(
        'Text $x^2$.\n\n::widget{preset="value-iteration-gridworld" locked="theta"}\n```\n::not-a-directive\n```',
      ),
    );
    expect(parsed.id).toBe('01-x/01-y');
    expect(parsed.blocks.map((b) => [b.kind, b.line])).toEqual([
      ['markdown', 7],
      ['widget', 9],
      ['markdown', 10],
    ]);
    const widget = parsed.blocks[1]!;
    expect(widget.kind === 'widget' && widget.free).toEqual(['gamma', 'livingReward']);
    expect(widget.kind === 'widget' && widget.check.text).toBe('values/converged>=1');
    const first = parsed.blocks[0]!;
    expect(first.kind === 'markdown' && first.html).toContain('class="katex"');
    const code = parsed.blocks[2]!;
    expect(code.kind === 'markdown' && code.html).toContain('::not-a-directive');
  });

  it.each([
    ['::widget{preset="nope"}', 7, "unknown preset 'nope'"],
    [
      'text\n::widget{preset="sarsa-cliff" locked="gamma"}',
      8,
      "locked 'gamma' is not a free setting",
    ],
    ['::widget{preset="sarsa-cliff" check="x=1"}', 7, 'check must read'],
    ['a\nb\n$\\frac{$', 9, 'does not render'],
    ['::predict{question="q" answer="a"}\n::predict{question="q" answer="a"}', 7, ''],
    ['```\nno end', 8, 'not closed'],
  ])('bad lesson body %j → line %i', (body, line, message) => {
    if (message === '') {
      expect(() => parseLesson(F, lesson(body))).not.toThrow(); // distinct lines, distinct ids
      return;
    }
    expect(() => parseLesson(F, lesson(body))).toThrow(`${F}:${line}: `);
    expect(() => parseLesson(F, lesson(body))).toThrow(message);
  });

  it('the head checks the front matter only; lessonBlocks renders the body on first use, once', () => {
    const bad = parseLessonHead(F, lesson('a\nb\n$\\frac{$'));
    expect(bad.title).toBe('T');
    expect(bad.bodyLine).toBe(7);
    expect(() => lessonBlocks(bad)).toThrow(`${F}:9: `);
    expect(() => parseLessonHead(F, lesson('x').replace('minutes: 5', 'minutes: 0'))).toThrow(
      'minutes must be a number',
    );
    const good = parseLessonHead(F, lesson('Some *text*.'));
    expect(lessonBlocks(good)).toBe(lessonBlocks(good)); // rendered once
    expect(lessonBlocks(good)).toEqual(parseLesson(F, lesson('Some *text*.')).blocks);
  });

  it.each([
    ['title: ""', 2, 'title must be a non-empty string'],
    ['title: 5', 2, 'title must be a non-empty string'],
    ['minutes: 0', 5, 'minutes must be a number in (0, 600]'],
    ['goals: []', 3, 'goals must list at least one goal'],
    ['goals: x', 3, 'goals must be a list'],
    ['prerequisites: [3]', 4, 'prerequisites[0] must be a string'],
  ])('bad front matter %j', (replacement, line, message) => {
    const key = replacement.split(':')[0]!;
    const text = lesson('x')
      .split('\n')
      .map((l) => (l.startsWith(`${key}:`) ? replacement : l))
      .join('\n');
    expect(() => parseLesson(F, text)).toThrow(`${F}:${line}: ${message}`);
  });

  it('refuses unknown front-matter keys and misplaced files', () => {
    expect(() =>
      parseLesson(F, lesson('x').replace('minutes: 5', 'minutes: 5\nauthor: me')),
    ).toThrow(`${F}:6: unknown front-matter key 'author'`);
    expect(() => parseLesson('lessons/intro.md', lesson('x'))).toThrow('lessons/intro.md:1: ');
  });
});
