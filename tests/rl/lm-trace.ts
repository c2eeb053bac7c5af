/**
 * Recorded traces of the language-model trainers: every language-model preset, and a few variants
 * that reach the code paths no preset takes (RLOO and REINFORCE++ advantages, the KL in the
 * reward, PPO with a reference, a retained task or tool episodes, IPO), run through the lab's own
 * run host on the CPU for its first updates. Each update's metrics are kept exactly, so that a
 * change to how the trainers are put together can be shown to change no number.
 *
 * Record (on code known to be right): node scripts/run-ts.mjs tests/rl/record-lm-traces.ts
 */
import { runPreset, runSpec } from '../../bench/learn/preset-run';
import { buildPresetSpec, PRESETS, type PresetName } from '../../src/lessons/presets';
import { ALGORITHMS } from '../../src/rl/registry';
import type { RunSpec, Settings } from '../../src/worker/run-protocol';

/** One recorded run: a preset as the lab opens it (with `change`), or a spec of its own. */
export interface TraceCase {
  name: string;
  updates: number;
  preset?: PresetName;
  change?: Settings;
  spec?: () => RunSpec;
}

/** Metrics that measure the machine, not the arithmetic. */
const TIMING = new Set(['perf/tokens_per_s', 'timing_s/step']);

/** A recorded value: a JSON number where JSON keeps it exactly, else its name. */
type Recorded = number | 'NaN' | 'Infinity' | '-Infinity' | '-0';

export type Trace = Record<string, Record<string, Recorded>[]>;

export function encode(value: number): Recorded {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Infinity) return 'Infinity';
  if (value === -Infinity) return '-Infinity';
  if (Object.is(value, -0)) return '-0';
  return value;
}

export function decode(value: Recorded): number {
  return typeof value === 'number' ? value : Number(value);
}

const LM_PRESETS = (Object.keys(PRESETS) as PresetName[]).filter(
  (name) => ALGORITHMS[PRESETS[name].algo]?.family === 'lm',
);

/** PPO through an agent task with tools, kept on a retained task by the ptx term. */
function ppoCalcPtx(): RunSpec {
  const base = buildPresetSpec('grpo-calc-ptx', ALGORITHMS.grpo!.defaults);
  return {
    ...base,
    algo: 'ppo',
    config: {
      ...ALGORITHMS.ppo!.defaults,
      lr: 3e-4,
      maxNewTokens: 32,
      temperature: 0.85,
      promptsPerUpdate: 8,
      retainedEvalPrompts: 8,
      ptxCoef: 0.2,
      klCoef: 0.05,
    },
  };
}

export const TRACE_CASES: readonly TraceCase[] = [
  ...LM_PRESETS.map((preset) => ({ name: preset, preset, updates: 2 })),
  {
    name: 'grpo-copy rloo',
    preset: 'grpo-copy',
    updates: 2,
    change: { advantageEstimator: 'rloo' },
  },
  {
    name: 'grpo-copy reinforce++',
    preset: 'grpo-copy',
    updates: 2,
    change: { advantageEstimator: 'reinforce++', dualClip: 3 },
  },
  {
    name: 'grpo-copy reinforce++-baseline',
    preset: 'grpo-copy',
    updates: 2,
    change: {
      advantageEstimator: 'reinforce++-baseline',
      lossAggregation: 'seq-mean-token-sum-norm',
    },
  },
  {
    name: 'grpo-copy-kl in the reward',
    preset: 'grpo-copy-kl',
    updates: 2,
    change: { klPenalty: 'reward', klEstimator: 'k1', klCoef: 0.1, maskTruncated: true },
  },
  {
    name: 'ppo-copy kl, target kl',
    preset: 'ppo-copy',
    updates: 2,
    change: {
      promptsPerUpdate: 32,
      klCoef: 0.05,
      targetKl: 0.00001,
      epochs: 4,
      whitenAdvantages: false,
      lossAggregation: 'seq-mean-token-mean',
    },
  },
  { name: 'ppo calc ptx', updates: 2, spec: ppoCalcPtx },
  { name: 'dpo-copy ipo', preset: 'dpo-copy', updates: 2, change: { lossType: 'ipo' } },
];

/** Every update's metrics of one case (timing left out), in the run's own order. */
export async function recordTrace(c: TraceCase): Promise<Record<string, Recorded>[]> {
  const options = { backend: 'cpu' as const, metrics: [], budget: c.updates };
  const run = c.spec
    ? await runSpec(c.spec(), options)
    : await runPreset(c.preset!, { ...options, change: c.change ?? {} });
  return run.points.map((point) =>
    Object.fromEntries(
      Object.entries(point.metrics)
        .filter(([name]) => !TIMING.has(name))
        .map(([name, value]) => [name, encode(value)]),
    ),
  );
}

export const TRACE_FILE = new URL('./traces/lm-trainers.json', import.meta.url);
