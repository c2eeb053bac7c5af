/**
 * One generation step on the CPU: every row's token at position `pos` goes through the model,
 * attending to the keys and values of positions 0 … pos kept in a per-layer KV cache, and the
 * logits of the next token come out. Twin of the GPU decode step in transformer-gpu.ts.
 */
import { attentionDecode } from '../ops/nn/attention-decode';
import type { Ints } from '../ops/nn/floats';
import type { ParamLayout } from './param-layout';
import type { TransformerConfig } from './transformer-config';
import { runTransformer } from './transformer-cpu';

/** Keys and values per layer: (B, NH, L, hs) each, L = the generation's length. */
export class CpuKvCache {
  readonly k: Float32Array[];
  readonly v: Float32Array[];

  constructor(
    config: TransformerConfig,
    readonly batch: number,
    readonly maxSeq: number,
  ) {
    const size = batch * maxSeq * config.width;
    this.k = Array.from({ length: config.layers }, () => new Float32Array(size));
    this.v = Array.from({ length: config.layers }, () => new Float32Array(size));
  }
}

/** input (B) token ids at position `pos` → logits (B, V); writes k, v of `pos` into the cache. */
export function transformerDecodeStep(
  config: TransformerConfig,
  layout: ParamLayout,
  params: Float32Array,
  cache: CpuKvCache,
  input: Ints,
  pos: number,
): Float32Array {
  const shape = {
    batch: cache.batch,
    heads: config.heads,
    channels: config.width,
    maxSeq: cache.maxSeq,
  };
  const { logits } = runTransformer(
    config,
    layout,
    params,
    input,
    cache.batch,
    1,
    pos,
    (qkv, l) => ({
      out: attentionDecode(qkv, cache.k[l]!, cache.v[l]!, pos, shape),
      probs: new Float32Array(0),
    }),
  );
  return logits;
}
