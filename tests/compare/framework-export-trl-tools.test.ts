/**
 * A tool task's TRL script hands the lab's tools to GRPOTrainer (tools=[...], GRPOConfig's
 * max_tool_calling_iterations from the task's call and turn budgets) and scores the final message
 * of a conversational completion. The script is run whole in Python against stand-ins for
 * datasets, trl and peft (not installed here) that record the trainer's arguments, call its tools
 * and its reward as TRL would after a tool-calling episode, and print what they got.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  frameworkExport,
  type ExportTask,
  type FrameworkArtifact,
} from '../../src/compare/framework-export';
import { loraRunExport } from '../../src/compare/lora-run-export';
import { runCatalog } from '../../src/worker/run-spec';
import { parseTrlScript, trlProblems } from './framework-snapshot';

const grpo = runCatalog().algorithms.find((a) => a.name === 'grpo')!;

function trlScript(artifact: FrameworkArtifact): string {
  if (!artifact.ok) throw new Error(artifact.reason);
  return artifact.files.find((f) => f.name.endsWith('.py'))!.text;
}

function exportOf(task: ExportTask, changes: Record<string, number | boolean | string> = {}) {
  const out = frameworkExport(grpo, { ...grpo.defaults, ...changes }, task);
  if (!out.ok) throw new Error(out.reason);
  return trlScript(out.trl);
}

/** Stand-ins for the packages the script imports: they record, call the tools and the reward. */
const STUBS: Record<string, string> = {
  'datasets.py': 'def load_dataset(*args, **kwargs):\n    return []\n',
  'peft.py': 'class LoraConfig:\n    def __init__(self, **kwargs):\n        self.kwargs = kwargs\n',
  'trl.py': [
    'import json',
    '',
    '',
    'class GRPOConfig:',
    '    def __init__(self, **kwargs):',
    '        self.kwargs = kwargs',
    '',
    '',
    'class GRPOTrainer:',
    '    def __init__(self, model, reward_funcs, args, train_dataset, tools=None, peft_config=None):',
    '        self.reward_funcs, self.args, self.tools = reward_funcs, args, tools or []',
    '',
    '    def train(self):',
    '        tools = {t.__name__: t for t in self.tools}',
    '        calls = json.loads(open("calls.json").read())',
    '        results = []',
    '        for name, kwargs in calls:',
    '            try:',
    '                results.append(str(tools[name](**kwargs)))',
    '            except ValueError:',
    '                results.append("ValueError")',
    '        # A tool-calling episode as TRL passes it: the prompt and completion as chats.',
    '        prompt = [{"role": "user", "content": "What is 347*86?"}]',
    '        call = {"type": "function", "function": {"name": "calc", "arguments": {"expression": "347*86"}}}',
    '        episode = [',
    '            {"role": "assistant", "content": "", "tool_calls": [call]},',
    '            {"role": "tool", "name": "calc", "content": "29842"},',
    '            {"role": "assistant", "content": " 29842 "},',
    '        ]',
    '        unanswered = [{"role": "assistant", "content": "", "tool_calls": [call]}]',
    '        scores = self.reward_funcs[0](',
    '            prompts=[prompt, prompt, "347*86="],',
    '            completions=[episode, unanswered, "29842"],',
    '            answer=["29842", "29842", "29842"],',
    '        )',
    '        print(json.dumps({',
    '            "tools": sorted(tools),',
    '            "iterations": self.args.kwargs.get("max_tool_calling_iterations"),',
    '            "results": results,',
    '            "scores": scores,',
    '        }))',
    '',
  ].join('\n'),
};

/** Runs `script` with the stand-ins; `calls` are (tool, kwargs) pairs for the trainer to make. */
function runScript(script: string, calls: readonly (readonly [string, Record<string, unknown>])[]) {
  const dir = mkdtempSync(join(tmpdir(), 'trl-tools-'));
  for (const [name, text] of Object.entries(STUBS)) writeFileSync(join(dir, name), text);
  writeFileSync(join(dir, 'calls.json'), JSON.stringify(calls));
  writeFileSync(join(dir, 'train.py'), script);
  const out = execFileSync('python3', ['train.py'], { cwd: dir, env: { PYTHONPATH: dir } });
  return JSON.parse(out.toString('utf8')) as {
    tools: string[];
    iterations: number | null;
    results: string[];
    scores: number[];
  };
}

describe('TRL export of a tool task', () => {
  it('gives GRPOTrainer the task’s tools and its budget, and the script runs them', () => {
    const script = exportOf({ name: 'multiply', options: { maxCalls: 3, maxTurns: 6 } });
    expect(trlProblems(script)).toEqual([]);
    expect(script).toContain('    tools=[calc],\n');
    expect(parseTrlScript(script).kwargs.get('max_tool_calling_iterations')).toBe('3');
    expect(script).toMatch(/^# note: GRPOTrainer runs calc as the lab's episodes do/m);
    expect(script).toMatch(/DATA_FILES = .*\{"prompt": \[\{"role": "user"/);
    const ran = runScript(script, [
      ['calc', { expression: '347*86' }],
      ['calc', { expression: '1/0' }],
    ]);
    expect(ran.tools).toEqual(['calc']);
    expect(ran.iterations).toBe(3);
    expect(ran.results).toEqual(['29842', 'ValueError']);
    // The final message of the episode is scored (stripped); an episode that never answered is
    // not; a plain-text completion still is.
    expect(ran.scores).toEqual([1, 0, 1]);
  });

  it('stops at the turns: the last turn is left for the answer', () => {
    const script = exportOf({ name: 'multiply', options: { maxCalls: 8, maxTurns: 2 } });
    expect(parseTrlScript(script).kwargs.get('max_tool_calling_iterations')).toBe('1');
  });

  it('offers each task its own tools: shopping its price lookup, facts its search', () => {
    for (const [task, tool, calls] of [
      ['shopping', 'price', [['price', { item: 'nothing such' }]]],
      ['facts', 'search', [['search', { query: 'zzzz qqqq' }]]],
    ] as const) {
      const script = exportOf({ name: task });
      expect(trlProblems(script)).toEqual([]);
      const ran = runScript(script, [...calls]);
      expect(ran.tools).toContain(tool);
      expect(ran.results).toEqual(['ValueError']);
    }
  });

  it('a task with its tools off, or a trainer without tools, gets none (and says why)', () => {
    const off = exportOf({ name: 'multiply', options: { useTools: false } });
    expect(off).not.toMatch(/tools=|max_tool_calling_iterations|def calc/);
    const plain = exportOf({ name: 'reverse' });
    expect(plain).not.toMatch(/tools=|max_tool_calling_iterations/);
    // The RLOO estimator exports to RLOOTrainer, which takes no tools at the pinned release.
    const rloo = exportOf({ name: 'multiply' }, { advantageEstimator: 'rloo' });
    expect(parseTrlScript(rloo).cls).toBe('RLOOConfig');
    expect(rloo).not.toMatch(/tools=|max_tool_calling_iterations/);
    expect(rloo).toMatch(
      /^# note: the lab's episodes call calc before they answer; TRL .*RLOOTrainer takes no tools/m,
    );
  });

  it('the LoRA panel’s tool-task run exports the same way, with its adapters', () => {
    const out = loraRunExport(
      {
        lr: 5e-3,
        promptsPerUpdate: 4,
        groupSize: 8,
        maxNewTokens: 48,
        task: { name: 'multiply', options: {} },
      },
      { rank: 8, alpha: 16, targets: 'all-linear', model: 'Qwen/Qwen2.5-0.5B-Instruct' },
    );
    if (!out.ok) throw new Error(out.reason);
    const script = trlScript(out.trl);
    expect(trlProblems(script)).toEqual([]);
    expect(script).toContain('    tools=[calc],\n');
    expect(script).toContain('    peft_config=peft_config,\n');
    expect(runScript(script, [['calc', { expression: '347*86' }]]).scores).toEqual([1, 0, 1]);
  });
});
