/**
 * A checkpoint from files the user picked, a folder they chose or dropped, or a download: the
 * files by name (a folder's files by their last path segment, so "SmolLM2/config.json" serves
 * "config.json"), and the model's config read from them.
 */
import type { ModelSpec } from '../model-spec';
import { readGenerationConfig, type GenerationDefaults } from './generation-config';
import type { CheckpointFiles } from './hf-checkpoint';
import { fromHfConfig, hfConfigDtype } from './hf-config';
import { blobSource, type RandomAccessSource } from './random-access-source';

/** The files by name; a name given twice is refused (two folders' files mixed up). */
export function filesFromBlobs(
  files: Iterable<File | readonly [string, Blob]>,
): CheckpointFiles & { names: string[] } {
  const byName = new Map<string, RandomAccessSource>();
  for (const item of files) {
    const [path, blob] = item instanceof Blob ? [item.webkitRelativePath || item.name, item] : item;
    const name = path.split('/').pop() ?? path;
    if (byName.has(name)) throw new Error(`two files are named ${name}: pick one model's folder`);
    byName.set(name, blobSource(blob, name));
  }
  return { open: (name) => Promise.resolve(byName.get(name)), names: [...byName.keys()] };
}

/** The largest config file read whole (real ones are a few kB). */
const MAX_CONFIG_BYTES = 1_000_000;

/** A small JSON file of the checkpoint, or undefined when absent. */
export async function readJsonFile(files: CheckpointFiles, name: string): Promise<unknown> {
  const source = await files.open(name);
  if (!source) return undefined;
  if (source.size > MAX_CONFIG_BYTES)
    throw new Error(`${name} is ${source.size} bytes (at most ${MAX_CONFIG_BYTES})`);
  const text = new TextDecoder().decode(await source.read(0, source.size));
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`${name} is not valid JSON (${(error as Error).message})`, { cause: error });
  }
}

export interface HfModelConfig {
  spec: ModelSpec;
  /** config.json's torch_dtype, e.g. "bfloat16". */
  dtype: string | undefined;
  /** generation_config.json, or config.json's ids where there is none. */
  generation: GenerationDefaults;
}

/** config.json (required) and generation_config.json (optional) of a checkpoint. */
export async function readHfModelConfig(files: CheckpointFiles): Promise<HfModelConfig> {
  const config = await readJsonFile(files, 'config.json');
  if (config === undefined)
    throw new Error('config.json is missing: pick the model’s folder or its config.json');
  const spec = fromHfConfig(config);
  const generationJson = await readJsonFile(files, 'generation_config.json');
  const record = config as Record<string, unknown>;
  const generation = readGenerationConfig(
    generationJson ?? { bos_token_id: record.bos_token_id, eos_token_id: record.eos_token_id },
  );
  return { spec, dtype: hfConfigDtype(record), generation };
}
