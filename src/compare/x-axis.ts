/**
 * X-axes for the compare charts: update number, environment steps, sampled tokens, training time.
 * Each is derived from what a run actually logged; where a run did not log enough to know, the
 * axis is "unavailable" with the reason, never estimated from guesses. Cumulative axes (a running
 * sum of per-update amounts) become NaN from the first update whose amount is unknown on, because
 * every later total would be wrong; the note says where.
 *
 * Sources, first that the run has wins:
 *   env_steps   charts/env_steps (cumulative, PPO-MLP and REINFORCE log it)
 *               Σ charts/episodic_length (Q-learning, SARSA: one update = one episode)
 *   tokens      Σ perf/generated_tokens (proposed metric: tokens generated this update, dropped
 *               dynamic-sampling groups included)
 *               Σ response_length/mean × completions per update (from the config in force)
 *   wall_time   Σ timing_s/step (proposed metric, verl's name: seconds of the update)
 *               Σ tokens_u / perf/tokens_per_s_u (language models: the trainers compute
 *               tokens_per_s as generated tokens / seconds of the update, so this is exact)
 *               charts/env_steps / charts/SPS (PPO-MLP: SPS = env steps / training seconds so
 *               far, rounded to an integer, so this is approximate)
 * Time is training time — seconds spent inside update() — not clock time: pauses and the UI's
 * time between updates are not in it.
 */
import { configAt, updateCount, type RunRecord, type Settings } from './run-record';

export const X_AXES = ['update', 'env_steps', 'tokens', 'wall_time'] as const;
export type XAxis = (typeof X_AXES)[number];

/** Axis titles for the chart. */
export const X_AXIS_LABELS: Record<XAxis, string> = {
  update: 'update',
  env_steps: 'environment steps',
  tokens: 'sampled tokens',
  wall_time: 'training time (s)',
};

export type XValues =
  | {
      ok: true;
      axis: XAxis;
      /** One x per update (index i = update i + 1); NaN where unknown. */
      values: number[];
      /** Which metrics it came from, e.g. 'Σ response_length/mean × promptsPerUpdate × groupSize'. */
      source: string;
      /** What to know about it: approximate, or unknown after some update. */
      note?: string;
    }
  | { ok: false; axis: XAxis; reason: string };

/** Metrics the trainers do not log yet; picked up as soon as they do (see the module comment). */
export const PROPOSED_METRICS = {
  generatedTokens: 'perf/generated_tokens',
  stepSeconds: 'timing_s/step',
} as const;

/** Completions one update generates, from the config in force (language-model algorithms). */
const COMPLETIONS_PER_UPDATE: Record<string, { formula: string; count: (c: Settings) => number }> =
  {
    grpo: {
      formula: 'promptsPerUpdate × groupSize',
      count: (c) => Number(c.promptsPerUpdate) * Number(c.groupSize),
    },
    ppo: { formula: 'promptsPerUpdate', count: (c) => Number(c.promptsPerUpdate) },
    dpo: {
      formula: 'promptsPerUpdate × samplesPerPrompt',
      count: (c) => Number(c.promptsPerUpdate) * Number(c.samplesPerPrompt),
    },
  };

/** Algorithms whose update is exactly one episode. */
const ONE_EPISODE_PER_UPDATE = new Set(['q-learning', 'sarsa']);

/** Planners sweep a known model and take no environment steps. */
const PLANNERS = new Set(['value-iteration', 'policy-iteration']);

/** x for every update of `run` on `axis`, or why it cannot be had. */
export function xValues(run: RunRecord, axis: XAxis): XValues {
  const n = updateCount(run);
  switch (axis) {
    case 'update':
      return {
        ok: true,
        axis,
        values: Array.from({ length: n }, (_, i) => i + 1),
        source: 'update number',
      };
    case 'env_steps':
      return envSteps(run, n);
    case 'tokens':
      return tokens(run, n);
    case 'wall_time':
      return wallTime(run, n);
  }
}

function envSteps(run: RunRecord, n: number): XValues {
  const axis = 'env_steps';
  const logged = run.metrics['charts/env_steps'];
  if (logged) {
    return {
      ok: true,
      axis,
      values: logged.map((v) => (Number.isFinite(v) ? v : NaN)),
      source: 'charts/env_steps',
    };
  }
  const lengths = run.metrics['charts/episodic_length'];
  if (ONE_EPISODE_PER_UPDATE.has(run.algorithm) && lengths) {
    return cumulative(axis, padded(lengths, n), 'Σ charts/episodic_length', 'episode length');
  }
  if (run.algorithm in COMPLETIONS_PER_UPDATE) {
    return {
      ok: false,
      axis,
      reason: `${run.algorithm} trains a language model and takes no environment steps; use sampled tokens`,
    };
  }
  if (PLANNERS.has(run.algorithm)) {
    return {
      ok: false,
      axis,
      reason: `${run.algorithm} plans over the known model and takes no environment steps`,
    };
  }
  return {
    ok: false,
    axis,
    reason: `this ${run.algorithm} run did not log charts/env_steps`,
  };
}

/** Tokens generated per update, or why they are unknown. */
function tokensPerUpdate(
  run: RunRecord,
  n: number,
):
  { ok: true; perUpdate: number[]; source: string; note?: string } | { ok: false; reason: string } {
  const logged = run.metrics[PROPOSED_METRICS.generatedTokens];
  if (logged) {
    return { ok: true, perUpdate: padded(logged, n), source: PROPOSED_METRICS.generatedTokens };
  }
  const completions = COMPLETIONS_PER_UPDATE[run.algorithm];
  if (!completions) {
    return {
      ok: false,
      reason: `${run.algorithm} is not a language-model algorithm: it samples no tokens`,
    };
  }
  const lengths = run.metrics['response_length/mean'];
  if (!lengths) {
    return { ok: false, reason: `this ${run.algorithm} run did not log response_length/mean` };
  }
  // The count changes only at live changes: worked out once per stretch between them (a config
  // per update would copy the settings 100k times for a 100k-update run).
  const steps = [
    ...new Set(run.events.flatMap((e) => (e.kind === 'hyperparams' ? [e.step] : []))),
  ].sort((a, b) => a - b);
  const counts = new Map<number, number>();
  let applied = 0;
  const perUpdate = Array.from({ length: n }, (_, i) => {
    while (applied < steps.length && steps[applied]! <= i + 1) applied++;
    let count = counts.get(applied);
    if (count === undefined) {
      count = completions.count(configAt(run, i + 1));
      counts.set(applied, count);
    }
    return (lengths[i] ?? NaN) * count;
  });
  // Dynamic sampling (DAPO) generates extra rounds whose dropped groups are not in
  // response_length/mean; those tokens are not counted.
  const rounds = run.metrics['dynamic_sampling/rounds'];
  const extra = rounds?.findIndex((r) => r > 1) ?? -1;
  const note =
    extra >= 0
      ? `counts the completions trained on; from update ${extra + 1} dynamic sampling generated ` +
        `extra rounds whose dropped groups are not counted (log ${PROPOSED_METRICS.generatedTokens} to count them)`
      : undefined;
  return {
    ok: true,
    perUpdate,
    source: `Σ response_length/mean × ${completions.formula}`,
    ...(note ? { note } : {}),
  };
}

function tokens(run: RunRecord, n: number): XValues {
  const per = tokensPerUpdate(run, n);
  if (!per.ok) return { ok: false, axis: 'tokens', reason: per.reason };
  const result = cumulative('tokens', per.perUpdate, per.source, 'token count');
  return withNote(result, per.note);
}

function wallTime(run: RunRecord, n: number): XValues {
  const axis = 'wall_time';
  const seconds = run.metrics[PROPOSED_METRICS.stepSeconds];
  if (seconds) {
    return cumulative(axis, padded(seconds, n), `Σ ${PROPOSED_METRICS.stepSeconds}`, 'duration');
  }
  const rate = run.metrics['perf/tokens_per_s'];
  if (rate) {
    const per = tokensPerUpdate(run, n);
    if (per.ok) {
      const durations = per.perUpdate.map((t, i) => {
        const r = rate[i] ?? NaN;
        return r > 0 && Number.isFinite(r) ? t / r : NaN;
      });
      return cumulative(axis, durations, `Σ tokens / perf/tokens_per_s`, 'duration');
    }
  }
  const envSteps = run.metrics['charts/env_steps'];
  const sps = run.metrics['charts/SPS'];
  if (envSteps && sps) {
    const values = Array.from({ length: n }, (_, i) => {
      const s = sps[i] ?? NaN;
      const e = envSteps[i] ?? NaN;
      return s > 0 && Number.isFinite(s) && Number.isFinite(e) ? e / s : NaN;
    });
    return {
      ok: true,
      axis,
      values,
      source: 'charts/env_steps / charts/SPS',
      note: 'approximate: charts/SPS is rounded to a whole number of steps per second',
    };
  }
  return {
    ok: false,
    axis,
    reason:
      `this ${run.algorithm} run logged no timing metric; ` +
      `the trainers would need to log ${PROPOSED_METRICS.stepSeconds} (seconds per update)`,
  };
}

/** Running sum; NaN from the first unknown amount on (later totals would be wrong). */
function cumulative(
  axis: XAxis,
  amounts: readonly number[],
  source: string,
  what: string,
): XValues {
  const values = new Array<number>(amounts.length);
  let total = 0;
  let gap = -1;
  for (let i = 0; i < amounts.length; i++) {
    const a = amounts[i]!;
    if (gap < 0 && !Number.isFinite(a)) gap = i;
    total += a;
    values[i] = gap < 0 ? total : NaN;
  }
  if (gap === 0) {
    return { ok: false, axis, reason: `update 1 has no known ${what} (${source})` };
  }
  return {
    ok: true,
    axis,
    values,
    source,
    ...(gap > 0
      ? { note: `unknown from update ${gap + 1} on: that update has no known ${what}` }
      : {}),
  };
}

function withNote(result: XValues, note: string | undefined): XValues {
  if (!result.ok || !note) return result;
  return { ...result, note: result.note ? `${result.note}; ${note}` : note };
}

/** The series, NaN-padded to n updates. */
function padded(values: readonly number[], n: number): number[] {
  return Array.from({ length: n }, (_, i) => values[i] ?? NaN);
}
