import { describe, expect, it } from 'vitest';
import { nextToken, startGeneration } from '../../../src/ops/nn/next-token';
import { OpInputError } from '../../../src/ops/errors';

// Two rows, L = 6. Row 0: prompt [1, 7, 8] (length 3); row 1: prompt [1] (length 1). PAD = 0,
// stop token 2, at most 3 new tokens.
const shape = { batch: 2, promptWidth: 3, maxLength: 6 };
const prompts = Int32Array.from([1, 7, 8, 1, 0, 0]);
const lengths = Int32Array.from([3, 1]);
const rule = { stopTokens: Int32Array.from([2]), maxNewTokens: 3, padToken: 0 };

function run(samples: number[][]) {
  const state = startGeneration(prompts, shape, 0);
  samples.forEach((s, pos) =>
    nextToken(
      state,
      prompts,
      lengths,
      Int32Array.from(s),
      Float32Array.from(s.map((t) => -t / 10)),
      pos,
      shape,
      rule,
    ),
  );
  return state;
}

describe('nextToken', () => {
  it('forces prompts, takes samples after them, stops on a stop token and pads', () => {
    // pos 0: row 0 forced 7, row 1 samples 5; pos 1: row 0 forced 8, row 1 samples 2 (stop);
    // pos 2: row 0 samples 4, row 1 done → pad; pos 3: row 0 samples 6; pos 4: row 0 samples 9
    // — its third new token, the budget: done.
    const state = run([
      [3, 5],
      [3, 2],
      [4, 9],
      [6, 9],
      [9, 9],
    ]);
    expect([...state.tokens]).toEqual([1, 7, 8, 4, 6, 9, 1, 5, 2, 0, 0, 0]);
    expect([...state.mask]).toEqual([0, 0, 0, 1, 1, 1, 0, 1, 1, 0, 0, 0]);
    expect([...state.logprobs].map((x) => Math.round(x * 10))).toEqual([
      0, 0, 0, -4, -6, -9, 0, -5, -2, 0, 0, 0,
    ]);
    expect([...state.done]).toEqual([1, 1]);
  });

  it('keeps a stopped row stopped even if later samples are not stop tokens', () => {
    const state = run([
      [3, 2],
      [3, 5],
    ]);
    expect([...state.tokens.subarray(6, 9)]).toEqual([1, 2, 0]);
    expect(state.input[1]).toBe(0);
  });

  it('rejects a position past the sequence', () => {
    const state = startGeneration(prompts, shape, 0);
    const z = new Int32Array(2);
    expect(() =>
      nextToken(state, prompts, lengths, z, new Float32Array(2), 5, shape, rule),
    ).toThrow(OpInputError);
  });
});
