import { describe, expect, it } from 'vitest';
import {
  createToolSet,
  MAX_TOOL_ARGS_CHARS,
  MAX_TOOL_RESULT_CHARS,
  runTool,
  TOOL_NAMES,
  ToolError,
  toolDocs,
  type Tool,
} from '../../src/agents/tools';
import { clipResult, describeChar, unknownToolDetail } from '../../src/agents/tools/tool';

describe('createToolSet', () => {
  it('builds a fresh map of the named tools', () => {
    expect(TOOL_NAMES).toEqual(['calc', 'price', 'search']);
    const set = createToolSet(['search', 'calc']);
    expect([...set.keys()]).toEqual(['search', 'calc']);
    for (const [name, tool] of set) expect(tool.name).toBe(name);
    expect(createToolSet([]).size).toBe(0);
    expect(createToolSet(['calc', 'calc']).size).toBe(1); // a repeat appears once
    expect(createToolSet(['calc'])).not.toBe(createToolSet(['calc']));
  });

  it('every tool has a lowercase name and a one-line doc in the alphabet', () => {
    for (const doc of toolDocs(TOOL_NAMES)) {
      expect(doc).toMatch(/^[a-z]+\([a-z]+\): [\x20-\x40\x5b-\x7e]+$/);
    }
  });

  it.each([['calculator'], ['Calc'], [''], ['__proto__'], ['constructor']])(
    'unknown name %j → ToolError(unknown-tool) naming it and the valid ones',
    (name) => {
      let error: unknown;
      try {
        createToolSet(['calc', name]);
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(ToolError);
      const toolError = error as ToolError;
      expect(toolError.reason).toBe('unknown-tool');
      expect(toolError.tool).toBe(name);
      expect(toolError.index).toBe(1);
      expect(toolError.message).toContain(`names[1]: unknown tool ${JSON.stringify(name)}`);
      expect(toolError.message).toContain('valid: calc, price, search');
    },
  );
});

describe('runTool', () => {
  const tools = createToolSet(['calc', 'price']);

  it('returns ok with the result and the elapsed time', () => {
    const outcome = runTool(tools, 'calc', '12*34');
    expect(outcome).toMatchObject({ ok: true, text: '408' });
    expect(outcome.reason).toBeUndefined();
    expect(outcome.ms).toBeGreaterThanOrEqual(0);
  });

  it('turns a ToolError into an error outcome', () => {
    expect(runTool(tools, 'calc', '1/0')).toMatchObject({
      ok: false,
      text: 'error: division by zero at 1',
      reason: 'division-by-zero',
    });
    expect(runTool(tools, 'price', 'unicorn')).toMatchObject({
      ok: false,
      text: 'error: unknown item',
      reason: 'not-found',
    });
  });

  it('an unknown or unoffered tool → unknown-tool, listing what is offered, not echoing the name', () => {
    expect(runTool(tools, 'search', 'lake miro')).toMatchObject({
      ok: false,
      text: 'error: unknown tool (offered: calc, price)',
      reason: 'unknown-tool',
    });
    expect(runTool(tools, 'x'.repeat(100), '1').text).not.toContain('xx');
    expect(runTool(new Map(), 'calc', '1')).toMatchObject({
      ok: false,
      text: 'error: unknown tool (offered: none)',
    });
    // Map lookups: no prototype names
    expect(runTool(tools, 'constructor', '1').reason).toBe('unknown-tool');
  });

  it('names offered tools whole in the unknown-tool text, counting those that do not fit', () => {
    const three = new Map([...tools, ['search', tools.get('calc')!]]);
    expect(runTool(three, 'x', '1').text).toBe('error: unknown tool (offered: calc, price +1)');
    // Never cut mid-name, at any number of long names.
    for (let n = 1; n <= 8; n++) {
      const names = Array.from({ length: n }, (_, i) => `tool${i}${'x'.repeat(i * 3)}`);
      const text = `error: ${unknownToolDetail(names)}`;
      expect(text.length).toBeLessThanOrEqual(MAX_TOOL_RESULT_CHARS);
      const listed = /offered: (.*?)(?: \+\d+)?\)$/.exec(text)?.[1]?.split(', ') ?? [];
      for (const name of listed) expect(names).toContain(name);
    }
  });

  it('over-long args → too-long before the tool runs', () => {
    const seen: string[] = [];
    const spy: Tool = {
      name: 'spy',
      doc: 'spy(x): records that it ran',
      run: (args) => {
        seen.push(args);
        return 'ran';
      },
    };
    const set = new Map([['spy', spy]]);
    expect(runTool(set, 'spy', 'a'.repeat(MAX_TOOL_ARGS_CHARS)).ok).toBe(true); // 64: allowed
    expect(seen).toHaveLength(1);
    const outcome = runTool(set, 'spy', 'a'.repeat(MAX_TOOL_ARGS_CHARS + 1));
    expect(outcome).toMatchObject({
      ok: false,
      text: 'error: arguments longer than 64 characters',
      reason: 'too-long',
    });
    expect(seen).toHaveLength(1); // the tool did not run again
  });

  it('clips results to MAX_TOOL_RESULT_CHARS', () => {
    const long: Tool = {
      name: 'long',
      doc: 'long(): a long text',
      run: () => 'abcdefghij'.repeat(10),
    };
    const outcome = runTool(new Map([['long', long]]), 'long', '');
    expect(outcome.ok).toBe(true);
    expect(outcome.text).toBe('abcdefghij'.repeat(4) + 'abcdefgh'); // 48 characters
    expect(outcome.text).toHaveLength(MAX_TOOL_RESULT_CHARS);
    const longError: Tool = {
      name: 'bad',
      doc: 'bad(): fails at length',
      run: () => {
        throw new ToolError('bad-arguments', 'bad', 'z'.repeat(60));
      },
    };
    const failed = runTool(new Map([['bad', longError]]), 'bad', '');
    expect(failed.text).toBe(`error: ${'z'.repeat(41)}`); // 7 + 41 = 48
    expect(clipResult('short')).toBe('short');
  });

  it('rethrows an exception that is not a ToolError (a bug in the tool)', () => {
    const buggy: Tool = {
      name: 'buggy',
      doc: 'buggy(): throws a plain error',
      run: () => {
        throw new RangeError('bug');
      },
    };
    expect(() => runTool(new Map([['buggy', buggy]]), 'buggy', '')).toThrow(RangeError);
  });

  it('describeChar keeps error text in the alphabet', () => {
    expect(describeChar('a')).toBe('"a"');
    expect(describeChar(' ')).toBe('" "');
    expect(describeChar('A')).toBe('u+0041');
    expect(describeChar('"')).toBe('u+0022');
    expect(describeChar('\n')).toBe('u+000a');
    expect(describeChar('😀')).toBe('u+d83d'); // the first code unit
  });
});
