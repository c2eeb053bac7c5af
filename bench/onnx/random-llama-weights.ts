/**
 * Seeded random weights for a Llama-family spec at any size, with nothing downloaded: the weights
 * of the real-shape benches, the same for every engine that asks (ours and the ONNX peer).
 *
 * Each tensor has its own stream, seeded by the run's seed and the tensor's Hugging Face name, so
 * one tensor can be made without the others (the ONNX writer takes them one at a time and drops
 * each: a 0.5B model never sits in memory twice) and the values do not depend on which tensors a
 * caller asks for first. Values are uniform with Hugging Face's initializer scale:
 *   linear weights and the embedding   U(−a, a), a = 0.02·√3 (std 0.02, initializer_range)
 *   biases                             U(−0.02, 0.02)
 *   RMSNorm gains                      1 + U(−0.1, 0.1)  (not all ones, so a misplaced gain shows)
 */
import { llamaTensorEntries, type TensorEntry } from '../../src/models/hf/llama-cpu-weights';
import type { ModelSpec } from '../../src/models/model-spec';
import { seededRandom } from '../../src/util/random';

const WEIGHT_HALF_RANGE = 0.02 * Math.sqrt(3);
const BIAS_HALF_RANGE = 0.02;
const GAIN_HALF_RANGE = 0.1;

/** FNV-1a over the name's UTF-16 units, mixed with the seed: one stream per tensor. */
function tensorSeed(seed: number, name: string): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** The random values of one tensor (its HF name and shape). */
export function randomLlamaTensor(seed: number, entry: TensorEntry): Float32Array {
  const size = entry.shape.reduce((a, b) => a * b, 1);
  const random = seededRandom(tensorSeed(seed, entry.name));
  const out = new Float32Array(size);
  const isGain = entry.name.endsWith('norm.weight');
  const halfRange = entry.name.endsWith('.bias') ? BIAS_HALF_RANGE : WEIGHT_HALF_RANGE;
  for (let i = 0; i < size; i++) {
    const u = 2 * random() - 1;
    out[i] = isGain ? 1 + GAIN_HALF_RANGE * u : halfRange * u;
  }
  return out;
}

/** The random weights as a source: each call makes that tensor anew (nothing kept). */
export function randomLlamaWeightSource(
  spec: ModelSpec,
  seed: number,
): (name: string) => Float32Array {
  const entries = new Map(llamaTensorEntries(spec).map((e) => [e.name, e]));
  return (name) => {
    const entry = entries.get(name);
    if (!entry) throw new Error(`random llama weights: '${name}' is not a tensor of this spec`);
    return randomLlamaTensor(seed, entry);
  };
}

/**
 * Every tensor at once, as the Map the CPU model and the GPU loaders take (HF names → f32). For
 * models that fit: SmolLM2-135M is 0.54 GB in f32, Qwen2.5-0.5B 2 GB (use the source there).
 */
export function randomLlamaWeights(spec: ModelSpec, seed: number): Map<string, Float32Array> {
  return new Map(llamaTensorEntries(spec).map((e) => [e.name, randomLlamaTensor(seed, e)]));
}
