/**
 * Plain helpers of "Bring a model" that build collections (kept out of the rune class, whose
 * collections would otherwise be taken for reactive state): the dtypes a checkpoint stores, its
 * f32 weights for the CPU, the tokenizer's files, and a LoRA run's inputs.
 */
import { loadHfWeights, locateTensors, type CheckpointFiles } from '../models/hf/hf-checkpoint';
import type { HfTokenizerFiles } from '../models/hf/hf-tokenizer';
import type { ModelSpec } from '../models/model-spec';

/** The safetensors dtypes of every tensor of the checkpoint, sorted, e.g. ['BF16']. */
export async function storedDtypes(files: CheckpointFiles): Promise<string[]> {
  const located = await locateTensors(files);
  return [...new Set([...located.values()].map((l) => l.info.dtype))].sort();
}

/**
 * The checkpoint's weights as f32, in the 'base' group's layout (what llamaModelFromBase and the
 * CPU chat worker take); `onTensor` after each tensor read.
 */
export async function loadCpuBase(
  spec: ModelSpec,
  files: CheckpointFiles,
  onTensor: (done: number, total: number) => void,
): Promise<Float32Array> {
  return (await loadHfWeights(spec, files, { onTensor })).f32!;
}

/** The largest tokenizer file read whole (Qwen's tokenizer.json is about 7 MB). */
const MAX_TOKENIZER_BYTES = 64_000_000;

async function readSmallFile(
  files: CheckpointFiles,
  name: string,
): Promise<Uint8Array | undefined> {
  const source = await files.open(name);
  if (!source) return undefined;
  if (source.size > MAX_TOKENIZER_BYTES) {
    throw new Error(`${name} is ${source.size} bytes (at most ${MAX_TOKENIZER_BYTES})`);
  }
  return source.read(0, source.size);
}

/** The checkpoint's tokenizer files; tokenizer.json and tokenizer_config.json are required. */
export async function readTokenizerFiles(files: CheckpointFiles): Promise<HfTokenizerFiles> {
  const tokenizerJson = await readSmallFile(files, 'tokenizer.json');
  const tokenizerConfig = await readSmallFile(files, 'tokenizer_config.json');
  if (!tokenizerJson || !tokenizerConfig) {
    throw new Error('tokenizer.json and tokenizer_config.json are needed to chat: add them');
  }
  const generationConfig = await readSmallFile(files, 'generation_config.json');
  const chatTemplateJinja = await readSmallFile(files, 'chat_template.jinja');
  return {
    tokenizerJson,
    tokenizerConfig,
    ...(generationConfig ? { generationConfig } : {}),
    ...(chatTemplateJinja ? { chatTemplateJinja } : {}),
  };
}

/** A brought model's weights (f32) and tokenizer files, for a LoRA run. */
export interface TrainingInputs {
  source: string;
  spec: ModelSpec;
  base: Float32Array;
  tokenizerFiles: HfTokenizerFiles;
}

/** A LoRA run's inputs from a checkpoint: the weights read as f32, the tokenizer's files. */
export async function trainingInputsFrom(
  source: string,
  spec: ModelSpec,
  files: CheckpointFiles,
  onTensor: (done: number, total: number) => void,
): Promise<TrainingInputs> {
  const base = await loadCpuBase(spec, files, onTensor);
  return { source, spec, base, tokenizerFiles: await readTokenizerFiles(files) };
}
