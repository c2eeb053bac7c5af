/**
 * The flags of a training run on a brought model (`npm run train -- --model=DIR …`): a Hugging
 * Face model folder trained through LoRA adapters, the base frozen. PEFT's names and defaults:
 *
 *   --model=DIR_OR_HUB_ID    a folder with config.json, model.safetensors (or shards) and the
 *                            tokenizer files, or a Hugging Face model id downloaded once
 *                            (model-source.ts; --revision=REV picks a branch, tag or commit)
 *   --lora-r=16              the rank r, 1 … 1024 (TRL's LoRA recipes use 1–32)
 *   --lora-alpha=32          lora_alpha; the adapters are scaled by alpha / r (default 2·r)
 *   --lora-targets=all-linear  PEFT target_modules: all-linear, or a comma list of
 *                            q_proj,k_proj,v_proj,o_proj,gate_proj,up_proj,down_proj
 *   --adapter-out=DIR        where adapter_config.json and adapter_model.safetensors are written,
 *                            as PEFT saves them, with the optimizer's and trainer's state beside
 *                            them (lora-training-state.ts; checked before training, written at
 *                            every ending, Ctrl-C included)
 *   --resume=DIR             goes on from a folder --adapter-out wrote: its adapters, AdamW state
 *                            and trainer state (random draws, config, events), for --updates more
 *                            updates; the base must be the one it was trained on (fingerprint),
 *                            and its adapter_config.json sets r, alpha and the targets
 *   --storage=f16            the frozen base's storage on the GPU: f16 (half the memory) or f32
 *                            (the CPU's numbers); for --backend=webgpu or auto
 *   --micro-batch=N          on the GPU, the most sequences a forward and backward take at once
 *                            (the same update, less memory); default: the most that fit
 *
 * What belongs to the lab's own tiny GPT is refused beside --model, naming the flag: a new model's
 * shape and positions, --init, the SFT warm-up, run files (--out), the ONNX reference, a learned
 * reward model, a retained task and a curriculum.
 */
import { existsSync, lstatSync } from 'node:fs';
import { join } from 'node:path';
import {
  ALL_LINEAR,
  LORA_MAX_RANK,
  resolveLoraTargets,
  type LoraSettings,
} from '../models/hf/llama-lora';
import type { GpuWeightStorage } from '../models/hf/llama-gpu-weights';
import { ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE } from '../models/hf/peft-adapter';
import { FlagError, type CliArgs } from './args';
import { LM_STORAGES } from './lm-backend';
import { readModelSource, type ModelSource } from './model-source';
import { TRAINING_STATE_FILE } from './lora-training-state';
import { prepareOutput } from './output-file';

export interface BroughtModelFlags {
  /** The model: a folder, or a Hub id to download (model-source.ts). */
  source: ModelSource;
  lora: LoraSettings;
  /** The adapter folder to write, when asked. */
  adapterOut?: string;
  /** The folder of a saved run to go on from. */
  resume?: string;
  /** The base's storage on the GPU. */
  storage: GpuWeightStorage;
  /** Sequences per forward and backward on the GPU; undefined: the most that fit. */
  microBatch: number | undefined;
}

/** Flags of the lab's own model, and why each has no meaning for a brought one. */
const TINY_GPT_ONLY: readonly [string, string][] = [
  ['init', 'the brought model is the start'],
  ['sft-steps', 'a brought model is trained already; no warm-up runs'],
  ['width', "the model's config.json sets its shape"],
  ['layers', "the model's config.json sets its shape"],
  ['heads', "the model's config.json sets its shape"],
  ['positions', "the model's config.json sets its positions"],
  ['out', "run files hold the lab's own models so far; --adapter-out saves the adapters"],
  ['reference', 'the reference is the brought model with its adapters off'],
  ['reward-model', 'a learned reward model is trained on the lab’s own models only so far'],
  ['retained', 'a retained task (ptx) needs the character tokenizer so far'],
  ['curriculum', 'a curriculum runs on the lab’s own models only so far'],
];

/** The brought-model flags, or undefined without --model. Marks every flag it reads as used. */
export function broughtModelFlags(args: CliArgs): BroughtModelFlags | undefined {
  const source = readModelSource(args);
  const given = args.all();
  if (source === undefined) {
    for (const flag of [
      'lora-r',
      'lora-alpha',
      'lora-targets',
      'adapter-out',
      'resume',
      'storage',
      'micro-batch',
    ]) {
      if (given.has(flag)) throw new FlagError(flag, `--${flag} needs --model=DIR_OR_HUB_ID`);
    }
    return undefined;
  }
  for (const [flag, why] of TINY_GPT_ONLY) {
    if (given.has(flag)) throw new FlagError(flag, `--${flag} is not for --model: ${why}`);
  }
  // A folder is checked now; a Hub model's files are checked as they download.
  if (source.kind === 'folder' && !existsSync(join(source.dir, 'config.json'))) {
    throw new FlagError('model', `--model=${source.dir}: no config.json in this folder`);
  }
  const resume = args.optional('resume');
  if (resume !== undefined) {
    if (!existsSync(join(resume, ADAPTER_CONFIG_FILE))) {
      throw new FlagError('resume', `--resume=${resume}: no ${ADAPTER_CONFIG_FILE} in this folder`);
    }
    for (const flag of ['lora-r', 'lora-alpha', 'lora-targets']) {
      if (given.has(flag)) {
        throw new FlagError(
          flag,
          `--${flag} is set by --resume=${resume}: its ${ADAPTER_CONFIG_FILE} gives r, alpha and the targets`,
        );
      }
    }
  }
  const rank = args.int('lora-r', 16, { min: 1, max: LORA_MAX_RANK });
  const alpha = args.real('lora-alpha', 2 * rank, { min: 0, max: 1e6, minOpen: true });
  const targetsText = args.string('lora-targets', ALL_LINEAR);
  let targets;
  try {
    targets = resolveLoraTargets(
      targetsText === ALL_LINEAR ? ALL_LINEAR : targetsText.split(','),
      'lora-targets',
    );
  } catch (error) {
    throw new FlagError('lora-targets', `--lora-targets: ${(error as Error).message}`);
  }
  const adapterOut = args.optional('adapter-out');
  if (adapterOut !== undefined) prepareAdapterFolder(adapterOut);
  const storage = args.choice('storage', LM_STORAGES, 'f16');
  const microBatch = given.has('micro-batch')
    ? args.int('micro-batch', 1, { min: 1, max: 65_536 })
    : undefined;
  for (const flag of ['storage', 'micro-batch']) {
    if (given.has(flag) && args.optional('backend') === 'cpu') {
      throw new FlagError(
        flag,
        `--${flag} is for the GPU; --backend=cpu takes the whole batch, as f32`,
      );
    }
  }
  return {
    source,
    storage,
    microBatch,
    lora: { rank, alpha, targets },
    ...(adapterOut === undefined ? {} : { adapterOut }),
    ...(resume === undefined ? {} : { resume }),
  };
}

/** The adapter folder: a folder or nothing yet, and its two files writable (checked now). */
function prepareAdapterFolder(dir: string): void {
  if (existsSync(dir) && !lstatSync(dir).isDirectory()) {
    throw new FlagError('adapter-out', `--adapter-out=${dir} is a file; give a folder`);
  }
  for (const file of [ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE, TRAINING_STATE_FILE]) {
    prepareOutput(join(dir, file), 'adapter-out');
  }
}
