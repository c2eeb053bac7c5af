/**
 * The files of a framework export: the TRL script (imports, the task's reward code, the config,
 * the trainer) and verl's launch script plus reward module. The settings come from the tables
 * (framework-export.ts collects them); this file adds what a run needs to start — the trainer
 * call, the model and data (clearly marked placeholders), verl's required keys — and prints
 * values as Python / Hydra.
 */
import { FLAVOR_RELEASES } from '../ops/flavor-releases';
import type { Collected, ExportLora } from './framework-export';
import type { RewardCode } from './framework-export-reward-code';
import { TRL_CLASSES, type Line, type TrlClass } from './framework-export-table';
import {
  VERL_FINAL_ANSWER,
  verlToolFiles,
  verlToolLines,
  verlToolNotes,
  verlToolShellLines,
} from './framework-export-verl-tools';
import { pythonString } from './python-literal';
import type { Settings } from './run-record';
import { shellQuote } from './shell-quote';

export interface ExportFile {
  name: string;
  text: string;
}

interface Context {
  algo: string;
  task: string;
  config: Settings;
  reward: RewardCode;
  lora?: ExportLora;
  tools?: ExportTools;
}

/**
 * The tools an agent task offers, for TRL's GRPOTrainer(tools=...): their Python definitions
 * (framework-export-tools.ts) and the tool-calling turns an episode may take.
 */
export interface ExportTools {
  names: readonly string[];
  /** max_tool_calling_iterations: the lab's call budget, within its turns (one call a turn). */
  iterations: number;
  /** The lab's turns an episode may take: every assistant message, the answer's included. */
  turns: number;
  python: { imports: string[]; body: string };
}

/** MODEL_PATH's line: the model where the run names it, else a marked placeholder. */
function modelPathLine(lora: ExportLora | undefined, python: boolean): string {
  if (lora?.model !== undefined) {
    return python
      ? `MODEL_PATH = ${pythonString(lora.model)}  # the model the adapters were trained on`
      : `MODEL_PATH="\${MODEL_PATH:-${lora.model.replace(/[^\w./-]/g, '')}}"`;
  }
  return python
    ? 'MODEL_PATH = "MODEL_PATH"  # placeholder: a Hugging Face causal LM (name or local path)'
    : 'MODEL_PATH="${MODEL_PATH:?placeholder: a Hugging Face causal LM (name or local path)}"';
}

/** PEFT's LoraConfig for TRL's trainer (peft_config), as the lab's adapters are set. */
function peftConfigLines(lora: ExportLora): string[] {
  const targets =
    lora.targets === 'all-linear'
      ? pythonString('all-linear')
      : `[${lora.targets.map((t) => pythonString(t)).join(', ')}]`;
  return [
    '',
    '# The adapters as the lab trains them: PEFT LoRA, B zero at init, scaled by lora_alpha / r.',
    'peft_config = LoraConfig(',
    `    r=${lora.rank},`,
    `    lora_alpha=${lora.alpha},`,
    `    target_modules=${targets},`,
    '    lora_dropout=0.0,',
    '    bias="none",',
    '    task_type="CAUSAL_LM",',
    ')',
  ];
}

const TRL = FLAVOR_RELEASES.trl;
const VERL = FLAVOR_RELEASES.verl;
const short = (commit: string) => commit.slice(0, 7);

const DATA_NOTE =
  'one JSON object per line: {"prompt": ..., "answer": ...}, prompts and reference answers of the task';
const CHAT_DATA_NOTE =
  'one JSON object per line: {"prompt": [{"role": "user", "content": ...}], "answer": ...}, the questions as chats (TRL renders them with the chat template and the tools) and their reference answers';

// ——— TRL ———

/** The reward functions and weights a GRPO / RLOO trainer gets for this config. */
function trlRewardFuncs(config: Settings): { funcs: string[]; weights: number[] } {
  const funcs = ['lab_reward_fn'];
  const weights = [1];
  if (config.overlongEnable) {
    funcs.push(
      `get_soft_overlong_punishment(max_completion_len=${Number(config.overlongMaxLength)}, soft_punish_cache=${Number(config.overlongBuffer)})`,
    );
    weights.push(Number(config.overlongPenaltyFactor));
  }
  return { funcs, weights };
}

/** Whether TRL's trainer for `cls` runs `tools` (GRPOTrainer takes tools; RLOO and PPO do not). */
function trlRunsTools(cls: TrlClass, tools: ExportTools | undefined): tools is ExportTools {
  return tools !== undefined && cls === 'GRPOConfig';
}

function trainerCall(
  cls: TrlClass,
  config: Settings,
  tools?: ExportTools,
): { imports: string[]; code: string[] } {
  const trainer = cls.replace('Config', 'Trainer');
  if (cls === 'PPOConfig') {
    return {
      imports: [
        'from transformers import AutoModelForCausalLM, AutoModelForSequenceClassification, AutoTokenizer',
      ],
      code: [
        'tokenizer = AutoTokenizer.from_pretrained(MODEL_PATH)',
        'dataset = load_dataset("json", data_files=DATA_FILES, split="train")',
        'dataset = dataset.map(lambda row: tokenizer(row["prompt"]), remove_columns=dataset.column_names)',
        `trainer = ${trainer}(`,
        '    args=config,',
        '    processing_class=tokenizer,',
        '    model=AutoModelForCausalLM.from_pretrained(MODEL_PATH),',
        '    ref_model=AutoModelForCausalLM.from_pretrained(MODEL_PATH),',
        '    reward_model=AutoModelForSequenceClassification.from_pretrained(REWARD_MODEL_PATH, num_labels=1),',
        '    value_model=AutoModelForSequenceClassification.from_pretrained(MODEL_PATH, num_labels=1),',
        '    train_dataset=dataset,',
        ')',
      ],
    };
  }
  if (cls === 'DPOConfig') {
    return {
      imports: ['from datasets import Dataset'],
      code: [
        '',
        'def make_pairs(prompt, answer, completions):',
        '    """Pairs each verified completion with a failed one, as the lab does (up to K / 2 pairs)."""',
        '    good = [c for c in completions if lab_reward(prompt, answer, c)["acc"] == 1.0]',
        '    bad = [c for c in completions if lab_reward(prompt, answer, c)["acc"] != 1.0]',
        '    return [{"prompt": prompt, "chosen": g, "rejected": b} for g, b in zip(good, bad)]',
        '',
        '',
        `# SAMPLES_FILE: for each prompt, ${Number(config.samplesPerPrompt)} completions sampled from the policy at`,
        `# temperature ${Number(config.temperature)} with at most ${Number(config.maxNewTokens)} new tokens:`,
        '# {"prompt": ..., "answer": ..., "completions": [...]} per line.',
        'samples = load_dataset("json", data_files=SAMPLES_FILE, split="train")',
        'pairs = [p for row in samples for p in make_pairs(row["prompt"], row["answer"], row["completions"])]',
        `trainer = ${trainer}(model=MODEL_PATH, args=config, train_dataset=Dataset.from_list(pairs))`,
      ],
    };
  }
  const { funcs } = trlRewardFuncs(config);
  return {
    imports: config.overlongEnable ? ['from trl.rewards import get_soft_overlong_punishment'] : [],
    code: [
      '',
      'def _text(value):',
      '    """A prompt or completion as text: a string as it is; a chat (TRL\'s conversational',
      '    format, and every completion that called tools) by its last message, the final answer."""',
      '    if isinstance(value, list):',
      '        return str(value[-1].get("content") or "") if value else ""',
      '    return value',
      '',
      '',
      'def lab_reward_fn(prompts, completions, answer, **kwargs):',
      '    return [lab_reward(_text(p), a, _text(c))["score"] for p, a, c in zip(prompts, answer, completions)]',
      '',
      '',
      `trainer = ${trainer}(`,
      '    model=MODEL_PATH,',
      `    reward_funcs=[${funcs.join(', ')}],`,
      ...(trlRunsTools(cls, tools) ? [`    tools=[${tools.names.join(', ')}],`] : []),
      '    args=config,',
      '    train_dataset=load_dataset("json", data_files=DATA_FILES, split="train"),',
      ')',
    ],
  };
}

/** What a TRL script of a tool task says of its tools (or that its trainer cannot run them). */
function toolNotes(cls: TrlClass, tools: ExportTools): string[] {
  const names = tools.names.join(', ');
  if (!trlRunsTools(cls, tools)) {
    return [
      `the lab's episodes call ${names} before they answer; TRL ${TRL.release}'s ${cls.replace('Config', 'Trainer')} takes no tools, so here a completion is one turn, scored on its final answer`,
    ];
  }
  return [
    `GRPOTrainer runs ${names} as the lab's episodes do: through the model's chat template (a tool-calling chat model; transformers >= 5 and jmespath), results in tool messages, the reward read from the last message`,
    'max_tool_calling_iterations counts tool-calling turns; the lab allows one call a turn and answers a call past its budget with an error, where TRL stops generating',
  ];
}

/** The TRL script: config from the table's lines, trainer, reward function. */
export function trlScript(
  context: Context & { cls: TrlClass; notes: readonly string[] },
  trl: Collected,
): ExportFile {
  const { cls, config, tools } = context;
  const module = TRL_CLASSES[cls];
  const trainer = cls.replace('Config', 'Trainer');
  const call = trainerCall(cls, config, tools);
  const withTools = trlRunsTools(cls, tools);
  const lines: Line[] = [
    { name: 'output_dir', value: `agent-rl-lab-${context.algo}-${context.task}` },
    ...trl.lines,
    ...(withTools ? [{ name: 'max_tool_calling_iterations', value: tools.iterations }] : []),
  ];
  if (cls === 'GRPOConfig' || cls === 'RLOOConfig') {
    const { weights } = trlRewardFuncs(config);
    const list = weights.map((w) => python({ name: '', value: w, float: true })).join(', ');
    lines.push({ name: 'reward_weights', value: `[${list}]`, raw: true });
  }
  const placeholders = [
    modelPathLine(context.lora, true),
    ...(cls === 'PPOConfig'
      ? [
          'REWARD_MODEL_PATH = "REWARD_MODEL_PATH"  # placeholder: a sequence classifier (num_labels=1) trained on lab_reward scores',
        ]
      : []),
    cls === 'DPOConfig'
      ? 'SAMPLES_FILE = "SAMPLES_FILE.jsonl"  # placeholder: see below'
      : `DATA_FILES = "DATA_FILES.jsonl"  # placeholder: ${withTools ? CHAT_DATA_NOTE : DATA_NOTE}`,
  ];
  const { lora } = context;
  // The trainer call gets the adapters' config as its last argument.
  const code = lora ? withPeftConfig(call.code) : call.code;
  const text = [
    `# Agent RL Lab: a ${oneLine(context.algo)} run${lora ? ' with LoRA adapters' : ''} on the '${oneLine(context.task)}' task for TRL ${TRL.release} (${short(TRL.commit)}).`,
    '# Placeholders to fill in before running: the upper-case paths below.',
    ...(withTools
      ? [...new Set([...context.reward.imports, ...tools.python.imports])].sort()
      : context.reward.imports),
    'from datasets import load_dataset',
    `from ${module} import ${cls}, ${trainer}`,
    ...call.imports,
    ...(lora ? ['from peft import LoraConfig'] : []),
    '',
    ...placeholders,
    '',
    context.reward.body,
    '',
    '',
    ...(withTools
      ? [
          "# The lab's tools (src/agents/tools/), offered to the model; TRL runs them on its calls.",
          tools.python.body,
          '',
          '',
        ]
      : []),
    `config = ${cls}(`,
    ...lines.map((l) => `    ${l.name}=${python(l)},`),
    ')',
    ...trl.none,
    ...[...context.notes, ...trl.notes, ...(tools ? toolNotes(cls, tools) : [])].map(
      (n) => `# note: ${n}`,
    ),
    ...(lora ? peftConfigLines(lora) : []),
    ...code,
    'trainer.train()',
    '',
  ];
  return { name: `train_trl_${context.algo}.py`, text: text.join('\n') };
}

/** The trainer call with `peft_config=peft_config` before its closing parenthesis. */
function withPeftConfig(code: readonly string[]): string[] {
  const out = [...code];
  const open = out.findIndex((line) => /^trainer = \w+\($/.test(line));
  const close = out.indexOf(')', open);
  if (open >= 0 && close > open) {
    out.splice(close, 0, '    peft_config=peft_config,');
    return out;
  }
  // A one-line call: the argument goes before its last parenthesis.
  const one = out.findIndex((line) => /^trainer = \w+\(.*\)$/.test(line));
  if (one < 0) throw new Error('framework-export: no trainer call to give peft_config');
  out[one] = `${out[one]!.slice(0, -1)}, peft_config=peft_config)`;
  return out;
}

// ——— verl ———

/** A micro-batch that divides the mini-batch (verl checks it) and fits a small GPU. */
function microBatch(miniBatchRows: number): number {
  let a = miniBatchRows;
  let b = 8;
  while (b) [a, b] = [b, a % b];
  return a;
}

/** verl's settings that a run needs to start, beyond the run's own: model, engine, data, sizes. */
function verlRequired(context: Context & { critic: boolean }, trainLines: readonly Line[]): Line[] {
  const find = (name: string) => trainLines.find((l) => l.name === name)?.value;
  const groupSize = Number(find('actor_rollout_ref.rollout.n') ?? 1);
  const mini = Number(
    find('actor_rollout_ref.actor.ppo_mini_batch_size') ?? find('data.train_batch_size'),
  );
  const micro = microBatch(mini * groupSize);
  const lines: Line[] = [
    { name: 'data.train_files', value: '$TRAIN_FILES' },
    { name: 'data.val_files', value: '$VAL_FILES' },
    { name: 'actor_rollout_ref.model.path', value: '$MODEL_PATH' },
    { name: 'actor_rollout_ref.rollout.name', value: '$ROLLOUT_ENGINE' },
    { name: 'actor_rollout_ref.rollout.tensor_model_parallel_size', value: 1 },
    { name: 'actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu', value: micro },
    { name: 'actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu', value: micro },
    { name: 'actor_rollout_ref.ref.log_prob_micro_batch_size_per_gpu', value: micro },
  ];
  if (context.lora) {
    const { rank, alpha, targets } = context.lora;
    lines.push(
      { name: 'actor_rollout_ref.model.lora_rank', value: rank },
      { name: 'actor_rollout_ref.model.lora_alpha', value: alpha },
      {
        name: 'actor_rollout_ref.model.target_modules',
        value: targets === 'all-linear' ? 'all-linear' : `[${targets.join(',')}]`,
      },
    );
  }
  if (context.critic) {
    lines.push(
      { name: 'critic.model.path', value: '$MODEL_PATH' },
      { name: 'critic.ppo_micro_batch_size_per_gpu', value: micro },
    );
  }
  if (Number(context.config.rewardModelWeight ?? 0) > 0) {
    lines.push(
      { name: 'reward.reward_model.model_path', value: '$REWARD_MODEL_PATH' },
      { name: 'reward.reward_model.rollout.name', value: '$ROLLOUT_ENGINE' },
    );
  }
  lines.push(
    { name: 'reward.custom_reward_function.path', value: 'lab_reward.py' },
    { name: 'reward.custom_reward_function.name', value: 'compute_score' },
    { name: 'trainer.n_gpus_per_node', value: 1 },
    { name: 'trainer.nnodes', value: 1 },
    { name: 'trainer.logger', value: '[console]' },
    { name: 'trainer.project_name', value: 'agent-rl-lab' },
    { name: 'trainer.experiment_name', value: `${context.algo}-${context.task}` },
  );
  return lines;
}

/** verl's launch script and the reward module it loads. */
export function verlFiles(
  context: Context & { critic: boolean; fixed: readonly Line[]; notes: readonly string[] },
  verl: Collected,
): ExportFile[] {
  const { tools } = context;
  const overrides = [...context.fixed, ...verl.lines, ...(tools ? verlToolLines(tools) : [])];
  const all = [...verlRequired(context, overrides), ...overrides];
  const command = [
    'python3 -m verl.trainer.main_ppo',
    ...all.map((l) => `${l.added ? '+' : ''}${l.name}=${hydra(l)}`),
  ];
  const text = [
    '#!/usr/bin/env bash',
    `# Agent RL Lab: a ${oneLine(context.algo)} run${context.lora ? ' with LoRA adapters' : ''} on the '${oneLine(context.task)}' task for verl ${VERL.release} (${short(VERL.commit)}).`,
    ...verl.none,
    ...[...context.notes, ...verl.notes, ...(tools ? verlToolNotes(tools) : [])].map(
      (n) => `# note: ${n}`,
    ),
    'set -euo pipefail',
    '# Placeholders: set these before running.',
    modelPathLine(context.lora, false),
    `TRAIN_FILES="\${TRAIN_FILES:?placeholder: parquet with prompt${tools ? ' (the question as a chat)' : ''}, reward_model.ground_truth (the answer), extra_info.prompt (the lab prompt)}"`,
    'VAL_FILES="${VAL_FILES:-$TRAIN_FILES}"',
    ...(Number(context.config.rewardModelWeight ?? 0) > 0
      ? ['REWARD_MODEL_PATH="${REWARD_MODEL_PATH:?placeholder: the trained reward model}"']
      : []),
    'ROLLOUT_ENGINE="${ROLLOUT_ENGINE:-vllm}"  # placeholder: vllm, sglang or trtllm',
    ...(tools ? verlToolShellLines() : []),
    command.map((line, i) => (i === 0 ? line : `    ${line}`)).join(' \\\n'),
    '',
  ];
  const reward = [
    `# Custom reward function for verl ${VERL.release}: reward.custom_reward_function.path=lab_reward.py`,
    ...[...new Set([...context.reward.imports, ...(tools ? ['import re'] : [])])].sort(),
    '',
    context.reward.body,
    '',
    '',
    ...(tools ? [VERL_FINAL_ANSWER, '', ''] : []),
    'def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):',
    '    """ground_truth is the task\'s reference answer; extra_info["prompt"] the lab prompt."""',
    '    prompt = (extra_info or {}).get("prompt", "")',
    `    return lab_reward(prompt, ground_truth, ${tools ? '_final_answer(solution_str)' : 'solution_str'})`,
    '',
  ];
  return [
    { name: `run_verl_${context.algo}.sh`, text: text.join('\n') },
    { name: 'lab_reward.py', text: reward.join('\n') },
    ...(tools ? verlToolFiles(tools, VERL.release) : []),
  ];
}

// ——— Values ———

/** Text for a `#` comment (Python and shell): a line break or control character would end it. */
function oneLine(text: string): string {
  const breaks = (code: number) =>
    code < 0x20 || code === 0x7f || code === 0x2028 || code === 0x2029;
  return Array.from(text, (c) => (breaks(c.codePointAt(0)!) ? ' ' : c)).join('');
}

function numberText(value: number, float: boolean | undefined): string {
  const text = String(value);
  return float && /^-?\d+$/.test(text) ? `${text}.0` : text;
}

/** A value as Python source. */
export function python(line: Line): string {
  const { value } = line;
  if (line.raw) return String(value);
  if (value === null) return 'None';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return numberText(value, line.float);
  return pythonString(value);
}

/** A script variable the launch script sets itself ($MODEL_PATH): expanded, in double quotes. */
const PLACEHOLDER = /^\$[A-Z_][A-Z0-9_]*$/;

/**
 * A value as a Hydra override in a bash command: the script's own placeholders ($MODEL_PATH) in
 * double quotes so they expand; any other text (a model id, a path, a name) through shellQuote,
 * so the shell passes it on exactly and runs nothing in it ($(…), backticks, quotes).
 */
export function hydra(line: Line): string {
  const { value } = line;
  if (value === null) return 'null';
  if (typeof value === 'boolean') return value ? 'True' : 'False';
  if (typeof value === 'number') return numberText(value, line.float);
  if (PLACEHOLDER.test(value)) return `"${value}"`;
  return shellQuote(value);
}
