/**
 * A lesson's seeds block as state: every preset × seed run (opened through the lab's run manager,
 * as a widget opens its one run), started and paused together, each stopped once it has passed
 * its check (the block's verdict needs no more, and a stopped run leaves the CPU to the others)
 * or at its preset's budget — or, once the reader asks to run on, at the budget only; and what
 * the block draws and tabulates from their series — per preset the mean ± std band over seeds
 * (seedBand, as the compare view draws it) and the summary of what passing took
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
  /**
   * false: a run stops at the update it passed its check at; true: every run trains to its
   * budget (what the table's last column, the check at the budget, needs).
   */
  runOn = $state(false);

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

  /** Every run is done: at its budget, or passed while the block stops runs at their pass. */
  get finished(): boolean {
    return this.doneFlags().every((group) => group.every(Boolean));
  }

  /** Runs that are not done and not running: what Start all would start. */
  get waiting(): number {
    const done = this.doneFlags();
    return this.groups.reduce(
      (n, g, i) => n + g.runs.filter((run, j) => !done[i]![j] && run.status !== 'running').length,
      0,
    );
  }

  /** Every run has trained its preset's budget. */
  get atBudget(): boolean {
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

  /** Starts every run that is not done. */
  startAll(): void {
    const done = this.doneFlags();
    this.groups.forEach((g, i) =>
      g.runs.forEach((run, j) => {
        if (!done[i]![j] && run.status !== 'running') void this.manager.start(run);
      }),
    );
  }

  /** Trains every run on to its budget, passed or not. */
  runOnToBudget(): void {
    this.runOn = true;
    this.startAll();
  }

  pauseAll(): void {
    for (const run of this.all) if (run.status === 'running') void this.manager.pause(run);
  }

  /**
   * Pauses every running run that is done (updates arrive in batches, so a run may stand an
   * update or two past its pass or budget).
   */
  holdDone(): void {
    const done = this.doneFlags();
    this.groups.forEach((g, i) =>
      g.runs.forEach((run, j) => {
        if (done[i]![j] && run.status === 'running' && !run.busy) void this.manager.pause(run);
      }),
    );
  }

  /** Leaving the lesson parks the runs: the lab keeps them as stored runs (see RunManager.park). */
  park(): void {
    for (const run of this.all) void this.manager.park(run);
  }

  /** Per group, per run: done — at its budget, or passed its check unless running on. */
  private doneFlags(): boolean[][] {
    const summaries = this.runOn ? [] : this.summaries;
    return this.groups.map((g, i) =>
      g.runs.map(
        (run, j) => run.steps >= g.budget || (summaries[i]?.runs[j]?.passedAt ?? null) !== null,
      ),
    );
  }

  private record(run: LabRun) {
    return runRecord(run, [this.block.metric, ...SUMMARY_METRICS]);
  }
}
