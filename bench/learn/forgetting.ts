/**
 * Forgetting and the ptx term over several seeds: the tool-use lesson's two runs (GRPO on
 * two-digit products with the calculator from the shipped multiply-recall model, the one-digit
 * products it answers from memory with no tool offered retained), without and with ptxCoef 0.2,
 * built from the lesson presets and trained through the lab's own run host on the CPU. Per seed:
 * the retained task's greedy success (retained/success_rate, 32 fixed prompts) after updates 1,
 * 10 and `updates`, its mean over the last 10 updates, and the trained task's strict success over
 * the last 10 updates.
 */
import type { PresetName } from '../../src/lessons/presets';
import { runPreset } from './preset-run';

const ARMS = {
  'no ptx': 'grpo-calc-forgetting',
  'ptx 0.2': 'grpo-calc-ptx',
} as const satisfies Record<string, PresetName>;

export interface ForgettingRow {
  arm: keyof typeof ARMS;
  seed: number;
  /** retained/success_rate after updates 1, 10 and the last. */
  retainedAt: { first: number; tenth: number; last: number };
  /** Means over the last 10 updates. */
  retainedLast10: number;
  trainedLast10: number;
  seconds: number;
}

const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

async function series(preset: PresetName, seed: number, updates: number) {
  const run = await runPreset(preset, {
    backend: 'cpu',
    seed,
    metrics: ['retained/success_rate', 'reward/strict_accuracy'],
    budget: updates,
  });
  return {
    retained: run.series['retained/success_rate']!,
    accuracy: run.series['reward/strict_accuracy']!,
  };
}

export async function forgettingBenchmark(
  seeds: readonly number[],
  updates: number,
): Promise<{ rows: ForgettingRow[]; table: string }> {
  const rows: ForgettingRow[] = [];
  for (const seed of seeds) {
    for (const [arm, preset] of Object.entries(ARMS) as [keyof typeof ARMS, PresetName][]) {
      const started = performance.now();
      const { retained, accuracy } = await series(preset, seed, updates);
      const row: ForgettingRow = {
        arm,
        seed,
        retainedAt: { first: retained[0]!, tenth: retained[9]!, last: retained.at(-1)! },
        retainedLast10: mean(retained.slice(-10)),
        trainedLast10: mean(accuracy.slice(-10)),
        seconds: (performance.now() - started) / 1000,
      };
      rows.push(row);
      console.log(
        `forgetting: ${arm}, seed ${seed}: one-digit ${pct(row.retainedAt.first)} → ` +
          `${pct(row.retainedAt.tenth)} (update 10) → ${pct(row.retainedAt.last)} (update ${updates}); ` +
          `last 10 ${pct(row.retainedLast10)}; two-digit with calc ${pct(row.trainedLast10)} ` +
          `(${row.seconds.toFixed(0)} s)`,
      );
    }
  }
  const table = [
    `arm     seed  one-digit: update 1 / 10 / ${updates}   last-10 mean   two-digit last-10`,
    ...rows.map(
      (r) =>
        `${r.arm.padEnd(7)} ${String(r.seed).padStart(4)}  ${pct(r.retainedAt.first).padStart(8)} ` +
        `${pct(r.retainedAt.tenth).padStart(5)} ${pct(r.retainedAt.last).padStart(5)}` +
        `   ${pct(r.retainedLast10).padStart(12)}   ${pct(r.trainedLast10).padStart(17)}`,
    ),
  ].join('\n');
  return { rows, table };
}

function pct(x: number): string {
  return `${(x * 100).toFixed(0)}%`;
}
