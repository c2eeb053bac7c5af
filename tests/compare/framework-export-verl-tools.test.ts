/**
 * A tool task's verl export: the launch script turns on verl's tool agent loop with the task's
 * turns, and lab_tools.py / lab_tools.yaml give it the lab's tools. The files run in Python
 * against stand-ins for verl's BaseTool, ToolResponse and tool schema (verl is not installed
 * here), loaded as verl's tool registry loads them: every call's text must be what the lab's own
 * episode shows its model for the same arguments (chatToolArgs, then runTool), and the reward must
 * score the last assistant message of a decoded multi-turn response.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { chatToolArgs } from '../../src/agents/chat-tools';
import { createToolSet, runTool } from '../../src/agents/tools';
import { frameworkExport, type ExportTask } from '../../src/compare/framework-export';
import type { ExportFile } from '../../src/compare/framework-export-files';
import { runCatalog } from '../../src/worker/run-spec';
import { parseVerlCommand, verlProblems } from './framework-snapshot';

const grpo = runCatalog().algorithms.find((a) => a.name === 'grpo')!;

function verlFilesOf(task: ExportTask): ExportFile[] {
  const out = frameworkExport(grpo, grpo.defaults, task);
  if (!out.ok || !out.verl.ok) throw new Error('no verl export');
  return out.verl.files;
}

const byName = (files: readonly ExportFile[], name: string) =>
  files.find((f) => f.name === name)?.text;

/** verl's modules the files import, as small stand-ins. */
const STUBS: Record<string, string> = {
  'verl/__init__.py': '',
  'verl/tools/__init__.py': '',
  'verl/tools/schemas.py': [
    'class ToolResponse:',
    '    def __init__(self, text=None):',
    '        self.text = text',
    '',
    '',
    'class _Function:',
    '    def __init__(self, spec):',
    '        self.name = spec["name"]',
    '        self.spec = spec',
    '',
    '',
    'class OpenAIFunctionToolSchema:',
    '    def __init__(self, data):',
    '        assert data["type"] == "function"',
    '        self.function = _Function(data["function"])',
    '',
    '    @classmethod',
    '    def model_validate(cls, data):',
    '        return cls(data)',
    '',
  ].join('\n'),
  'verl/tools/base_tool.py': [
    'class BaseTool:',
    '    def __init__(self, config, tool_schema):',
    '        self.config = config',
    '        self.tool_schema = tool_schema',
    '        self.name = tool_schema.function.name',
    '',
  ].join('\n'),
};

/**
 * Loads the tool config as verl does (class by module path, native type, schema validated), runs
 * `calls` ([tool, arguments]) through each tool's execute(), and scores `responses` with
 * lab_reward.compute_score against `answer`.
 */
const HARNESS = `import asyncio, importlib, json, sys
config = json.loads("".join(l for l in open("lab_tools.yaml") if not l.startswith("#")))
from verl.tools.schemas import OpenAIFunctionToolSchema
tools = {}
for entry in config["tools"]:
    module, cls = entry["class_name"].rsplit(".", 1)
    assert entry["config"]["type"] == "native"
    tool = getattr(importlib.import_module(module), cls)(
        config=entry["config"], tool_schema=OpenAIFunctionToolSchema.model_validate(entry["tool_schema"]))
    tools[tool.name] = tool
job = json.load(sys.stdin)
results = []
for name, arguments in job["calls"]:
    response, reward, metrics = asyncio.run(tools[name].execute("episode-1", arguments))
    results.append([response.text, reward])
import lab_reward
scores = [lab_reward.compute_score("lab", r, job["answer"], {"prompt": job["prompt"]})["score"]
          for r in job["responses"]]
print(json.dumps({"tools": sorted(tools), "schemas": {n: t.tool_schema.function.spec for n, t in tools.items()},
                  "results": results, "scores": scores}))
`;

interface Ran {
  tools: string[];
  schemas: Record<string, { parameters: { required: string[] } }>;
  results: [string, number][];
  scores: number[];
}

function runFiles(
  files: readonly ExportFile[],
  job: {
    calls: [string, unknown][];
    responses: string[];
    answer: string;
    prompt: string;
  },
): Ran {
  const dir = mkdtempSync(join(tmpdir(), 'verl-tools-'));
  mkdirSync(join(dir, 'verl', 'tools'), { recursive: true });
  for (const [name, text] of Object.entries(STUBS)) writeFileSync(join(dir, name), text);
  for (const file of files) writeFileSync(join(dir, file.name), file.text);
  const out = execFileSync('python3', ['-c', HARNESS], {
    cwd: dir,
    env: { PYTHONPATH: dir },
    input: JSON.stringify(job),
  });
  return JSON.parse(out.toString('utf8')) as Ran;
}

/** What the lab's chat episode shows its model for a call (chat-episode.ts's runCall). */
function labText(tools: readonly string[], name: string, args: Record<string, unknown>): string {
  const read = chatToolArgs(name, args);
  return read.ok ? runTool(createToolSet(tools), name, read.text).text : read.error;
}

describe('verl export of a tool task', () => {
  it('turns on the tool agent loop with the task’s turns, one call a turn', () => {
    const files = verlFilesOf({ name: 'multiply', options: { maxCalls: 2, maxTurns: 5 } });
    expect(files.map((f) => f.name)).toEqual([
      'run_verl_grpo.sh',
      'lab_reward.py',
      'lab_tools.py',
      'lab_tools.yaml',
    ]);
    const script = byName(files, 'run_verl_grpo.sh')!;
    expect(verlProblems(script)).toEqual([]);
    const set = new Map(parseVerlCommand(script).map((o) => [o.key, o.value]));
    expect(set.get('actor_rollout_ref.rollout.multi_turn.enable')).toBe('True');
    expect(set.get('actor_rollout_ref.rollout.multi_turn.max_assistant_turns')).toBe('5');
    expect(set.get('actor_rollout_ref.rollout.multi_turn.max_parallel_calls')).toBe('1');
    expect(set.get('actor_rollout_ref.rollout.multi_turn.tool_config_path')).toBe('$TOOL_CONFIG');
    expect(set.get('actor_rollout_ref.rollout.agent.default_agent_loop')).toBe('tool_agent');
    expect(script).toContain('TOOL_CONFIG="${TOOL_CONFIG:-$PWD/lab_tools.yaml}"');
    // A budget of 2 calls in 5 turns binds; verl has none, and the script says so.
    expect(script).toMatch(/^# note: the lab answers a call past its budget of 2 with an error/m);
    const unbound = byName(
      verlFilesOf({ name: 'multiply', options: { maxCalls: 4, maxTurns: 5 } }),
      'run_verl_grpo.sh',
    )!;
    expect(unbound).not.toMatch(/call past its budget/);
  });

  it('runs the lab’s calculator through LabTool with the lab’s results and error texts', () => {
    const files = verlFilesOf({ name: 'multiply' });
    const calls: [string, Record<string, unknown>][] = [
      ['calc', { expression: '347*86' }],
      ['calc', { expression: '1/0' }],
      ['calc', { expression: '(2+3' }],
      ['calc', { expression: 12.5 }],
      ['calc', { expr: '2+2' }],
      ['calc', {}],
      ['calc', { expression: true }],
      ['calc', { expression: '9'.repeat(80) }],
    ];
    const ran = runFiles(files, { calls, responses: [], answer: '', prompt: '' });
    expect(ran.tools).toEqual(['calc']);
    expect(ran.schemas.calc!.parameters.required).toEqual(['expression']);
    const expected = calls.map(([name, args]) => [labText(['calc'], name, args), 0]);
    expect(ran.results).toEqual(expected);
    // The cases above reach the lab's result, its tool errors and its argument errors.
    expect(expected[0]![0]).toBe('29842');
    expect(expected.filter(([text]) => String(text).startsWith('error: '))).toHaveLength(6);
  });

  it('offers shopping its price lookup and facts its search, as the lab answers them', () => {
    for (const [task, tool, args] of [
      ['shopping', 'price', [{ item: 'candle' }, { item: 'nothing such' }, { item: '  candle ' }]],
      ['facts', 'search', [{ query: 'how deep is lake miro' }, { query: 'zzzz qqqq' }]],
    ] as const) {
      const calls = args.map((a) => [tool, a] as [string, Record<string, unknown>]);
      const ran = runFiles(verlFilesOf({ name: task }), {
        calls,
        responses: [],
        answer: '',
        prompt: '',
      });
      expect(ran.tools).toContain(tool);
      expect(ran.results).toEqual(calls.map(([n, a]) => [labText([tool], n, a), 0]));
    }
  });

  it('scores the last assistant message of a decoded multi-turn response', () => {
    const call =
      '<tool_call>\n{"name": "calc", "arguments": {"expression": "347*86"}}\n</tool_call>';
    const result = '<tool_response>\n29842\n</tool_response>';
    const responses = [
      // Special tokens skipped (verl's default decode) and kept.
      `${call}\nuser\n${result}\nassistant\n29842`,
      `${call}<|im_end|>\n<|im_start|>user\n${result}<|im_end|>\n<|im_start|>assistant\n29842<|im_end|>`,
      // No call: the whole response is the answer.
      ' 29842 ',
      // The turns ran out after a tool result, or on a call: no answer.
      `${call}\nuser\n${result}\nassistant\n`,
      `${call}\nuser\n${result}\nassistant\n${call}`,
      // A wrong answer after the call.
      `${call}\nuser\n${result}\nassistant\n29843`,
    ];
    const ran = runFiles(verlFilesOf({ name: 'multiply' }), {
      calls: [],
      responses,
      answer: '29842',
      prompt: '347*86=',
    });
    expect(ran.scores).toEqual([1, 1, 1, 0, 0, 0]);
  });

  it('a task without tools, or with them off, exports no tool files and no multi-turn keys', () => {
    for (const task of [
      { name: 'reverse' },
      { name: 'multiply', options: { useTools: false } },
    ] as ExportTask[]) {
      const files = verlFilesOf(task);
      expect(files.map((f) => f.name)).toEqual(['run_verl_grpo.sh', 'lab_reward.py']);
      expect(byName(files, 'run_verl_grpo.sh')).not.toMatch(/multi_turn|tool_agent|TOOL_CONFIG/);
      expect(byName(files, 'lab_reward.py')).not.toMatch(/_final_answer/);
    }
  });
});
