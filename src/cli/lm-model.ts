/**
 * A Hugging Face model folder for `npm run lm`: config.json through fromHfConfig, the weights
 * (model.safetensors or the shards of its index) through loadHfWeights as f32, and, when asked,
 * the tokenizer files through HfTokenizer; a PEFT LoRA adapter folder (adapter_config.json,
 * adapter_model.safetensors) checked against the model. Any problem with a folder is a FlagError
 * naming its flag (--model or --adapter), one line.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { loadHfWeights } from '../models/hf/hf-checkpoint';
import { fromHfConfig } from '../models/hf/hf-config';
import { HfTokenizer } from '../models/hf/hf-tokenizer';
import { llamaModelFromWeights, type LlamaCpuModel } from '../models/hf/llama-cpu-weights';
import type { LlamaLora } from '../models/hf/llama-lora';
import {
  ADAPTER_CONFIG_FILE,
  ADAPTER_WEIGHTS_FILE,
  readPeftAdapter,
} from '../models/hf/peft-adapter';
import type { ModelSpec } from '../models/model-spec';
import { FlagError } from './args';
import { directoryFiles, openFileSource } from './file-source';
import { errorText } from '../util/error-text';

export interface LmModel {
  dir: string;
  model: LlamaCpuModel;
  /** Every weight in one f32 array (the 'base' group's layout); model's tensors are views of it. */
  params: Float32Array;
}

/** The message of whatever a loader threw, on one line. */
function oneLine(error: unknown): string {
  return errorText(error).replace(/\s+/g, ' ');
}

/** Runs `load`, turning any failure into a FlagError on --flag that names the folder. */
async function forFlag<T>(flag: string, dir: string, load: () => Promise<T> | T): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (error instanceof FlagError) throw error;
    throw new FlagError(flag, `--${flag}=${dir}: ${oneLine(error)}`);
  }
}

function forModel<T>(dir: string, load: () => Promise<T> | T): Promise<T> {
  return forFlag('model', dir, load);
}

/** adapter_config.json is a few hundred bytes; anything past this is not one. */
const MAX_ADAPTER_CONFIG_BYTES = 1_000_000;

function readJson(dir: string, file: string): unknown {
  return JSON.parse(readFileSync(join(dir, file), 'utf8'));
}

/** The CPU model of the folder `dir`. */
export async function loadLmModel(dir: string): Promise<LmModel> {
  if (!existsSync(join(dir, 'config.json'))) {
    throw new FlagError('model', `--model=${dir}: no config.json in this folder`);
  }
  const spec = await forModel(dir, () => fromHfConfig(readJson(dir, 'config.json')));
  const files = directoryFiles(dir);
  try {
    const loaded = await forModel(dir, () => loadHfWeights(spec, files));
    const f32 = loaded.f32!;
    const weights = new Map(
      loaded.layout.entries.map((e) => [e.name, loaded.layout.view(f32, e.name)]),
    );
    return { dir, model: llamaModelFromWeights(spec, weights), params: f32 };
  } finally {
    await files.close();
  }
}

/**
 * The folder's tokenizer (tokenizer.json, tokenizer_config.json, and generation_config.json and
 * chat_template.jinja where present).
 */
export async function loadLmTokenizer(dir: string): Promise<HfTokenizer> {
  return forModel(dir, () => {
    const read = (file: string) => readFileSync(join(dir, file));
    const has = (file: string) => existsSync(join(dir, file));
    return HfTokenizer.load(dir.slice(-300), {
      tokenizerJson: read('tokenizer.json'),
      tokenizerConfig: read('tokenizer_config.json'),
      ...(has('generation_config.json')
        ? { generationConfig: read('generation_config.json') }
        : {}),
      // Newer models keep their chat template beside tokenizer_config.json.
      ...(has('chat_template.jinja') ? { chatTemplateJinja: read('chat_template.jinja') } : {}),
    });
  });
}

/** The PEFT LoRA adapter in the folder `dir`, for the model of `spec`; errors name `flag`. */
export async function loadLmAdapter(
  dir: string,
  spec: ModelSpec,
  flag = 'adapter',
): Promise<LlamaLora> {
  for (const file of [ADAPTER_CONFIG_FILE, ADAPTER_WEIGHTS_FILE]) {
    if (!existsSync(join(dir, file))) {
      throw new FlagError(flag, `--${flag}=${dir}: no ${file} in this folder`);
    }
  }
  const configPath = join(dir, ADAPTER_CONFIG_FILE);
  if (statSync(configPath).size > MAX_ADAPTER_CONFIG_BYTES) {
    throw new FlagError(
      flag,
      `--${flag}=${dir}: ${ADAPTER_CONFIG_FILE} is larger than ${MAX_ADAPTER_CONFIG_BYTES} bytes`,
    );
  }
  const weights = await forFlag(flag, dir, () => openFileSource(join(dir, ADAPTER_WEIGHTS_FILE)));
  try {
    const { lora } = await forFlag(flag, dir, () =>
      readPeftAdapter(readFileSync(configPath, 'utf8'), weights, spec),
    );
    return lora;
  } finally {
    await weights.close();
  }
}
