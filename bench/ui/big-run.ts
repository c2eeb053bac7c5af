/**
 * A long GRPO run as a lab-run file (src/compare/run-file.ts), for timing the charts at 100k
 * points per series: seeded, noisy curves shaped like a run that learns (reward rising along a
 * logistic, entropy decaying, KL to the reference growing, throughput with occasional dips, KL
 * spikes that the outlier option should ignore), plus two live learning-rate changes so event
 * markers are drawn. Pure: the same arguments give the same text.
 */
import { findAlgorithm, type CompareCatalog } from '../../src/compare/run-record';
import { writeLabRunFile, IMPORT_LIMITS } from '../../src/compare/run-file';
import { gaussian, seededRandom } from '../../src/util/random';

/** The metrics written, one series each; all but the first two have charts of their own too. */
export const BIG_RUN_METRICS = [
  'reward/mean',
  'reward/accuracy',
  'actor/entropy',
  'actor/kl_loss',
  'actor/ppo_kl',
  'actor/pg_clipfrac',
  'frac_reward_zero_std',
  'response_length/mean',
  'perf/tokens_per_s',
] as const;

/** Updates the import accepts with BIG_RUN_METRICS series (IMPORT_LIMITS.maxPoints in all). */
export const MAX_IMPORT_UPDATES = Math.floor(IMPORT_LIMITS.maxPoints / BIG_RUN_METRICS.length);

const clamp = (v: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, v));
/** Four decimals: the file stays a few MB (IMPORT_LIMITS.maxChars is 20 MB). */
const round4 = (v: number) => Math.round(v * 1e4) / 1e4;

/** The lab-run JSON of a GRPO run on `task` with `updates` updates of BIG_RUN_METRICS. */
export function bigRunFile(
  catalog: CompareCatalog,
  updates: number,
  seed: number,
  task = 'copy',
): string {
  const grpo = findAlgorithm(catalog, 'grpo');
  if (!grpo) throw new Error('the catalog has no grpo algorithm');
  const next = seededRandom(seed);
  const noise = () => gaussian(next);
  const metrics: Record<string, number[]> = Object.fromEntries(
    BIG_RUN_METRICS.map((name) => [name, new Array<number>(updates)]),
  );
  const put = (name: (typeof BIG_RUN_METRICS)[number], i: number, v: number) => {
    metrics[name]![i] = v;
  };
  // Rollouts score promptsPerUpdate × groupSize completions per update.
  const completions =
    Number(grpo.defaults.promptsPerUpdate ?? 8) * Number(grpo.defaults.groupSize ?? 4);
  for (let i = 0; i < updates; i++) {
    const t = updates > 1 ? i / (updates - 1) : 0;
    const p = 1 / (1 + Math.exp(-12 * (t - 0.3)));
    put('reward/mean', i, round4(clamp(0.15 + 0.75 * p + 0.08 * noise(), 0, 1)));
    const successes = Math.round(clamp(0.05 + 0.9 * p + 0.1 * noise(), 0, 1) * completions);
    put('reward/accuracy', i, round4(successes / completions));
    put('actor/entropy', i, round4(Math.max(0, 0.25 + 2 * Math.exp(-4 * t) + 0.05 * noise())));
    const spike = i % 7919 === 7918 ? 10 : 1;
    put('actor/kl_loss', i, round4(spike * Math.abs(0.002 + 0.03 * p + 0.004 * noise())));
    put('actor/ppo_kl', i, round4(Math.abs(0.001 + 0.0015 * noise())));
    put('actor/pg_clipfrac', i, round4(clamp(0.04 + 0.015 * noise(), 0, 1)));
    put('frac_reward_zero_std', i, round4(clamp(0.7 * (1 - p) + 0.1 * p + 0.08 * noise(), 0, 1)));
    put('response_length/mean', i, round4(Math.max(1, 5 + 1.5 * (1 - p) + 0.3 * noise())));
    const dip = i % 5003 < 3 ? 0.35 : 1;
    put('perf/tokens_per_s', i, Math.round(10 * dip * (900 + 40 * noise())) / 10);
  }
  const lr = grpo.defaults.lr;
  const events =
    typeof lr === 'number' && grpo.spec.lr?.live
      ? [0.3, 0.6].map((at, k) => ({
          step: Math.max(1, Math.round(at * updates)),
          kind: 'hyperparams' as const,
          changes: { lr: lr / 2 ** (k + 1) },
        }))
      : [];
  return writeLabRunFile({
    algorithm: 'grpo',
    task,
    seed,
    config: { ...grpo.defaults },
    backend: 'cpu',
    label: `grpo on ${task}, ${updates.toLocaleString('en')} updates (bench)`,
    metrics,
    events,
  });
}
