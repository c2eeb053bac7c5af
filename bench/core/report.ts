/** Turns environment results into the printed tables and the target check. Pure: no I/O. */
import { describeAdapter } from '../../src/gpu/adapter-summary';
import { formatMs, formatTable, gbPerSecond } from './stats';
import type { EnvResult, Measurement, SuiteResult } from './types';

export const SOFTWARE_LABEL = 'software adapter: ranks kernels, not GPU numbers';

/** Targets for the fused log-probs kernel at V = 32768. */
export const TARGETS = { speedupOverPeers: 2, fractionOfCopy: 0.6 } as const;

function sameShape(a: Measurement, b: Measurement): boolean {
  return Object.entries(a.shape).every(([k, v]) => b.shape[k] === v);
}

function find(suite: SuiteResult, impl: string | undefined, like: Measurement) {
  return suite.measurements.find((m) => m.impl === impl && sameShape(m, like) && m.status === 'ok');
}

/** impl GB/s ÷ ceiling GB/s on the same shape, if both ran. */
export function fractionOfCeiling(suite: SuiteResult, m: Measurement): number | undefined {
  const ceiling = find(suite, suite.ceiling, m);
  if (!ceiling?.ms || !m.ms || m.status !== 'ok') return undefined;
  return gbPerSecond(m.bytes, m.ms) / gbPerSecond(ceiling.bytes, ceiling.ms);
}

/** impl ms ÷ baseline ms on the same shape (> 1: the baseline is faster). */
export function ratioToBaseline(suite: SuiteResult, m: Measurement): number | undefined {
  const base = find(suite, suite.baseline, m);
  if (!base?.ms || !m.ms || m.status !== 'ok') return undefined;
  return m.ms / base.ms;
}

export function renderSuite(suite: SuiteResult): string {
  const footnotes: string[] = [];
  const rows = suite.measurements.map((m) => {
    const shape = Object.values(m.shape).map(String);
    if (m.status !== 'ok' || m.ms === undefined) {
      footnotes.push(
        `[${footnotes.length + 1}] ${m.impl} ${shape.join('×')}: ${m.reason ?? m.status}`,
      );
      const err = m.maxAbsErr === undefined ? '–' : m.maxAbsErr.toExponential(1);
      return [m.impl, ...shape, `${m.status} [${footnotes.length}]`, '–', '–', '–', err, '–', '–'];
    }
    const ratio = ratioToBaseline(suite, m);
    const fraction = fractionOfCeiling(suite, m);
    return [
      m.impl,
      ...shape,
      formatMs(m.ms),
      gbPerSecond(m.bytes, m.ms).toFixed(3),
      ratio === undefined ? '–' : `${ratio.toFixed(2)}×`,
      fraction === undefined ? '–' : `${(fraction * 100).toFixed(0)}%`,
      m.maxAbsErr === undefined ? '–' : m.maxAbsErr.toExponential(1),
      String(m.samples?.length ?? 1),
      m.gpuMs === undefined ? '–' : formatMs(m.gpuMs),
    ];
  });
  const shapeKeys = Object.keys(suite.measurements[0]?.shape ?? {});
  const header = [
    'impl',
    ...shapeKeys,
    'median ms',
    'GB/s',
    `ms ÷ ${suite.baseline.split(' ')[0]}`,
    'of copy',
    'max |err|',
    'reps',
    'GPU ms',
  ];
  return [suite.title, formatTable(header, rows), ...footnotes].join('\n');
}

export function renderEnv(result: EnvResult): string {
  const { env } = result;
  const device = env.adapter ? describeAdapter(env.adapter) : 'no WebGPU device of ours';
  const head = `=== ${env.name}: ${device} ===`;
  const lines = [head];
  if (env.software) lines.push(`(${SOFTWARE_LABEL})`);
  lines.push(`runtime: ${env.runtime}`, ...env.notes.map((n) => `note: ${n}`));
  for (const suite of result.suites) lines.push('', renderSuite(suite));
  lines.push('', `(${result.seconds.toFixed(0)} s in this environment)`);
  return lines.join('\n');
}

/** How each suite timed what, once (the notes are the same in every environment). */
export function renderNotes(results: EnvResult[]): string {
  const seen = new Set<string>();
  const lines: string[] = [];
  for (const suite of results.flatMap((r) => r.suites)) {
    if (seen.has(suite.suite)) continue;
    seen.add(suite.suite);
    lines.push(`${suite.suite}:`, ...suite.notes.map((n) => `  - ${n}`));
  }
  return lines.join('\n');
}

/**
 * The fused log-probs kernel's targets at V = 32768: ≥ 2× faster than each GPU peer and ≥ 60% of
 * the copy ceiling. One line per environment and shape, saying met or missed and by how much.
 */
export function renderTargets(results: EnvResult[], suiteName: string, peers: string[]): string[] {
  const lines: string[] = [];
  for (const { env, suites } of results) {
    const suite = suites.find((s) => s.suite === suiteName);
    if (!suite) continue;
    for (const ours of suite.measurements) {
      if (ours.impl !== suite.baseline || ours.shape.V !== 32768) continue;
      const label = `${env.name} ${Object.values(ours.shape).join('×')}`;
      if (ours.status !== 'ok') {
        lines.push(`${label}: ours ${ours.status}: ${ours.reason ?? ''}`);
        continue;
      }
      const parts: string[] = [];
      for (const peer of peers) {
        const m = suite.measurements.find((x) => x.impl === peer && sameShape(x, ours));
        const ratio = m && ratioToBaseline(suite, m);
        if (ratio === undefined) {
          parts.push(`${peer}: ${m?.status ?? 'absent'}`);
          continue;
        }
        const met = ratio >= TARGETS.speedupOverPeers;
        parts.push(
          `${peer} ${ratio.toFixed(2)}× our time (≥${TARGETS.speedupOverPeers}×: ${met ? 'met' : `MISSED, ${((1 - ratio / TARGETS.speedupOverPeers) * 100).toFixed(0)}% short`})`,
        );
      }
      const fraction = fractionOfCeiling(suite, ours);
      if (fraction === undefined) parts.push('copy ceiling: not measured');
      else {
        const met = fraction >= TARGETS.fractionOfCopy;
        const short = `MISSED, needs ${(TARGETS.fractionOfCopy / fraction).toFixed(1)}× less time`;
        parts.push(
          `${(fraction * 100).toFixed(0)}% of copy (≥${TARGETS.fractionOfCopy * 100}%: ${met ? 'met' : short})`,
        );
      }
      lines.push(`${label}: ${parts.join('; ')}`);
    }
  }
  return lines;
}
