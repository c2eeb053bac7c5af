/**
 * A Hugging Face model folder for `npm run lm`: config.json through fromHfConfig, the weights
 * (model.safetensors or the shards of its index) through loadHfWeights as f32, and, when asked,
 * the tokenizer files through HfTokenizer. Any problem with the folder is a FlagError naming
 * --model, one line.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadHfWeights } from '../models/hf/hf-checkpoint';
import { fromHfConfig } from '../models/hf/hf-config';
import { HfTokenizer } from '../models/hf/hf-tokenizer';
import { llamaModelFromWeights, type LlamaCpuModel } from '../models/hf/llama-cpu-weights';
import { FlagError } from './args';
import { directoryFiles } from './file-source';
import { errorText } from '../util/error-text';

export interface LmModel {
  dir: string;
  model: LlamaCpuModel;
}

/** The message of whatever a loader threw, on one line. */
function oneLine(error: unknown): string {
  return errorText(error).replace(/\s+/g, ' ');
}

/** Runs `load`, turning any failure into a FlagError on --model that names the folder. */
async function forModel<T>(dir: string, load: () => Promise<T> | T): Promise<T> {
  try {
    return await load();
  } catch (error) {
    if (error instanceof FlagError) throw error;
    throw new FlagError('model', `--model=${dir}: ${oneLine(error)}`);
  }
}

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
    return { dir, model: llamaModelFromWeights(spec, weights) };
  } finally {
    await files.close();
  }
}

/** The folder's tokenizer (tokenizer.json, tokenizer_config.json, generation_config.json). */
export async function loadLmTokenizer(dir: string): Promise<HfTokenizer> {
  return forModel(dir, () => {
    const read = (file: string) => readFileSync(join(dir, file));
    const generation = join(dir, 'generation_config.json');
    return HfTokenizer.load(dir.slice(-300), {
      tokenizerJson: read('tokenizer.json'),
      tokenizerConfig: read('tokenizer_config.json'),
      ...(existsSync(generation) ? { generationConfig: read('generation_config.json') } : {}),
    });
  });
}
