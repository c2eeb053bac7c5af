/**
 * A LoRA run's framework export (src/compare/lora-run-export.ts): the TRL script gives the trainer
 * PEFT's LoraConfig as peft_config with the run's rank, alpha and target modules, names the model
 * it trained, and still passes the checks against TRL's config classes at the pinned release; the
 * verl command sets the adapters' keys that verl's trainer config declares, and passes its checks;
 * Python compiles the script. Without LoRA the export has none of it.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { FrameworkArtifact } from '../../src/compare/framework-export';
import { loraRunExport } from '../../src/compare/lora-run-export';
import {
  parseVerlCommand,
  shellDefault,
  snapshot,
  trlProblems,
  verlProblems,
} from './framework-snapshot';

const RUN = {
  lr: 5e-3,
  promptsPerUpdate: 16,
  groupSize: 8,
  maxNewTokens: 8,
  task: { name: 'addition', options: { minDigits: 1, maxDigits: 2, reverseAnswer: true } },
};

function text(artifact: FrameworkArtifact, suffix: string): string {
  if (!artifact.ok) throw new Error(artifact.reason);
  return artifact.files.find((f) => f.name.endsWith(suffix))!.text;
}

describe('loraRunExport', () => {
  const out = loraRunExport(RUN, {
    rank: 8,
    alpha: 16,
    targets: 'all-linear',
    model: 'HuggingFaceTB/SmolLM2-135M-Instruct',
  });
  if (!out.ok) throw new Error(out.reason);
  const trl = text(out.trl, '.py');
  const verl = text(out.verl, '.sh');

  it('TRL: a LoraConfig given to the trainer as peft_config, the model named', () => {
    expect(trl).toContain('from peft import LoraConfig');
    expect(trl).toMatch(
      /peft_config = LoraConfig\(\n {4}r=8,\n {4}lora_alpha=16,\n {4}target_modules="all-linear",\n {4}lora_dropout=0\.0,\n {4}bias="none",\n {4}task_type="CAUSAL_LM",\n\)/,
    );
    expect(trl).toMatch(/trainer = GRPOTrainer\(\n(?: {4}.*\n)* {4}peft_config=peft_config,\n\)/);
    expect(trl).toContain('MODEL_PATH = "HuggingFaceTB/SmolLM2-135M-Instruct"');
    expect(trl).toMatch(/^ {4}learning_rate=0\.005,$/m);
    expect(trl).toMatch(/^ {4}num_generations=8,$/m);
    expect(trlProblems(trl)).toEqual([]);
  });

  it('verl: the LoRA keys its trainer config declares, the model as the default path', () => {
    const keys = new Map(parseVerlCommand(verl).map((o) => [o.key, o.value]));
    expect(keys.get('actor_rollout_ref.model.lora_rank')).toBe('8');
    expect(keys.get('actor_rollout_ref.model.lora_alpha')).toBe('16');
    expect(keys.get('actor_rollout_ref.model.target_modules')).toBe('all-linear');
    for (const key of ['lora_rank', 'lora_alpha', 'target_modules']) {
      expect(snapshot.verl.keys[`actor_rollout_ref.model.${key}`]?.read).toBe(true);
    }
    expect(shellDefault(verl, 'MODEL_PATH')).toBe('HuggingFaceTB/SmolLM2-135M-Instruct');
    expect(verlProblems(verl)).toEqual([]);
  });

  it('a list of target modules is written as a list', () => {
    const some = loraRunExport(RUN, { rank: 4, alpha: 8, targets: ['q_proj', 'v_proj'] });
    if (!some.ok) throw new Error(some.reason);
    expect(text(some.trl, '.py')).toContain('target_modules=["q_proj", "v_proj"],');
    expect(text(some.trl, '.py')).toContain('MODEL_PATH = "MODEL_PATH"  # placeholder');
    const keys = new Map(parseVerlCommand(text(some.verl, '.sh')).map((o) => [o.key, o.value]));
    expect(keys.get('actor_rollout_ref.model.target_modules')).toBe('[q_proj,v_proj]');
  });

  it('Python compiles the TRL script', () => {
    const dir = mkdtempSync(join(tmpdir(), 'lora-export-'));
    const path = join(dir, 'train_trl_grpo.py');
    writeFileSync(path, trl);
    execFileSync('python3', ['-m', 'py_compile', path]);
  });
});
