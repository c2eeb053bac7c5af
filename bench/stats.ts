/** Small helpers shared by the benchmarks. */

export function median(values: number[]): number {
  if (values.length === 0) throw new Error('median of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Median wall time of `reps` calls of a synchronous function, after one warm-up call. */
export function timeCpu(reps: number, fn: () => void): number {
  fn();
  const times: number[] = [];
  for (let i = 0; i < reps; i++) {
    const start = performance.now();
    fn();
    times.push(performance.now() - start);
  }
  return median(times);
}

/** GB/s for `bytes` moved in `ms` milliseconds. */
export function gbPerSecond(bytes: number, ms: number): number {
  return bytes / (ms * 1e-3) / 1e9;
}

/** Renders rows of cells as an aligned plain-text table. */
export function formatTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i]!)).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}
