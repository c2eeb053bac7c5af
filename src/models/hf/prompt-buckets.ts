/**
 * Which prompts a batched generator runs together. One batch pads every prompt to the longest
 * (llama-gpu-generate.ts): for GRPO's prompts, of similar lengths, that is one prefill and one
 * decode loop for all. A prompt much longer than the rest would make every sequence pay for its
 * length (B × its length rows of prefill, and of KV cache), so prompts are taken shortest first
 * and a batch is closed before a prompt that would make its padded rows more than PAD_LIMIT times
 * its real ones.
 */

/** Padded rows (count × the longest) allowed per real row of prompt in one batch. */
export const PAD_LIMIT = 2;

/**
 * The prompt indices of each batch: every index once, ascending within a batch, batches in order
 * of their shortest prompt. Lengths are whole numbers ≥ 1 (the generator has checked them).
 */
export function promptBuckets(lengths: readonly number[]): number[][] {
  const order = lengths.map((_, i) => i).sort((a, b) => lengths[a]! - lengths[b]! || a - b);
  const buckets: number[][] = [];
  let bucket: number[] = [];
  let rows = 0;
  for (const i of order) {
    const length = lengths[i]!;
    // Sorted ascending, so this prompt is the bucket's longest if it joins.
    if (bucket.length > 0 && (bucket.length + 1) * length > PAD_LIMIT * (rows + length)) {
      buckets.push(bucket.sort((a, b) => a - b));
      bucket = [];
      rows = 0;
    }
    bucket.push(i);
    rows += length;
  }
  if (bucket.length > 0) buckets.push(bucket.sort((a, b) => a - b));
  return buckets;
}
