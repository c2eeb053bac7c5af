/**
 * Threads per row for the one-workgroup-per-row kernels (log-softmax, token log-probs, entropy).
 * Every such kernel reduces with a power-of-two tree, so the sizes are powers of two ≤ 256 (the
 * spec's default maxComputeInvocationsPerWorkgroup).
 */
import type { AdapterSummary } from '../adapter-summary';

export const ROW_WORKGROUP_SIZES = [32, 64, 128, 256] as const;
export type RowWorkgroupSize = (typeof ROW_WORKGROUP_SIZES)[number];

/**
 * Threads per row. On a hardware GPU, enough threads to cover the row in a few strides. On a
 * fallback (software) adapter every invocation is CPU work and each barrier a context switch, so
 * the fewest threads win: measured on SwiftShader with 2 cores, 32 threads beat 256 by 15× at
 * V = 64 and by 1.5–3× at V = 4096–32768.
 */
export function defaultRowWorkgroupSize(summary: AdapterSummary, cols: number): RowWorkgroupSize {
  if (summary.isFallbackAdapter || summary.architecture === 'swiftshader') return 32;
  if (cols <= 256) return 64;
  if (cols <= 2048) return 128;
  return 256;
}

/** `workgroupSize` if given (checked), else the default for this adapter and row length. */
export function resolveRowWorkgroupSize(
  op: string,
  summary: AdapterSummary,
  cols: number,
  workgroupSize: number | undefined,
): RowWorkgroupSize {
  const size = workgroupSize ?? defaultRowWorkgroupSize(summary, cols);
  if (!(ROW_WORKGROUP_SIZES as readonly number[]).includes(size)) {
    throw new RangeError(
      `${op}: workgroupSize must be one of ${ROW_WORKGROUP_SIZES.join(', ')}, got ${size}`,
    );
  }
  return size as RowWorkgroupSize;
}
