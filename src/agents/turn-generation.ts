/**
 * One model turn for every episode still running: a single batched `generate` call whose prompts
 * are the rows so far, returning what each row's model wrote (up to and including a stop id).
 * Both episode runners (the tiny GPT's tags, a chat model's template) take their turns here, so
 * the sampler seed of turn t is the same function of (seed, t) for both.
 */
import type { LanguageModel } from '../models/language-model';
import type { SampleOptions } from '../ops/nn/sample';
import { counterHash } from '../util/counter-rng';

export interface TurnRequest {
  policy: LanguageModel;
  /** The rows so far (prompt, earlier turns and observations), each shorter than maxLength. */
  rows: readonly (readonly number[])[];
  /** Row length L. */
  maxLength: number;
  /** Most tokens this turn writes per row. */
  maxTurnTokens: number;
  stopTokens: readonly number[];
  padToken: number;
  sampling: SampleOptions;
  /** The episode's seed and the turn's index. */
  seed: number;
  turn: number;
}

/** The tokens each row's model wrote this turn, ending with a stop id unless the row filled up. */
export async function generateTurn(request: TurnRequest): Promise<number[][]> {
  const L = request.maxLength;
  const generation = await request.policy.generate({
    prompts: request.rows.map((ids) => Int32Array.from(ids)),
    maxLength: L,
    maxNewTokens: Math.min(request.maxTurnTokens, L - 1),
    stopTokens: request.stopTokens,
    padToken: request.padToken,
    sampling: request.sampling,
    seed: counterHash(request.seed, request.turn, 0x7a9e),
  });
  return request.rows.map((ids, b) => {
    const written: number[] = [];
    for (let t = ids.length; t < L; t++) {
      if (generation.mask[b * L + t] !== 1) break;
      written.push(generation.tokens[b * L + t]!);
    }
    return written;
  });
}
