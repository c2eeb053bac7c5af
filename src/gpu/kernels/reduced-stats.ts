/**
 * The statistics the loss aggregation's reduce pass (kernels/loss_aggregation_reduce.wgsl) writes
 * for a loss kernel, by name. Such a kernel writes per-row partials whose columns it names as
 * `const COL_NAME = k;` constants: Σ m·ℓ (COL_LOSS_SUM) and Σ m (COL_TOKENS) first, then one
 * numerator per statistic, and `const PARTIALS = n;` their count. The reduce pass writes the loss
 * at out[0] and column k ≥ 2 as its mean at out[k − 1]. Reading the columns from the kernel keeps
 * the column count and each statistic's place in one file, the shader.
 */
import { reflectConstant, reflectSlots } from '../wgsl-reflect';

export interface ReducedStats<K extends string> {
  /** Columns of the per-row partials (the kernel's PARTIALS). */
  readonly columns: number;
  /** Floats of the reduce pass's output: the loss, then the statistics. */
  readonly length: number;
  read(values: ArrayLike<number>): Record<'loss' | K, number>;
}

/**
 * The reduced statistics of the loss kernel `wgsl`, whose statistic columns must be `stats` in
 * this order (camelCase of the COL_ names); a kernel that disagrees is refused when loaded.
 */
export function reducedStats<K extends string>(
  name: string,
  wgsl: string,
  stats: readonly K[],
): ReducedStats<K> {
  const expected = ['lossSum', 'tokens', ...stats];
  const declared = [...reflectSlots(wgsl, 'COL_')].sort((a, b) => a[1] - b[1]).map(([n]) => n);
  const columns = reflectConstant(wgsl, 'PARTIALS');
  if (declared.join() !== expected.join() || columns !== expected.length) {
    throw new Error(
      `${name}: columns [${declared.join(', ')}] and PARTIALS = ${columns} do not match ` +
        `[${expected.join(', ')}]`,
    );
  }
  return {
    columns,
    length: 1 + stats.length,
    read(values) {
      if (values.length < 1 + stats.length) {
        throw new Error(`${name}: ${1 + stats.length} statistics expected, got ${values.length}`);
      }
      const record: Record<string, number> = { loss: values[0]! };
      stats.forEach((stat, k) => (record[stat] = values[k + 1]!));
      return record as Record<'loss' | K, number>;
    },
  };
}
