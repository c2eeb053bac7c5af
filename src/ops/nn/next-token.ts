/**
 * One step of batched generation after sampling: decide each row's token at position pos + 1.
 * CPU twin of kernels/nn/next_token.wgsl.
 *
 * Every row advances one position per step, prompts included: while a row is still inside its
 * prompt, the prompt's next token is forced (teacher forcing through the KV cache); after that the
 * sampled token is taken, marked as generated, and its sampling log-prob kept; a stop token (or the
 * row's budget of new tokens) ends the row, which then emits <pad> with mask 0.
 *
 *   prompts   (B, P) i32   prompt tokens, <bos> first, padded; promptLengths (B) i32 in 1…P
 *   sampled   (B)    i32   and sampledLogprobs (B) f32: the sampler's output for position pos + 1
 *   state: input (B) i32 the next step's input token; done (B) i32 0/1;
 *          tokens (B, L) i32, logprobs (B, L) f32, mask (B, L) f32 — position pos + 1 written here
 */
import { checkInt, checkLength } from '../validate';

/** Stop tokens per generation; the GPU kernel takes them as uniforms. */
export const MAX_STOP_TOKENS = 4;

export interface NextTokenShape {
  batch: number;
  /** Width P of the padded prompts array. */
  promptWidth: number;
  /** Length L of the output sequences (≤ the model's context). */
  maxLength: number;
}

export interface NextTokenRule {
  /** Token ids that end a row (e.g. <eos>); the stop token itself is generated and trained on. */
  stopTokens: Int32Array;
  /** Most generated tokens per row; the row ends after this many. ≥ 1. */
  maxNewTokens: number;
  /** Emitted after a row ends. */
  padToken: number;
}

export interface GenerationState {
  input: Int32Array; // (B)
  done: Int32Array; // (B)
  tokens: Int32Array; // (B, L)
  logprobs: Float32Array; // (B, L)
  mask: Float32Array; // (B, L)
}

const OP = 'nextToken';

export function checkNextTokenShape(shape: NextTokenShape, pos: number): void {
  checkInt(OP, 'batch', shape.batch, 1, 2 ** 16);
  checkInt(OP, 'promptWidth', shape.promptWidth, 1, shape.maxLength);
  checkInt(OP, 'maxLength', shape.maxLength, 2, 4096);
  checkInt(OP, 'pos', pos, 0, shape.maxLength - 2);
}

/** Fresh state: each row's first token (<bos>) at position 0, <pad> after, nothing generated. */
export function startGeneration(
  prompts: Int32Array,
  shape: NextTokenShape,
  padToken: number,
): GenerationState {
  const { batch: B, promptWidth: P, maxLength: L } = shape;
  checkLength(OP, 'prompts', prompts, B * P, 'batch × promptWidth');
  const state: GenerationState = {
    input: new Int32Array(B),
    done: new Int32Array(B),
    tokens: new Int32Array(B * L).fill(padToken),
    logprobs: new Float32Array(B * L),
    mask: new Float32Array(B * L),
  };
  for (let b = 0; b < B; b++) {
    state.input[b] = prompts[b * P]!;
    state.tokens[b * L] = prompts[b * P]!;
  }
  return state;
}

/** Applies one step in place: position pos + 1 of every row. */
export function nextToken(
  state: GenerationState,
  prompts: Int32Array,
  promptLengths: Int32Array,
  sampled: Int32Array,
  sampledLogprobs: Float32Array,
  pos: number,
  shape: NextTokenShape,
  rule: NextTokenRule,
): void {
  checkNextTokenShape(shape, pos);
  const { batch: B, promptWidth: P, maxLength: L } = shape;
  const next = pos + 1;
  for (let b = 0; b < B; b++) {
    const promptLength = promptLengths[b]!;
    let token = rule.padToken;
    let generated = 0;
    let logprob = 0;
    if (next < promptLength) {
      token = prompts[b * P + next]!;
    } else if (state.done[b] === 0) {
      token = sampled[b]!;
      generated = 1;
      logprob = sampledLogprobs[b]!;
      const produced = next - promptLength + 1;
      if (rule.stopTokens.includes(token) || produced >= rule.maxNewTokens) state.done[b] = 1;
    }
    state.tokens[b * L + next] = token;
    state.logprobs[b * L + next] = logprob;
    state.mask[b * L + next] = generated;
    state.input[b] = token;
  }
}
