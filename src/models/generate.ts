/**
 * Batched autoregressive generation: the request and result types, prompt packing, and the CPU
 * loop. The GPU loop (generate-gpu.ts) runs the same steps with the same sampler and rule, so a
 * seed gives the same tokens on a backend every time (and, float rounding aside, on both).
 *
 * Every row advances one position per step from position 0, prompts included (their tokens are
 * forced; see src/ops/nn/next-token.ts), so all rows share one position and one KV-cache slot per
 * step. The sampler's counter is (seed, pos, row).
 */
import { OpInputError } from '../ops/errors';
import {
  MAX_STOP_TOKENS,
  nextToken,
  startGeneration,
  type NextTokenShape,
} from '../ops/nn/next-token';
import { checkSampleOptions, sampleTokens, type SampleOptions } from '../ops/nn/sample';
import { checkInt } from '../ops/validate';
import type { ParamLayout } from './param-layout';
import type { TransformerConfig } from './transformer-config';
import { CpuKvCache, transformerDecodeStep } from './transformer-decode-cpu';

export interface GenerateRequest {
  /** One prompt per row as token ids, <bos> first. */
  prompts: readonly Int32Array[];
  /** Length L of the returned sequences (prompt + generated + padding), ≤ the model's context. */
  maxLength: number;
  /** Most tokens generated per row (the row also ends at a stop token or at L). */
  maxNewTokens: number;
  /** Token ids that end a row, e.g. [eos]. */
  stopTokens: readonly number[];
  padToken: number;
  sampling: SampleOptions;
  /** Sampler seed, u32; with the prompts and parameters it determines the output. */
  seed: number;
}

export interface Generation {
  batch: number;
  maxLength: number;
  /** (B, L): prompt, generated tokens, then <pad>. */
  tokens: Int32Array;
  /** (B, L): log-prob of each generated token under the sampling distribution; 0 elsewhere. */
  logprobs: Float32Array;
  /** (B, L): 1 where the token was generated (the RL response mask), 0 for prompt and padding. */
  mask: Float32Array;
  /** (B) prompt lengths (incl. <bos>). */
  promptLengths: Int32Array;
}

export interface PackedPrompts {
  prompts: Int32Array; // (B, P)
  promptLengths: Int32Array; // (B)
  shape: NextTokenShape;
}

const OP = 'generate';

/** Validates a request against the model and packs the prompts into (B, P). */
export function packPrompts(config: TransformerConfig, request: GenerateRequest): PackedPrompts {
  const batch = request.prompts.length;
  checkInt(OP, 'prompts.length', batch, 1, 4096);
  checkInt(OP, 'maxLength', request.maxLength, 2, config.context);
  checkInt(OP, 'maxNewTokens', request.maxNewTokens, 1, request.maxLength - 1);
  checkInt(OP, 'seed', request.seed, 0, 2 ** 32 - 1);
  checkInt(OP, 'padToken', request.padToken, 0, config.vocab - 1);
  checkInt(OP, 'stopTokens.length', request.stopTokens.length, 0, MAX_STOP_TOKENS);
  request.stopTokens.forEach((t, i) => checkInt(OP, `stopTokens[${i}]`, t, 0, config.vocab - 1));
  checkSampleOptions(request.sampling);
  let width = 1;
  request.prompts.forEach((prompt, b) => {
    if (prompt.length < 1 || prompt.length > request.maxLength - 1) {
      throw new OpInputError(
        OP,
        `prompts[${b}]`,
        `must have 1 to ${request.maxLength - 1} tokens (maxLength − 1), got ${prompt.length}`,
      );
    }
    prompt.forEach((t, i) => checkInt(OP, `prompts[${b}][${i}]`, t, 0, config.vocab - 1));
    width = Math.max(width, prompt.length);
  });
  const prompts = new Int32Array(batch * width).fill(request.padToken);
  const promptLengths = new Int32Array(batch);
  request.prompts.forEach((prompt, b) => {
    prompts.set(prompt, b * width);
    promptLengths[b] = prompt.length;
  });
  return {
    prompts,
    promptLengths,
    shape: { batch, promptWidth: width, maxLength: request.maxLength },
  };
}

/** The CPU loop: decode step → sample → next-token rule, until every row is done or L is full. */
export function generateCpu(
  config: TransformerConfig,
  layout: ParamLayout,
  params: Float32Array,
  request: GenerateRequest,
): Generation {
  const { prompts, promptLengths, shape } = packPrompts(config, request);
  const { batch, maxLength } = shape;
  const state = startGeneration(prompts, shape, request.padToken);
  const cache = new CpuKvCache(config, batch, maxLength);
  const rule = {
    stopTokens: Int32Array.from(request.stopTokens),
    maxNewTokens: request.maxNewTokens,
    padToken: request.padToken,
  };
  for (let pos = 0; pos + 1 < maxLength; pos++) {
    const logits = transformerDecodeStep(config, layout, params, cache, state.input, pos);
    const sampled = sampleTokens(logits, batch, config.vocab, request.sampling, request.seed, pos);
    nextToken(state, prompts, promptLengths, sampled.tokens, sampled.logprobs, pos, shape, rule);
    if (state.done.every((d) => d === 1)) break; // rows still in their prompt are not done
  }
  return {
    batch,
    maxLength,
    tokens: state.tokens,
    logprobs: state.logprobs,
    mask: state.mask,
    promptLengths,
  };
}
