/**
 * Batched sampling generation of the Llama-family CPU model with a KV cache. Each sequence keeps
 * its own cache rows, so prompts of different lengths need no padding: the prompts go through the
 * model together as one prefill (their rows concatenated, each at its own positions), then every
 * step feeds each unfinished sequence's last token at its own position, the projections and MLPs
 * running over all of those rows at once and attention per sequence over its cache.
 *
 * Sampling is src/ops/nn/sample.ts's algorithm (temperature → top-k → top-p, greedy at
 * temperature 0) with its counter-based uniform u = counterUniform(seed, step, row) — a pure
 * function of the seed, the step (tokens generated so far) and the prompt's index — so a GPU
 * sampler drawing the same numbers picks the same tokens. Unlike sampleTokens it takes any
 * vocabulary size (the GPU kernel's 1,024 limit is not the CPU's).
 *
 * Shapes: S = prompts, cap = a sequence's capacity (prompt + maxNewTokens), NKV·hs = kv width.
 */
import { OpInputError } from '../../ops/errors';
import { gqaAttentionForward } from '../../ops/nn/attention-gqa';
import { type Floats, type Ints, zerosLike } from '../../ops/nn/floats';
import { checkSampleOptions, pickIndex, samplingDistribution } from '../../ops/nn/sample';
import { checkInt } from '../../ops/validate';
import { counterUniform } from '../../util/counter-rng';
import {
  type Attend,
  blockAdapters,
  llamaBlockForward,
  llamaEmbed,
  llamaHead,
  llamaRotaryTable,
} from './llama-cpu';
import type { LlamaCpuModel } from './llama-cpu-weights';
import type { LlamaLora } from './llama-lora';
import type { RotaryTable } from '../../ops/nn/rotary';
import type { ModelSpec } from '../model-spec';

const OP = 'llamaGenerate';

/** Per layer, k and v of every sequence: (S, cap, NKV·hs); lengths (S) positions filled. */
export interface LlamaKvCache<T extends Floats = Float32Array> {
  capacity: number;
  lengths: Int32Array;
  k: T[];
  v: T[];
}

export interface LlamaGenerateOptions {
  /** Most new tokens per prompt (HF max_new_tokens), ≥ 1; prompt + this ≤ the model's context. */
  maxNewTokens: number;
  /** Softmax temperature (HF `temperature`), ≥ 0; 0 = greedy. Default 1. */
  temperature?: number;
  /** Keep the k most probable tokens (HF `top_k`); 0 = off. Default 0. */
  topK?: number;
  /** Nucleus mass in (0, 1] (HF `top_p`); 1 = off. Default 1. */
  topP?: number;
  /** Ids that end a sequence (HF eos_token_id); the stop id is kept in the output. */
  stopIds?: readonly number[];
  /** Seed of the counter-based sampler, an integer in [0, 2^32 − 1]. Default 0. */
  seed?: number;
  /** LoRA adapters to apply (llama-lora.ts); undefined: the base model. */
  lora?: LlamaLora<Floats> | undefined;
}

export interface LlamaGenerated {
  /** The new tokens of each prompt, a stop id included. */
  tokens: Int32Array[];
  /** log q of each new token under the final sampling distribution (0 when greedy). */
  logprobs: Float32Array[];
  /** 'stop': a stop id was generated; 'length': maxNewTokens reached. */
  finish: ('stop' | 'length')[];
}

/** An empty cache for `sequences` sequences of up to `capacity` positions. */
export function llamaKvCache<T extends Floats>(
  model: LlamaCpuModel<T>,
  sequences: number,
  capacity: number,
): LlamaKvCache<T> {
  const { kvHeads, headDim, layers } = model.spec;
  const size = sequences * capacity * kvHeads * headDim;
  const make = () => Array.from({ length: layers }, () => zerosLike(model.embed, size));
  return { capacity, lengths: new Int32Array(sequences), k: make(), v: make() };
}

/** A run of new tokens of one sequence, appended after what its cache holds. */
export interface CacheSegment {
  sequence: number;
  ids: Ints;
}

/**
 * Runs the segments' tokens through the model, each after its sequence's cached positions,
 * appends their k and v to the cache, and returns the logits of each segment's last token
 * (segments, V).
 */
export function llamaCachedStep<T extends Floats>(
  model: LlamaCpuModel<T>,
  cache: LlamaKvCache<T>,
  table: RotaryTable,
  segments: readonly CacheSegment[],
  lora?: LlamaLora<T>,
): T {
  const { heads, kvHeads, headDim: hs, width: C } = model.spec;
  const kvWidth = kvHeads * hs;
  const qWidth = heads * hs;
  const rows = segments.reduce((n, s) => n + s.ids.length, 0);
  const ids = new Int32Array(rows);
  const positions = new Int32Array(rows);
  const starts: number[] = [];
  let r = 0;
  const seen = new Set<number>();
  checkInt(OP, 'segments.length', segments.length, 1, cache.lengths.length);
  for (const { sequence, ids: segmentIds } of segments) {
    checkInt(OP, 'segments[].sequence', sequence, 0, cache.lengths.length - 1);
    checkInt(OP, 'segments[].ids.length', segmentIds.length, 1, cache.capacity);
    // Two segments of one sequence in a step would both write at the same cached positions.
    if (seen.has(sequence)) {
      throw new OpInputError(OP, 'segments', `name sequence ${sequence} twice in one step`);
    }
    seen.add(sequence);
    const past = cache.lengths[sequence]!;
    if (past + segmentIds.length > cache.capacity) {
      throw new OpInputError(
        OP,
        'segments',
        `would fill sequence ${sequence} past its cache capacity ${cache.capacity}`,
      );
    }
    starts.push(r);
    for (let i = 0; i < segmentIds.length; i++, r++) {
      ids[r] = segmentIds[i]!;
      positions[r] = past + i;
    }
  }
  let x = llamaEmbed(model, ids);
  model.layers.forEach((layer, l) => {
    const attend: Attend<T> = (q, k, v) => {
      const out = zerosLike(q, rows * qWidth);
      // Each segment's probs (1, NH, n, past + n), one after another.
      let probsSize = 0;
      for (const { sequence, ids: segmentIds } of segments) {
        const n = segmentIds.length;
        probsSize += heads * n * (cache.lengths[sequence]! + n);
      }
      const probs = zerosLike(q, probsSize);
      let probsAt = 0;
      segments.forEach(({ sequence, ids: segmentIds }, s) => {
        const n = segmentIds.length;
        const past = cache.lengths[sequence]!;
        const base = sequence * cache.capacity * kvWidth;
        const from = starts[s]!;
        // Append this segment's rotated k and its v at positions past … past + n − 1.
        cache.k[l]!.set(k.subarray(from * kvWidth, (from + n) * kvWidth), base + past * kvWidth);
        cache.v[l]!.set(v.subarray(from * kvWidth, (from + n) * kvWidth), base + past * kvWidth);
        const keys = base + (past + n) * kvWidth;
        const step = gqaAttentionForward(
          q.subarray(from * qWidth, (from + n) * qWidth) as T,
          cache.k[l]!.subarray(base, keys) as T,
          cache.v[l]!.subarray(base, keys) as T,
          { batch: 1, seq: n, past, heads, kvHeads, headSize: hs },
        );
        out.set(step.out, from * qWidth);
        probs.set(step.probs, probsAt);
        probsAt += step.probs.length;
      });
      return { out, probs };
    };
    const adapters = blockAdapters(model, lora, l);
    x = llamaBlockForward(model, layer, x, positions, table, attend, adapters).out;
  });
  segments.forEach(({ sequence, ids: segmentIds }) => {
    cache.lengths[sequence] = cache.lengths[sequence]! + segmentIds.length;
  });
  // Only each segment's last row needs logits.
  const last = zerosLike(x, segments.length * C);
  segments.forEach(({ ids: segmentIds }, s) => {
    const row = starts[s]! + segmentIds.length - 1;
    last.set(x.subarray(row * C, (row + 1) * C), s * C);
  });
  return llamaHead(model, last, segments.length).logits;
}

/**
 * Checks prompts and options against the model's spec (shared with the GPU generator); returns
 * the resolved sampling options, stop ids and seed.
 */
export function checkGenerateInput(
  spec: ModelSpec,
  prompts: readonly Ints[],
  options: LlamaGenerateOptions,
) {
  const { vocab: V, context } = spec;
  checkInt(OP, 'prompts.length', prompts.length, 1, 2 ** 16);
  checkInt(OP, 'maxNewTokens', options.maxNewTokens, 1, context - 1);
  prompts.forEach((prompt, i) => {
    checkInt(OP, `prompts[${i}].length`, prompt.length, 1, context - options.maxNewTokens);
    for (let t = 0; t < prompt.length; t++) {
      checkInt(OP, `prompts[${i}][${t}]`, prompt[t]!, 0, V - 1);
    }
  });
  const stopIds = options.stopIds ?? [];
  stopIds.forEach((id, i) => checkInt(OP, `stopIds[${i}]`, id, 0, V - 1));
  const seed = options.seed ?? 0;
  checkInt(OP, 'seed', seed, 0, 2 ** 32 - 1);
  const sampling = checkSampleOptions(options);
  return { sampling, stopIds, seed };
}

/**
 * Generates up to maxNewTokens after each prompt (token ids), all prompts as one batch. A
 * sequence ends at a stop id or after maxNewTokens; the others go on. Deterministic in the seed.
 */
export function llamaGenerate<T extends Floats>(
  model: LlamaCpuModel<T>,
  prompts: readonly Ints[],
  options: LlamaGenerateOptions,
): LlamaGenerated {
  const { sampling, stopIds, seed } = checkGenerateInput(model.spec, prompts, options);
  const V = model.spec.vocab;
  const longest = Math.max(...prompts.map((p) => p.length));
  const capacity = longest + options.maxNewTokens;
  const cache = llamaKvCache(model, prompts.length, capacity);
  const table = llamaRotaryTable(model, capacity);
  const tokens: number[][] = prompts.map(() => []);
  const logprobs: number[][] = prompts.map(() => []);
  const finish: ('stop' | 'length')[] = prompts.map(() => 'length');
  let active = prompts.map((_, i) => i);
  let segments: CacheSegment[] = prompts.map((ids, sequence) => ({ sequence, ids }));
  for (let step = 0; active.length > 0; step++) {
    const logits = llamaCachedStep(model, cache, table, segments, options.lora as LlamaLora<T>);
    const still: number[] = [];
    active.forEach((sequence, row) => {
      const dist = samplingDistribution(logits, row, V, sampling);
      const u = counterUniform(seed, step, sequence);
      const j = sampling.temperature === 0 ? 0 : pickIndex(dist, u);
      const token = dist.tokens[j]!;
      tokens[sequence]!.push(token);
      logprobs[sequence]!.push(dist.logProbs[j]!);
      if (stopIds.includes(token)) finish[sequence] = 'stop';
      else if (tokens[sequence]!.length < options.maxNewTokens) still.push(sequence);
    });
    active = still;
    segments = active.map((sequence) => ({
      sequence,
      ids: Int32Array.of(tokens[sequence]!.at(-1)!),
    }));
  }
  return {
    tokens: tokens.map((t) => Int32Array.from(t)),
    logprobs: logprobs.map((l) => Float32Array.from(l)),
    finish,
  };
}
