/**
 * The lab's new-run form as a newcomer leaves it: for each language-model algorithm, the form's
 * default spec (its default task, or each of `tasks` as the form opens when that task is picked:
 * the shipped start the task recommends, the settings it recommends over the algorithm's
 * defaults) on the CPU, 20 updates on seeds 1–5, beside a control at lr 1e-9. Δ is the success of
 * the last 5 updates minus that of the first 5; the target is a visible rise, Δ ≥ 0.2 on every
 * seed, while the control stays near 0.
 */
import { RunDraft } from '../../src/state/run-draft.svelte';
import { runCatalog } from '../../src/worker/run-spec';
import { runSpec } from './preset-run';

/** The success metric each language-model algorithm logs. */
const SUCCESS: Record<string, string> = {
  grpo: 'reward/accuracy',
  ppo: 'reward/accuracy',
  dpo: 'reward/success_rate',
};

export interface DefaultsRow {
  algo: string;
  task: string;
  start: string;
  metric: string;
  /** Per seed: Δ of the run, Δ of its control, seconds of the run. */
  seeds: { seed: number; delta: number; controlDelta: number; seconds: number }[];
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const delta = (xs: readonly number[]) => mean(xs.slice(-5)) - mean(xs.slice(0, 5));

export async function labDefaults(options: {
  seeds: readonly number[];
  /** Tasks picked in the form (`--tasks=copy,reverse`); absent: the form's default task. */
  tasks?: readonly string[];
  /** Algorithms to run (`--algos=grpo`); absent: every language-model algorithm. */
  algos?: readonly string[];
  updates?: number;
  log?: (s: string) => void;
}): Promise<{ rows: DefaultsRow[]; table: string }> {
  const catalog = runCatalog();
  const unknown = options.tasks?.filter((t) => !catalog.tasks.some((c) => c.name === t)) ?? [];
  if (unknown.length > 0) {
    throw new Error(
      `--tasks names no task: ${unknown.join(', ')} (known: ${catalog.tasks.map((t) => t.name).join(', ')})`,
    );
  }
  const badAlgos = options.algos?.filter((a) => !Object.hasOwn(SUCCESS, a)) ?? [];
  if (badAlgos.length > 0) {
    throw new Error(
      `--algos names no language-model algorithm: ${badAlgos.join(', ')} (known: ${Object.keys(SUCCESS).join(', ')})`,
    );
  }
  const updates = options.updates ?? 20;
  const rows: DefaultsRow[] = [];
  const pairs = (options.algos ?? Object.keys(SUCCESS)).flatMap((algo) =>
    (options.tasks ?? [undefined]).map((task) => ({ algo, task })),
  );
  for (const { algo, task } of pairs) {
    const draft = new RunDraft(catalog, task === undefined ? { algo } : { algo, task });
    const metric = SUCCESS[algo]!;
    const row: DefaultsRow = { algo, task: draft.task, start: draft.start, metric, seeds: [] };
    for (const seed of options.seeds) {
      const spec = { ...draft.spec, seed, backend: 'cpu' as const };
      const run = await runSpec(spec, { backend: 'cpu', metrics: [metric], budget: updates });
      const control = await runSpec(
        { ...spec, config: { ...spec.config, lr: 1e-9 } },
        { backend: 'cpu', metrics: [metric], budget: updates },
      );
      const entry = {
        seed,
        delta: delta(run.series[metric]!),
        controlDelta: delta(control.series[metric]!),
        seconds: run.seconds,
      };
      row.seeds.push(entry);
      options.log?.(
        `${algo} on ${draft.task} from ${draft.start}, seed ${seed}: Δ ${entry.delta.toFixed(2)}, control Δ ${entry.controlDelta.toFixed(2)}, ${entry.seconds.toFixed(1)} s`,
      );
    }
    rows.push(row);
  }
  const lines = [
    '| algorithm | task | start | Δ per seed (last 5 − first 5 of 20) | control Δ per seed (lr 1e-9) | Δ ≥ 0.2 |',
    '| --- | --- | --- | --- | --- | --- |',
    ...rows.map((r) => {
      const d = r.seeds.map((s) => s.delta);
      const c = r.seeds.map((s) => s.controlDelta);
      return `| ${r.algo} | ${r.task} | ${r.start} | ${d.map((x) => x.toFixed(2)).join(', ')} | ${c.map((x) => x.toFixed(2)).join(', ')} | ${d.filter((x) => x >= 0.2).length}/${d.length} |`;
    }),
  ];
  return { rows, table: lines.join('\n') };
}
