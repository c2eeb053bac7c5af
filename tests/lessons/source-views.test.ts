/**
 * Source views: a lesson shows a named region of a file, between `// #region name` and
 * `// #endregion name`, so that edits elsewhere in the file cannot change the excerpt. The parser
 * of the markers on small texts, then the directive on the lab's real files.
 */
import { describe, expect, it } from 'vitest';
import { parseLesson } from '../../src/lessons/lesson';
import { parseRegions, regionLines, SOURCE_VIEWS } from '../../src/lessons/source-views';

const F = 'lessons/01-x/01-y/index.md';
const lesson = (body: string) =>
  ['---', 'title: T', 'goals: [g]', 'prerequisites: []', 'minutes: 5', '---', body].join('\n');

describe('parseRegions', () => {
  it('gives the lines between the markers with their file numbers, leaving out all marker lines', () => {
    const text = [
      'const a = 1;', // 1
      '// #region outer', // 2
      'function f() {', // 3
      '  // #region inner', // 4
      '  return a;', // 5
      '  // #endregion inner', // 6
      '}', // 7
      '// #endregion outer', // 8
      '', // 9
    ].join('\n');
    const regions = parseRegions('x.ts', text);
    if (typeof regions === 'string') throw new Error(regions);
    expect([...regions.keys()]).toEqual(['outer', 'inner']);
    expect(regions.get('outer')).toEqual({
      name: 'outer',
      open: 2,
      close: 8,
      lines: [
        { number: 3, text: 'function f() {' },
        { number: 5, text: '  return a;' },
        { number: 7, text: '}' },
      ],
    });
    expect(regions.get('inner')!.lines).toEqual([{ number: 5, text: '  return a;' }]);
  });

  it('reads WGSL markers and CRLF line ends alike', () => {
    const text = 'fn f() {\r\n  // #region body\r\n  let x = 1u;\r\n  // #endregion body\r\n}\r\n';
    const regions = parseRegions('k.wgsl', text);
    if (typeof regions === 'string') throw new Error(regions);
    expect(regions.get('body')!.lines).toEqual([{ number: 3, text: '  let x = 1u;' }]);
  });

  it.each([
    [
      'an unclosed region',
      ['// #region a', 'x;'],
      "x.ts:1: region 'a' is never closed (no '// #endregion a')",
    ],
    [
      'a duplicate name',
      ['// #region a', 'x;', '// #endregion a', '// #region a', 'y;', '// #endregion a'],
      "x.ts:4: region 'a' is opened twice (lines 1 and 4); names are unique per file",
    ],
    [
      'regions that cross instead of nesting',
      ['// #region a', '// #region b', 'x;', '// #endregion a', '// #endregion b'],
      "x.ts:4: '#endregion a' while region 'b' (line 2) is still open",
    ],
    ['a stray end', ['x;', '// #endregion a'], "x.ts:2: '#endregion a' but no region is open"],
    ['a marker without a name', ['// #region', 'x;'], "x.ts:1: '#region' needs one name"],
    ['a name with a space', ['// #region a b', 'x;'], "got 'a b'"],
    [
      'a region of blank lines only',
      ['// #region a', '', '  ', '// #endregion a'],
      "x.ts:1: region 'a' is empty",
    ],
  ])('refuses %s, naming the file, line and region', (_what, lines, message) => {
    const result = parseRegions('x.ts', lines.join('\n'));
    expect(typeof result).toBe('string');
    expect(result).toContain(message);
  });

  it('treats a marker-like text that is not a line comment of its own as code', () => {
    const text = ['// #region a', "const s = '// #endregion a';", '// #endregion a'].join('\n');
    const regions = parseRegions('x.ts', text);
    if (typeof regions === 'string') throw new Error(regions);
    expect(regions.get('a')!.lines).toEqual([{ number: 2, text: "const s = '// #endregion a';" }]);
  });
});

describe('the ::source directive', () => {
  it('shows a region of a real file, its markers and those of a nested region left out', () => {
    const parsed = parseLesson(
      F,
      lesson('::source{file="src/ops/group-advantages.ts" region="std-divisor" caption="c"}'),
    );
    const block = parsed.blocks[0]!;
    if (block.kind !== 'source') throw new Error(block.kind);
    expect(block).toMatchObject({ file: 'src/ops/group-advantages.ts', region: 'std-divisor' });
    expect(block.lines[0]!.text.trim()).toBe("if (g === 1 && settings.singles === 'mean0') {");
    expect(
      block.lines.some((l) => l.text.includes('#region') || l.text.includes('#endregion')),
    ).toBe(false);
    // The nested region is part of the outer one, and the numbers are the file's own.
    const inner = regionLines('src/ops/group-advantages.ts', 'group-advantages');
    if (typeof inner === 'string') throw new Error(inner);
    expect(block.lines.slice(-inner.length)).toEqual(inner);
    const file = SOURCE_VIEWS['src/ops/group-advantages.ts']!.split('\n');
    for (const line of block.lines) expect(file[line.number - 1]).toBe(line.text);
  });

  it.each([
    [
      '::source{file="src/ops/gae.ts" region="nope"}',
      "src/ops/gae.ts has no region 'nope' (its regions: recursion)",
    ],
    ['::source{file="/etc/passwd" region="a"}', "file '/etc/passwd' is not in the source-view"],
    ['::source{file="src/ops/gae.ts"}', "'source' needs the attribute 'region'"],
    [
      '::source{file="src/ops/gae.ts" region="recursion" lines="1-2"}',
      "unknown attribute 'lines' of 'source' (known: file, region, caption)",
    ],
    [
      '::kernel{file="src/ops/gae.ts" lines="1-2" first="a" last="b"}',
      '\'::kernel{file lines first last}\' is now \'::source{file="…" region="…"}\'',
    ],
  ])('refuses %j, naming the lesson line', (body, message) => {
    expect(() => parseLesson(F, lesson(body))).toThrow(`${F}:7: `);
    expect(() => parseLesson(F, lesson(body))).toThrow(message);
  });
});
