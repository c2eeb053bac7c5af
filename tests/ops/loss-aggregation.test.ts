import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../src/ops/errors';
import {
  LOSS_AGG_MODES,
  type LossAggMode,
  type LossAggOptions,
  aggregateLoss,
} from '../../src/ops/loss-aggregation';
import { randomLogits, seededRandom } from '../support/random';

// Hand-worked ragged case, B = 2, T = 3:
//   tokenLoss [[1, 2, 3], [4, 100, 100]], mask [[1, 1, 1], [1, 0, 0]]
//   row sums Σ_t m·ℓ = 6 and 4 (the 100s are masked), row tokens 3 and 1, Σ m = 4.
const TOKEN_LOSS = new Float32Array([1, 2, 3, 4, 100, 100]);
const MASK = new Float32Array([1, 1, 1, 1, 0, 0]);

describe('aggregateLoss (CPU reference)', () => {
  it.each<[LossAggMode, Partial<LossAggOptions>, number, [number, number]]>([
    // (6 + 4) / 4 = 2.5; every unmasked token weighs 1/4.
    ['token-mean', {}, 2.5, [1 / 4, 1 / 4]],
    // Row means 6/3 = 2 and 4/1 = 4, mean 3; weights 1/(2·3) and 1/(2·1).
    ['seq-mean-token-mean', {}, 3, [1 / 6, 1 / 2]],
    // Row sums 6 and 4 averaged over B = 2 rows: 5; weights 1/2.
    ['seq-mean-token-sum', {}, 5, [1 / 2, 1 / 2]],
    // verl since v0.7.1: Σ = 10 divided by B · the default lossScaleFactor T = 2 · 3; weights 1/6
    // (before, verl divided by the factor alone: 10/3).
    ['seq-mean-token-sum-norm', {}, 10 / 6, [1 / 6, 1 / 6]],
    // ... or by B · lossScaleFactor 4 = 8: 1.25; weights 1/8.
    ['seq-mean-token-sum-norm', { lossScaleFactor: 4 }, 1.25, [1 / 8, 1 / 8]],
    // 10 / (B · T) = 10 / 6; weights 1/6.
    ['dr-grpo', {}, 10 / 6, [1 / 6, 1 / 6]],
    // 10 / (B · maxCompletionLength) = 10 / (2 · 5) = 1; weights 1/10.
    ['dr-grpo', { maxCompletionLength: 5 }, 1, [1 / 10, 1 / 10]],
  ])('%s %j matches the hand-worked ragged case', (mode, extra, loss, [w0, w1]) => {
    const out = aggregateLoss(TOKEN_LOSS, MASK, 2, 3, { mode, ...extra });
    expect(out.loss).toBeCloseTo(loss, 12);
    expect(out.tokens).toBe(4);
    expect(out.emptyMask).toBe(false);
    const expected = [w0, w0, w0, w1, 0, 0];
    out.weights.forEach((w, i) => expect(w).toBeCloseTo(expected[i]!, 7));
  });

  it('empty rows: out of seq-mean-token-mean always, out of R for verl (counted for trl / openrlhf), in B for dr-grpo', () => {
    // Add an all-masked third row: rows [1, 2, 3], [4, ·, ·], [·, ·, ·].
    const tokenLoss = new Float32Array([1, 2, 3, 4, 100, 100, 7, 7, 7]);
    const mask = new Float32Array([1, 1, 1, 1, 0, 0, 0, 0, 0]);
    const loss = (options: LossAggOptions) => aggregateLoss(tokenLoss, mask, 3, 3, options).loss;
    // Mean over the two non-empty rows: (2 + 4) / 2 = 3, not (2 + 4 + 0/0) / 3.
    expect(loss({ mode: 'seq-mean-token-mean' })).toBe(3);
    // Row sums 6, 4, 0. verl (the default flavor) divides by the 2 rows with tokens: 5.
    expect(loss({ mode: 'seq-mean-token-sum' })).toBeCloseTo(5, 12);
    expect(loss({ mode: 'seq-mean-token-sum', flavor: 'verl' })).toBeCloseTo(5, 12);
    // Counting every row (older verl; the trl and openrlhf flavors): 10 / 3.
    expect(loss({ mode: 'seq-mean-token-sum', emptyRows: 'count' })).toBeCloseTo(10 / 3, 12);
    expect(loss({ mode: 'seq-mean-token-sum', flavor: 'openrlhf' })).toBeCloseTo(10 / 3, 12);
    // An explicit option wins over the flavor.
    expect(loss({ mode: 'seq-mean-token-sum', flavor: 'trl', emptyRows: 'exclude' })).toBeCloseTo(
      5,
      12,
    );
    // seq-mean-token-sum-norm: 10 / (R · T) with R = 2 (verl) or 3 (count).
    expect(loss({ mode: 'seq-mean-token-sum-norm' })).toBeCloseTo(10 / 6, 12);
    expect(loss({ mode: 'seq-mean-token-sum-norm', emptyRows: 'count' })).toBeCloseTo(10 / 9, 12);
    // dr-grpo divides by every row, as TRL does: 10 / (3 · 3).
    expect(loss({ mode: 'dr-grpo' })).toBeCloseTo(10 / 9, 12);
    expect(loss({ mode: 'dr-grpo', emptyRows: 'exclude' })).toBeCloseTo(10 / 9, 12);
  });

  it('rejects an unknown emptyRows or flavor, naming it', () => {
    const bad = { mode: 'seq-mean-token-sum', emptyRows: 'some' } as unknown as LossAggOptions;
    expect(() => aggregateLoss(TOKEN_LOSS, MASK, 2, 3, bad)).toThrow(OpInputError);
    expect(() => aggregateLoss(TOKEN_LOSS, MASK, 2, 3, bad)).toThrow(/emptyRows/);
    const flavor = { mode: 'token-mean', flavor: 'x' } as unknown as LossAggOptions;
    expect(() => aggregateLoss(TOKEN_LOSS, MASK, 2, 3, flavor)).toThrow(
      /flavor must be one of verl, trl, openrlhf/,
    );
  });

  it.each(LOSS_AGG_MODES)(
    '%s: an all-zero mask gives loss 0, weights 0, emptyMask (no NaN)',
    (mode) => {
      const out = aggregateLoss(randomLogits(6, 5, 1), new Float32Array(6), 2, 3, { mode });
      expect(out).toMatchObject({ loss: 0, tokens: 0, emptyMask: true });
      expect(Array.from(out.weights)).toEqual([0, 0, 0, 0, 0, 0]);
    },
  );

  const arbitraryCase = fc.record({
    rows: fc.integer({ min: 1, max: 6 }),
    cols: fc.integer({ min: 1, max: 12 }),
    seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
    mode: fc.constantFrom(...LOSS_AGG_MODES),
  });

  function ragged(rows: number, cols: number, seed: number): Float32Array {
    const next = seededRandom(seed);
    return Float32Array.from({ length: rows * cols }, () => (next() < 0.6 ? 1 : 0));
  }

  it('property: the loss is Σ weights·ℓ, and weights are 0 where masked', () => {
    fc.assert(
      fc.property(arbitraryCase, ({ rows, cols, seed, mode }) => {
        const tokenLoss = randomLogits(rows * cols, 10, seed);
        const mask = ragged(rows, cols, seed + 1);
        const out = aggregateLoss(tokenLoss, mask, rows, cols, { mode });
        let dot = 0;
        for (let i = 0; i < tokenLoss.length; i++) {
          dot += out.weights[i]! * tokenLoss[i]!;
          if (mask[i] === 0) expect(out.weights[i]).toBe(0);
        }
        expect(out.loss).toBeCloseTo(dot, 5);
      }),
      { numRuns: 200 },
    );
  });

  it('property: masked token losses never change the loss or the weights', () => {
    fc.assert(
      fc.property(arbitraryCase, ({ rows, cols, seed, mode }) => {
        const tokenLoss = randomLogits(rows * cols, 10, seed);
        const mask = ragged(rows, cols, seed + 1);
        const changed = tokenLoss.map((v, i) => (mask[i] === 0 ? v * 1e3 - 17 : v));
        const a = aggregateLoss(tokenLoss, mask, rows, cols, { mode });
        const b = aggregateLoss(changed, mask, rows, cols, { mode });
        expect(b.loss).toBe(a.loss);
        expect(Array.from(b.weights)).toEqual(Array.from(a.weights));
      }),
      { numRuns: 200 },
    );
  });

  it('property: the two mean modes return c for a constant loss c, and their weights sum to 1', () => {
    fc.assert(
      fc.property(
        arbitraryCase,
        fc.double({ min: -100, max: 100, noNaN: true }),
        ({ rows, cols, seed }, c) => {
          const mask = ragged(rows, cols, seed);
          if (!mask.some((m) => m === 1)) return;
          const tokenLoss = new Float32Array(rows * cols).fill(c);
          for (const mode of ['token-mean', 'seq-mean-token-mean'] as const) {
            const out = aggregateLoss(tokenLoss, mask, rows, cols, { mode });
            expect(out.loss).toBeCloseTo(Math.fround(c), 4);
            expect(out.weights.reduce((s, w) => s + w, 0)).toBeCloseTo(1, 5);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  const ok = new Float32Array(6);
  const mode = 'token-mean' as const;
  it.each<[string, () => unknown, RegExp]>([
    ['rows', () => aggregateLoss(ok, ok, 0, 6, { mode }), /rows must be an integer in \[1, /],
    [
      'tokenLoss length',
      () => aggregateLoss(ok.slice(1), ok, 2, 3, { mode }),
      /tokenLoss must have rows × cols = 2 × 3 = 6 elements, got 5/,
    ],
    [
      'mask length',
      () => aggregateLoss(ok, new Float32Array(7), 2, 3, { mode }),
      /mask must have rows × cols = 2 × 3 = 6 elements, got 7/,
    ],
    [
      'NaN token loss',
      () => aggregateLoss(new Float32Array([0, 0, 0, 0, NaN, 0]), ok, 2, 3, { mode }),
      /tokenLoss must be finite, but index 4 \(row 1, col 1\) is NaN/,
    ],
    [
      'non-binary mask',
      () => aggregateLoss(ok, new Float32Array([1, 0, 0.5, 0, 0, 0]), 2, 3, { mode }),
      /mask must be 0 or 1, but index 2 \(row 0, col 2\) is 0.5/,
    ],
    [
      'mode',
      () => aggregateLoss(ok, ok, 2, 3, { mode: 'bnpo' as LossAggMode }),
      /mode must be one of .*'token-mean'.*got 'bnpo'/,
    ],
    [
      'lossScaleFactor 0',
      () => aggregateLoss(ok, ok, 2, 3, { mode, lossScaleFactor: 0 }),
      /lossScaleFactor must be in \(0, ∞\), got 0/,
    ],
    [
      'lossScaleFactor Infinity',
      () => aggregateLoss(ok, ok, 2, 3, { mode, lossScaleFactor: Infinity }),
      /lossScaleFactor must be in \(0, ∞\), got Infinity/,
    ],
    [
      'maxCompletionLength',
      () => aggregateLoss(ok, ok, 2, 3, { mode, maxCompletionLength: 2.5 }),
      /maxCompletionLength must be an integer in \[1, /,
    ],
  ])('rejects bad %s with an OpInputError naming it', (_name, call, pattern) => {
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(pattern);
  });
});
