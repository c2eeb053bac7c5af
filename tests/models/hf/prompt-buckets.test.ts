import { describe, expect, it } from 'vitest';
import { PAD_LIMIT, promptBuckets } from '../../../src/models/hf/prompt-buckets';

/** Padded rows over real rows of one bucket. */
function padding(lengths: readonly number[], bucket: readonly number[]): number {
  const real = bucket.reduce((s, i) => s + lengths[i]!, 0);
  return (bucket.length * Math.max(...bucket.map((i) => lengths[i]!))) / real;
}

describe('promptBuckets', () => {
  it('keeps prompts of similar lengths in one batch, whatever their order', () => {
    expect(promptBuckets([5, 5, 7, 3])).toEqual([[0, 1, 2, 3]]);
    // A GRPO batch: 4 prompts × 8 answers of 21–27 tokens, interleaved.
    const grpo = Array.from({ length: 32 }, (_, i) => [21, 27, 23, 24][i % 4]!);
    expect(promptBuckets(grpo)).toEqual([grpo.map((_, i) => i)]);
  });

  it('runs a prompt far longer than the rest apart, so the short ones do not pad to it', () => {
    expect(promptBuckets([10, 2000, 12, 11])).toEqual([[0, 2, 3], [1]]);
    expect(promptBuckets([1, 1, 1, 1, 40, 40])).toEqual([
      [0, 1, 2, 3],
      [4, 5],
    ]);
  });

  it('covers every index once, each bucket within the padding limit', () => {
    let seed = 7;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let trial = 0; trial < 50; trial++) {
      const lengths = Array.from({ length: 1 + Math.floor(random() * 40) }, () =>
        random() < 0.2 ? 1 + Math.floor(random() * 500) : 20 + Math.floor(random() * 10),
      );
      const buckets = promptBuckets(lengths);
      expect(buckets.flat().sort((a, b) => a - b)).toEqual(lengths.map((_, i) => i));
      for (const bucket of buckets) {
        expect(bucket).toEqual([...bucket].sort((a, b) => a - b));
        if (bucket.length > 1) expect(padding(lengths, bucket)).toBeLessThanOrEqual(PAD_LIMIT);
      }
    }
  });
});
