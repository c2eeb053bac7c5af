/**
 * Caps what one metrics message carries. Tabular runs can do 10⁵ updates a second; sending each
 * would flood the page. When a batch holds more than `max` points, consecutive updates are merged
 * into `max` buckets: each bucket's step is its last update, each metric the mean over the updates
 * of the bucket that reported it.
 */
import type { MetricPoint } from './run-protocol';

export function bucketPoints(points: readonly MetricPoint[], max: number): MetricPoint[] {
  if (points.length <= max) return [...points];
  const out: MetricPoint[] = [];
  for (let b = 0; b < max; b++) {
    const from = Math.floor((b * points.length) / max);
    const to = Math.floor(((b + 1) * points.length) / max);
    const sums: Record<string, { total: number; count: number }> = {};
    for (let i = from; i < to; i++) {
      for (const [name, value] of Object.entries(points[i]!.metrics)) {
        const s = (sums[name] ??= { total: 0, count: 0 });
        s.total += value;
        s.count += 1;
      }
    }
    const metrics = Object.fromEntries(
      Object.entries(sums).map(([name, s]) => [name, s.total / s.count]),
    );
    out.push({ step: points[to - 1]!.step, metrics });
  }
  return out;
}
