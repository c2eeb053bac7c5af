/**
 * Which metrics the compare view draws: the key metrics (one small multiple each, in a fixed
 * order, with a readable title) and the others offered by the "more metrics" picker.
 */

/**
 * The small multiples, in this order, each drawn when any run logged it. Alternatives for other
 * algorithm families sit next to their counterpart (CleanRL's names for the environment PPO), and
 * each is its own chart: two different metrics never share an axis.
 */
export const KEY_METRICS: readonly { metric: string; title: string }[] = [
  { metric: 'reward/mean', title: 'Reward' },
  { metric: 'charts/episodic_return', title: 'Episode return' },
  { metric: 'charts/episodic_length', title: 'Episode length' },
  { metric: 'reward/accuracy', title: 'Success rate' },
  { metric: 'retained/success_rate', title: 'Retained task success' },
  { metric: 'actor/entropy', title: 'Policy entropy' },
  { metric: 'losses/entropy', title: 'Policy entropy' },
  { metric: 'actor/ppo_kl', title: 'KL to the rollout policy' },
  { metric: 'actor/kl_loss', title: 'KL to the reference' },
  { metric: 'losses/approx_kl', title: 'Approximate KL' },
  { metric: 'actor/pg_clipfrac', title: 'Clip fraction' },
  { metric: 'losses/clipfrac', title: 'Clip fraction' },
  { metric: 'frac_reward_zero_std', title: 'Groups with zero reward std' },
  { metric: 'response_length/mean', title: 'Response length' },
  { metric: 'critic/vf_loss', title: 'Value loss' },
  { metric: 'losses/value_loss', title: 'Value loss' },
  { metric: 'perf/tokens_per_s', title: 'Throughput (tokens/s)' },
  { metric: 'tools/call_frequency', title: 'Tool calls per episode' },
];

const KEY_NAMES = new Set(KEY_METRICS.map((k) => k.metric));

/** A chart's heading: the key metric's title, or the metric name for any other metric. */
export function metricTitle(metric: string): string {
  return KEY_METRICS.find((k) => k.metric === metric)?.title ?? metric;
}

/**
 * The charts to draw: the key metrics some run logged, in KEY_METRICS order, then `extra` (the
 * "more metrics" picker) when some run logged it and it is not already there.
 */
export function chartMetrics(present: ReadonlySet<string>, extra?: string): string[] {
  const out = KEY_METRICS.map((k) => k.metric).filter((m) => present.has(m));
  if (extra && present.has(extra) && !out.includes(extra)) out.push(extra);
  return out;
}

/** The picker's choices: every logged metric that has no chart of its own, sorted. */
export function moreMetrics(present: ReadonlySet<string>): string[] {
  return [...present].filter((m) => !KEY_NAMES.has(m)).sort();
}
