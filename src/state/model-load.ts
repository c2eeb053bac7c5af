/**
 * Plain helpers of "Bring a model" that build collections (kept out of the rune class, whose
 * collections would otherwise be taken for reactive state): the dtypes a checkpoint stores, and
 * the CPU model from its f32 weights.
 */
import { loadHfWeights, locateTensors, type CheckpointFiles } from '../models/hf/hf-checkpoint';
import { llamaModelFromWeights, type LlamaCpuModel } from '../models/hf/llama-cpu-weights';
import type { ModelSpec } from '../models/model-spec';

/** The safetensors dtypes of every tensor of the checkpoint, sorted, e.g. ['BF16']. */
export async function storedDtypes(files: CheckpointFiles): Promise<string[]> {
  const located = await locateTensors(files);
  return [...new Set([...located.values()].map((l) => l.info.dtype))].sort();
}

/** The CPU model (f32) of the checkpoint; `onTensor` after each tensor read. */
export async function loadCpuModel(
  spec: ModelSpec,
  files: CheckpointFiles,
  onTensor: (done: number, total: number) => void,
): Promise<LlamaCpuModel> {
  const loaded = await loadHfWeights(spec, files, { onTensor });
  const f32 = loaded.f32!;
  const weights = new Map(
    loaded.layout.entries.map((e) => [e.name, loaded.layout.view(f32, e.name)]),
  );
  return llamaModelFromWeights(spec, weights);
}
