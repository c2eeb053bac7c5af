/** Seeded models and token batches for the ONNX tests (Node and browser alike: no node: imports). */
import type { ParamLayout } from '../../src/models/param-layout';
import { CharTokenizer, SPECIAL_TOKENS, type TokenizerSpec } from '../../src/models/tokenizer';
import type { TransformerConfig } from '../../src/models/transformer-config';
import { transformerLayout } from '../../src/models/transformer-params';
import { gaussian, seededRandom } from '../../src/util/random';
import { exportTransformerOnnx } from '../../src/onnx/export-transformer';
import { createOrtSession, type OrtSessionOptions } from '../../src/onnx/ort-reference';

/**
 * Every tensor random, biases and LayerNorm shifts included (GPT-2's init leaves them 0 or 1,
 * which would hide a bias added on the wrong axis). Weights N(0, 0.3²) so that logits reach a
 * few units; gains 1 + N(0, 0.2²); padding stays 0.
 */
export function randomParams(layout: ParamLayout, seed: number): Float32Array {
  const next = seededRandom(seed);
  const flat = new Float32Array(layout.total);
  for (const e of layout.entries) {
    const view = layout.view(flat, e.name);
    const gain = e.name.endsWith('gamma');
    const std = e.decay ? 0.3 : 0.2;
    for (let i = 0; i < e.size; i++) view[i] = (gain ? 1 : 0) + gaussian(next) * std;
  }
  return flat;
}

/** A tokenizer with exactly `vocab` ids (vocab ≥ 10): the specials and vocab − 9 letters. */
export function tokenizerFor(vocab: number): TokenizerSpec {
  const chars = 'abcdefghijklmnopqrstuvwxyz0123456789'.slice(0, vocab - SPECIAL_TOKENS.length);
  return CharTokenizer.fromSpec({ kind: 'char', version: 1, chars }).spec;
}

/** B·T random ids in [0, vocab). */
export function randomTokens(count: number, vocab: number, seed: number): Int32Array {
  const next = seededRandom(seed);
  return Int32Array.from({ length: count }, () => Math.floor(next() * vocab));
}

export function transformerModel(config: TransformerConfig, seed: number) {
  const layout = transformerLayout(config);
  return {
    config,
    layout,
    params: randomParams(layout, seed),
    tokenizer: tokenizerFor(config.vocab),
  };
}

/** Largest |x| (the logit scale the tolerances are relative to). */
export function maxAbs(x: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < x.length; i++) m = Math.max(m, Math.abs(x[i]!));
  return m;
}

/**
 * Starts ORT's wasm runtime (compiling ~12 MB of wasm takes seconds here) by creating and
 * releasing one session of a tiny export: call in beforeAll with a long timeout, once per file.
 */
export async function warmUpOrt(options: OrtSessionOptions): Promise<void> {
  const config: TransformerConfig = {
    vocab: 10,
    context: 2,
    width: 16,
    layers: 1,
    heads: 1,
    tiedEmbeddings: true,
    valueHead: false,
  };
  const { params, tokenizer } = transformerModel(config, 0);
  const session = await createOrtSession(exportTransformerOnnx(config, params, tokenizer), options);
  await session.release();
}
