/**
 * "Take it further": a run as files a learner can run in TRL and verl, at the releases named in
 * src/ops/flavor-releases.ts — a TRL Python script (config, trainer and the task's reward
 * function) and a verl launch script (every required setting, placeholders marked) with the
 * task's reward module. A LoRA run's files carry its adapters' settings (TRL's peft_config,
 * verl's lora_rank, lora_alpha and target_modules).
 *
 * The mapping is one explicit table per algorithm (framework-export-{grpo,ppo,dpo}.ts): our field
 * → TRL argument / verl key / why there is none, in the spec's field order. Every setting with no
 * equivalent is written as a comment line
 *   # no equivalent: <field> = <value> — <why>
 * and mappings that hold only approximately get a "# note:" line.
 * tests/compare/framework-export*.test.ts check every emitted name and value against a snapshot
 * of the frameworks' own config definitions at those releases.
 */
import { isAgentTask } from '../agents/agent-task';
import { createTokenTask } from '../agents/token-task-registry';
import type { ToolName } from '../agents/tools';
import type { TokenTask } from '../envs/token-tasks/types';
import { DPO_TABLE } from './framework-export-dpo';
import { trlScript, verlFiles, type ExportFile, type ExportTools } from './framework-export-files';
import { GRPO_TABLE } from './framework-export-grpo';
import { PPO_TABLE } from './framework-export-ppo';
import { rewardCode } from './framework-export-reward-code';
import { pythonTools } from './framework-export-tools';
import type { FrameworkTable, Line } from './framework-export-table';
import { expectSettings } from '../util/json-checks';
import type { AlgorithmInfo, Settings } from './run-record';

export type { ExportFile } from './framework-export-files';

/** The tables by algorithm name (the registry's keys). */
export const FRAMEWORK_TABLES: Readonly<Record<string, FrameworkTable>> = {
  grpo: GRPO_TABLE,
  ppo: PPO_TABLE,
  dpo: DPO_TABLE,
};

/** One framework's files, or why this run has none there. */
export type FrameworkArtifact = { ok: true; files: ExportFile[] } | { ok: false; reason: string };

export type FrameworkExport =
  { ok: true; trl: FrameworkArtifact; verl: FrameworkArtifact } | { ok: false; reason: string };

/** The token task a run trains on: its name and options, as in a run spec. */
export interface ExportTask {
  name: string;
  options?: Record<string, unknown>;
}

/**
 * A run that trains LoRA adapters on a brought model (PEFT's settings): TRL gets a LoraConfig as
 * the trainer's peft_config, verl its LoRA keys; `model` (a Hub id or a path) replaces the
 * MODEL_PATH placeholder where it is known.
 */
export interface ExportLora {
  rank: number;
  alpha: number;
  /** PEFT target_modules: the projection names, or every linear layer. */
  targets: readonly string[] | 'all-linear';
  model?: string;
}

/** What one framework's rows gave: lines to set, "no equivalent" comments, notes. */
export interface Collected {
  lines: Line[];
  none: string[];
  notes: string[];
}

/**
 * The TRL and verl files for `config` on `task` (every setting of `algo`, validated by its spec;
 * a bad config throws an ImportError naming the field). Algorithms without a table give
 * { ok: false, reason }; so does a framework without a trainer for this run.
 */
export function frameworkExport(
  algo: AlgorithmInfo,
  config: Settings,
  task: ExportTask = { name: 'reverse' },
  lora?: ExportLora,
): FrameworkExport {
  const table = FRAMEWORK_TABLES[algo.name];
  if (!table) return { ok: false, reason: unsupportedReason(algo) };
  const valid = expectSettings(config, 'config', algo, true);
  const tokenTask = createTokenTask(task.name, task.options);
  const reward = rewardCode(task.name, tokenTask.answerChars, valid);
  const tools = exportTools(tokenTask);
  const context = {
    algo: algo.name,
    task: task.name,
    config: valid,
    reward,
    ...(lora ? { lora } : {}),
    ...(tools ? { tools } : {}),
  };

  const target = table.trl(valid);
  const trl: FrameworkArtifact =
    'cls' in target
      ? {
          ok: true,
          files: [
            trlScript(
              { ...context, cls: target.cls, notes: table.trlNotes },
              collect(table, algo, valid, 'trl'),
            ),
          ],
        }
      : { ok: false, reason: target.unavailable };
  const verl: FrameworkArtifact =
    'critic' in table.verl
      ? {
          ok: true,
          files: verlFiles(
            {
              ...context,
              critic: table.verl.critic,
              fixed: table.verlFixed,
              notes: table.verlNotes,
            },
            collect(table, algo, valid, 'verl'),
          ),
        }
      : { ok: false, reason: table.verl.unavailable };
  return { ok: true, trl, verl };
}

/**
 * The tools of an agent task that offers them, as TRL's GRPOTrainer takes them. An episode makes
 * one call a turn and has maxTurns turns, the last left for its answer, and at most maxCalls calls.
 */
function exportTools(task: TokenTask): ExportTools | undefined {
  if (!isAgentTask(task) || task.tools.length === 0) return undefined;
  const names = task.tools as readonly ToolName[];
  return {
    names,
    iterations: Math.min(task.env.maxCalls, task.env.maxTurns - 1),
    turns: task.env.maxTurns,
    python: pythonTools(names),
  };
}

function collect(
  table: FrameworkTable,
  algo: AlgorithmInfo,
  config: Settings,
  framework: 'trl' | 'verl',
): Collected {
  const lines: Line[] = [];
  const missing: string[] = [];
  const notes: string[] = [];
  for (const [field, spec] of Object.entries(algo.spec)) {
    const row = table.rows[field];
    if (!row)
      throw new Error(`framework-export: no ${framework} mapping for ${algo.name}.${field}`);
    const value = config[field]!;
    const out = row[framework].emit(value, config, spec);
    if ('none' in out) {
      missing.push(`# no equivalent: ${field} = ${String(value)} — ${out.none}`);
      continue;
    }
    lines.push(...out.set);
    if (out.note) notes.push(`${field}: ${out.note}`);
  }
  return { lines, none: missing, notes };
}

function unsupportedReason(algo: AlgorithmInfo): string {
  if (algo.family === 'env') {
    return `${algo.name} trains on a small environment; TRL and verl train language models (each setting's framework note names its CleanRL or gymnasium counterpart)`;
  }
  return `there is no TRL / verl export for ${algo.name} yet`;
}
