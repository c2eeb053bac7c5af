/**
 * A lesson's seeds block as state: every preset × seed run (opened through the lab's run manager,
 * as a widget opens its one run), started and paused together, each stopped at its preset's
 * budget; and what the block draws and tabulates from their series — per preset the mean ± std
 * band over seeds (seedBand, as the compare view draws it) and the summary of what passing took
 * (src/lessons/seed-summary.ts).
 */
import { seedBand, type SeedBand } from '../compare/seed-groups';
import type { SeedsBlock } from '../lessons/lesson';
import type { MetricCheck } from '../lessons/checks';
import { buildPresetSpec, presetBudget, PRESETS } from '../lessons/presets';
import { presetSummary, type PresetSummary } from '../lessons/seed-summary';
import { PROPOSED_METRICS } from '../compare/x-axis';
import { requestedBackend } from './backend-request';
import { runRecord } from './compare-view/run-view';
import type { LabRun, RunManager } from './runs.svelte';
import { errorText } from '../util/error-text';

/** What the summary reads of each run besides the charted metric (see x-axis.ts's sources). */
const SUMMARY_METRICS = [
  PROPOSED_METRICS.generatedTokens,
  PROPOSED_METRICS.stepSeconds,
  'perf/tokens_per_s',
  'response_length/mean',
];

export interface PresetRuns {
  preset: SeedsBlock['presets'][number];
  budget: number;
  /** One per seed, in the block's seed order (filled as they are created). */
  runs: LabRun[];
}

export class SeedRuns {
  groups = $state.raw<PresetRuns[]>([]);
  opening = $state(false);
  error = $state<string | undefined>(undefined);

  constructor(
    readonly block: SeedsBlock,
    private readonly manager: RunManager,
  ) {}

  /** Every run, preset by preset. */
  get all(): LabRun[] {
    return this.groups.flatMap((g) => g.runs);
  }

  get opened(): boolean {
    return this.groups.length > 0 && !this.opening;
  }

  /** Every run has trained its preset's budget. */
  get finished(): boolean {
    return this.groups.every((g) => g.runs.every((run) => run.steps >= g.budget));
  }

  /**
   * Per preset: the charted metric's mean ± std over its seeds, per update, up to where its
   * shortest run ends (as the compare view draws a seed group: the mean never quietly becomes
   * the mean of fewer runs).
   */
  get bands(): SeedBand[] {
    const metric = this.block.metric;
    return this.groups.map((g) => {
      const series = g.runs.map((run) => this.record(run).metrics[metric] ?? []);
      const upTo = Math.min(...series.map((s) => s.length));
      return seedBand(series.map((s) => s.slice(0, upTo)));
    });
  }

  /** Per preset: what passing its check took its seeds (see seed-summary.ts). */
  get summaries(): PresetSummary[] {
    return this.groups.map((g) =>
      presetSummary(
        g.runs.map((run) => this.record(run)),
        g.preset.check as MetricCheck,
        g.budget,
      ),
    );
  }

  /** Creates every preset × seed run, stopped; `?backend=` holds for them as for a widget's. */
  async open(): Promise<void> {
    const catalog = this.manager.catalog;
    if (!catalog || this.opening || this.groups.length) return;
    this.opening = true;
    this.error = undefined;
    const asked = requestedBackend();
    const groups: PresetRuns[] = this.block.presets.map((preset) => ({
      preset,
      budget: presetBudget(preset.preset),
      runs: [],
    }));
    try {
      // One at a time: each worker loads its model before the next starts, so the page stays
      // responsive on two cores, and a refused run (the limit of runs at once) stops the rest.
      for (const group of groups) {
        const name = group.preset.preset;
        const defaults = catalog.algorithms.find((a) => a.name === PRESETS[name].algo)?.defaults;
        if (!defaults) throw new Error(`the lab has no algorithm ${PRESETS[name].algo}`);
        for (const seed of this.block.seeds) {
          const spec = { ...buildPresetSpec(name, defaults, {}, []), seed };
          if (asked !== 'auto') spec.backend = asked;
          const run = await this.manager.create(spec, {
            note: 'lesson',
            onAdded: (added) => {
              group.runs = [...group.runs, added];
              this.groups = [...groups];
            },
          });
          if (run.status === 'error') throw new Error(run.error ?? `${run.label} failed to start`);
        }
      }
    } catch (e) {
      this.error = errorText(e);
    } finally {
      this.groups = [...groups];
      this.opening = false;
    }
  }

  startAll(): void {
    for (const g of this.groups) {
      for (const run of g.runs) {
        if (run.steps < g.budget && run.status !== 'running') void this.manager.start(run);
      }
    }
  }

  pauseAll(): void {
    for (const run of this.all) if (run.status === 'running') void this.manager.pause(run);
  }

  /** Pauses every running run that has reached its budget (updates arrive in batches). */
  holdBudgets(): void {
    for (const g of this.groups) {
      for (const run of g.runs) {
        if (run.steps >= g.budget && run.status === 'running' && !run.busy) {
          void this.manager.pause(run);
        }
      }
    }
  }

  /** Leaving the lesson parks the runs: the lab keeps them as stored runs (see RunManager.park). */
  park(): void {
    for (const run of this.all) void this.manager.park(run);
  }

  private record(run: LabRun) {
    return runRecord(run, [this.block.metric, ...SUMMARY_METRICS]);
  }
}
