/**
 * The difficulty and length biases of the GRPO lesson, from the real group-advantage and
 * loss-aggregation ops. Golden values are worked out by hand in the comments.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { groupBiasRows, LESSON_GROUP_SIZE, tokenWeights } from '../../src/lessons/group-bias';
import { LOSS_AGG_MODES } from '../../src/ops/loss-aggregation';

describe('the difficulty bias: advantages of a group of 8 binary rewards', () => {
  // k successes of G = 8: μ = k/8; Σ(r − μ)² = k(1 − k/8)² + (8 − k)(k/8)² = k(8 − k)/8;
  // unbiased std σ = √(k(8 − k)/56). With the std (ε = 1e-6, negligible at 4 decimals):
  //   success (1 − μ)/σ = √(7(8 − k)/(8k)),  failure −μ/σ = −√(7k/(8(8 − k))).
  // k = 1: σ = √(1/8·7/8·8/7) = √(1/8) = 0.353553; success 0.875/0.353553 = 2.474874,
  //        failure −0.125/0.353553 = −0.353553.
  // k = 2: σ = √(12/56) = 0.462910; success 0.75/σ = 1.620185, failure −0.25/σ = −0.540062.
  // k = 4: σ = √(16/56) = 0.534522; success 0.5/σ = 0.935414, failure −0.935414.
  // k = 6, 7 mirror k = 2, 1 with success and failure swapped.
  // Without the std (Dr. GRPO): success 1 − k/8, failure −k/8.
  it.each([
    [0, null, 0, null, 0],
    [1, 2.474874, -0.353553, 0.875, -0.125],
    [2, 1.620185, -0.540062, 0.75, -0.25],
    [4, 0.935414, -0.935414, 0.5, -0.5],
    [6, 0.540062, -1.620185, 0.25, -0.75],
    [7, 0.353553, -2.474874, 0.125, -0.875],
    [8, 0, null, 0, null],
  ] as const)('k = %i: std on %s / %s, std off %s / %s', (k, sOn, fOn, sOff, fOff) => {
    const on = groupBiasRows('group')[k]!;
    const off = groupBiasRows('none')[k]!;
    const close = (x: number | null, want: number | null) => {
      if (want === null) expect(x).toBeNull();
      else expect(x).toBeCloseTo(want, 4);
    };
    expect(on.k).toBe(k);
    close(on.success, sOn);
    close(on.failure, fOn);
    close(off.success, sOff);
    close(off.failure, fOff);
  });

  it('reports the std the op used: 0 for a group that agrees, √(1/8) for k = 1', () => {
    const rows = groupBiasRows('group');
    expect(rows).toHaveLength(LESSON_GROUP_SIZE + 1);
    expect(rows[0]!.std).toBe(0);
    expect(rows[8]!.std).toBe(0);
    expect(rows[1]!.std).toBeCloseTo(Math.SQRT1_2 / 2, 6); // √(1/8) = √½ / 2
  });

  it('without the std, a success minus a failure is exactly 1 for every k in 1..7', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 7 }), (k) => {
        const row = groupBiasRows('none')[k]!;
        // 1 − k/8 and −k/8 are exact in binary floating point.
        expect(row.success! - row.failure!).toBe(1);
      }),
    );
  });

  it('with the std, every advantage is the Dr. GRPO one divided by σ + ε', () => {
    fc.assert(
      fc.property(fc.integer({ min: 2, max: 64 }), fc.nat(), (g, seed) => {
        const k = 1 + (seed % (g - 1));
        const on = groupBiasRows('group', g)[k]!;
        const off = groupBiasRows('none', g)[k]!;
        expect(on.success!).toBeCloseTo(off.success! / (on.std + 1e-6), 4);
        expect(on.failure!).toBeCloseTo(off.failure! / (on.std + 1e-6), 4);
        // Advantages sum to zero over the group in both modes.
        expect(k * on.success! + (g - k) * on.failure!).toBeCloseTo(0, 4);
        expect(k * off.success! + (g - k) * off.failure!).toBeCloseTo(0, 5);
      }),
    );
  });

  it.each([
    [
      () => groupBiasRows('sideways' as never),
      /stdNormalization must be one of 'group', 'batch', 'none', got 'sideways'/,
    ],
    [() => groupBiasRows('group', 1), /groupSize must be an integer in \[2, 64\], got 1/],
    [() => groupBiasRows('group', 2.5), /groupSize must be an integer in \[2, 64\], got 2\.5/],
    [() => groupBiasRows('none', 65), /groupSize must be an integer in \[2, 64\], got 65/],
  ] as const)('bad input %#: a clear error', (call, message) => {
    expect(call).toThrow(message);
  });
});

describe('the length bias: per-token weights of a 4-token and a 16-token response', () => {
  // B = 2 responses, T = 16 (the longest), a unit loss on each of the 4 + 16 = 20 tokens:
  //   token-mean               1/Σm = 1/20 for every token; responses count 4/20 and 16/20
  //   seq-mean-token-mean      1/(B·n_b): 1/(2·4) = 1/8 and 1/(2·16) = 1/32; each response 1/2
  //   seq-mean-token-sum       1/B = 1/2 for every token; responses 2 and 8
  //   seq-mean-token-sum-norm  1/(B·T) = 1/32 (verl since v0.7.1): Dr. GRPO; responses 4/32 and 16/32
  //   dr-grpo                  1/(B·L_max) = 1/(2·16) = 1/32; responses 4/32 and 16/32
  it.each([
    ['token-mean', 1 / 20, 1 / 20, 0.2, 0.8],
    ['seq-mean-token-mean', 1 / 8, 1 / 32, 0.5, 0.5],
    ['seq-mean-token-sum', 1 / 2, 1 / 2, 2, 8],
    ['seq-mean-token-sum-norm', 1 / 32, 1 / 32, 0.125, 0.5],
    ['dr-grpo', 1 / 32, 1 / 32, 0.125, 0.5],
  ] as const)('%s: %f and %f per token', (mode, short, long, shortTotal, longTotal) => {
    const w = tokenWeights(mode, [4, 16]);
    expect(w.width).toBe(16);
    expect(w.perToken[0]).toBeCloseTo(short, 7);
    expect(w.perToken[1]).toBeCloseTo(long, 7);
    expect(w.perResponse[0]).toBeCloseTo(shortTotal, 6);
    expect(w.perResponse[1]).toBeCloseTo(longTotal, 6);
  });

  it('the constant modes divide by the width: T = 32 halves dr-grpo and sum-norm', () => {
    // dr-grpo and seq-mean-token-sum-norm 1/(2·32) = 1/64; token-mean still 1/20.
    expect(tokenWeights('dr-grpo', [4, 16], 32).perToken).toEqual([
      expect.closeTo(1 / 64, 8),
      expect.closeTo(1 / 64, 8),
    ]);
    expect(tokenWeights('seq-mean-token-sum-norm', [4, 16], 32).perToken[0]).toBeCloseTo(1 / 64, 8);
    expect(tokenWeights('token-mean', [4, 16], 32).perToken[1]).toBeCloseTo(1 / 20, 8);
  });

  it('only seq-mean-token-mean weighs a token by its own response length', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 1, max: 40 }), { minLength: 1, maxLength: 8 }),
        (lengths) => {
          for (const mode of LOSS_AGG_MODES) {
            const w = tokenWeights(mode, lengths);
            if (mode === 'seq-mean-token-mean') {
              // Every response counts 1/B in total, however long.
              for (const total of w.perResponse) expect(total).toBeCloseTo(1 / lengths.length, 5);
            } else {
              // Every token counts the same, so a response counts in proportion to its length.
              for (const x of w.perToken) expect(x).toBeCloseTo(w.perToken[0]!, 7);
            }
          }
          // token-mean and seq-mean-token-mean are means: the weights sum to 1.
          const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);
          expect(sum(tokenWeights('token-mean', lengths).perResponse)).toBeCloseTo(1, 5);
          expect(sum(tokenWeights('seq-mean-token-mean', lengths).perResponse)).toBeCloseTo(1, 5);
        },
      ),
    );
  });

  it.each([
    [() => tokenWeights('mean' as never, [4, 16]), /mode must be one of 'token-mean'/],
    [() => tokenWeights('token-mean', []), /lengths must hold 1 to 64 responses, got 0/],
    [
      () => tokenWeights('token-mean', [4, 0]),
      /lengths\[1\] must be an integer in \[1, 4096\], got 0/,
    ],
    [
      () => tokenWeights('token-mean', [2.5]),
      /lengths\[0\] must be an integer in \[1, 4096\], got 2\.5/,
    ],
    [() => tokenWeights('dr-grpo', [4, 16], 8), /width must be an integer in \[16, 4096\]/],
  ] as const)('bad input %#: a clear error, the lengths untouched', (call, message) => {
    expect(call).toThrow(message);
  });

  it('does not modify the lengths it is given', () => {
    const lengths = [4, 16];
    tokenWeights('seq-mean-token-mean', lengths);
    expect(lengths).toEqual([4, 16]);
  });
});
