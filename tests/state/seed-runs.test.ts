/**
 * A seeds block's runs through the lab's run manager, with stand-in workers: every preset × seed
 * run is created with the block's seed and the page's `?backend=`; Start all leaves done runs
 * alone (passed, or at their budget once the reader runs on), holdDone pauses the ones that got
 * there; the bands and the summary read the runs' streamed series, and park ends every worker.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { parseLesson, type SeedsBlock } from '../../src/lessons/lesson';
import { RunManager, type LabRun, type RunPort } from '../../src/state/runs.svelte';
import { SeedRuns } from '../../src/state/seed-runs.svelte';
import type { RunMessage } from '../../src/worker/run-protocol';
import { runCatalog } from '../../src/worker/run-spec';

/** A worker stand-in: records its commands; `send` streams messages to its run. */
function fakeWorker() {
  const calls: string[] = [];
  let listener: ((message: RunMessage) => void) | undefined;
  const send = (message: RunMessage) => listener?.(message);
  const port: RunPort = {
    api: {
      async createRun(_spec, onMessage) {
        listener = onMessage;
        send({ type: 'backend', kind: 'cpu', line: 'CPU — test' });
        send({ type: 'status', status: 'idle' });
      },
      async start() {
        calls.push('start');
        send({ type: 'status', status: 'running' });
      },
      async pause() {
        calls.push('pause');
        send({ type: 'status', status: 'paused' });
      },
      async step() {},
      async setHyperparams() {
        return { ok: true, appliesAt: 1 };
      },
      async inspect() {
        return null;
      },
      async inspectKept() {
        return [];
      },
      async exportOnnx() {
        return null;
      },
      async checkpoint() {
        return null;
      },
      async dispose() {
        calls.push('dispose');
      },
    },
    terminate: () => calls.push('terminate'),
  };
  return { port, calls, send };
}

/**
 * Updates `from` to `to` of reward/accuracy: 0 through update k, then 1; 50 tokens and 0.25 s
 * each.
 */
function updates(to: number, k: number, from = 1): RunMessage {
  return {
    type: 'update',
    points: Array.from({ length: to - from + 1 }, (_, j) => from - 1 + j).map((i) => ({
      step: i + 1,
      metrics: {
        'reward/accuracy': i < k ? 0 : 1,
        'perf/generated_tokens': 50,
        'timing_s/step': 0.25,
      },
    })),
    events: [],
    config: {},
  };
}

const block = parseLesson(
  'lessons/01-x/01-y/index.md',
  [
    '---',
    'title: T',
    'goals: [g]',
    'prerequisites: []',
    'minutes: 5',
    '---',
    '::seeds{presets="ppo-copy,grpo-copy" seeds="7,9"}',
  ].join('\n'),
).blocks[0] as SeedsBlock;

describe('SeedRuns', () => {
  let workers: ReturnType<typeof fakeWorker>[];
  let manager: RunManager;
  beforeEach(async () => {
    vi.stubGlobal('location', { search: '?backend=cpu' });
    workers = [];
    manager = new RunManager({
      catalog: { runCatalog: async () => runCatalog(), checkRunSpec: async () => [] },
      spawn: () => {
        const worker = fakeWorker();
        workers.push(worker);
        return worker.port;
      },
    });
    await manager.loadCatalog();
  });
  afterEach(() => vi.unstubAllGlobals());

  it('opens every preset × seed run with its seed and the asked-for backend', async () => {
    const state = new SeedRuns(block, manager);
    expect(state.opened).toBe(false);
    await state.open();
    expect(state.error).toBeUndefined();
    expect(state.opened).toBe(true);
    expect(
      state.groups.map((g) => [
        g.budget,
        g.runs.map((r) => [r.spec.algo, r.spec.seed, r.spec.backend]),
      ]),
    ).toEqual([
      [
        60,
        [
          ['ppo', 7, 'cpu'],
          ['ppo', 9, 'cpu'],
        ],
      ],
      [
        60,
        [
          ['grpo', 7, 'cpu'],
          ['grpo', 9, 'cpu'],
        ],
      ],
    ]);
    // A second open does not add runs.
    await state.open();
    expect(manager.runs).toHaveLength(4);
  });

  it('stops each run once it passes its check, and at its budget once the reader runs on', async () => {
    const state = new SeedRuns(block, manager);
    await state.open();
    const [ppo7, ppo9, grpo7, grpo9] = state.all as [LabRun, LabRun, LabRun, LabRun];
    const worker = (run: LabRun) => workers[state.all.indexOf(run)]!;
    worker(ppo7).send(updates(60, 14)); // at its budget
    worker(ppo9).send(updates(20, 15)); // passed (at 18)
    worker(grpo7).send(updates(12, 10)); // too few updates to judge
    worker(grpo9).send(updates(20, 19)); // not passed: one right update in the last 10
    expect(state.summaries.map((s) => s.runs.map((r) => r.passedAt !== null))).toEqual([
      [true, true],
      [false, false],
    ]);
    expect(state.waiting).toBe(2);
    state.startAll();
    await vi.waitFor(() => expect(state.all.filter((r) => r.status === 'running')).toHaveLength(2));
    expect([grpo7.status, grpo9.status]).toEqual(['running', 'running']);
    expect(worker(ppo7).calls).not.toContain('start');
    expect(worker(ppo9).calls).not.toContain('start');
    expect(state.waiting).toBe(0);
    expect(state.finished).toBe(false);

    // GRPO seed 7 passes a few updates on: held there, while seed 9 trains on.
    worker(grpo7).send(updates(20, 10, 13));
    state.holdDone();
    await vi.waitFor(() => expect(grpo7.status).toBe('paused'));
    expect(grpo9.status).toBe('running');
    expect(worker(grpo9).calls).not.toContain('pause');

    // Run on: every run below its budget trains again, passed or not; the one at 60 does not.
    state.runOnToBudget();
    await vi.waitFor(() => expect(state.all.filter((r) => r.status === 'running')).toHaveLength(3));
    expect(worker(ppo7).calls).not.toContain('start');
    expect(state.atBudget).toBe(false);
    worker(ppo9).send(updates(62, 15, 21));
    state.holdDone();
    await vi.waitFor(() => expect(ppo9.status).toBe('paused'));
    expect([grpo7.status, grpo9.status]).toEqual(['running', 'running']);
  });

  it('starts the runs below their budget when running on, pauses the ones that reached it, and summarizes them', async () => {
    const state = new SeedRuns(block, manager);
    await state.open();
    const [ppo7, ppo9, grpo7, grpo9] = state.all as [LabRun, LabRun, LabRun, LabRun];
    const worker = (run: LabRun) => workers[state.all.indexOf(run)]!;
    // PPO seed 7 has trained its budget of 60 already; the rest 20 updates each.
    worker(ppo7).send(updates(60, 14));
    worker(ppo9).send(updates(20, 15));
    worker(grpo7).send(updates(20, 10));
    worker(grpo9).send(updates(20, 12));
    state.runOnToBudget();
    await vi.waitFor(() => expect(state.all.filter((r) => r.status === 'running')).toHaveLength(3));
    expect(worker(ppo7).calls).not.toContain('start');
    expect(state.finished).toBe(false);

    // PPO seed 9 runs past its budget in one batch: held there.
    worker(ppo9).send(updates(62, 15, 21));
    state.holdDone();
    await vi.waitFor(() => expect(ppo9.status).toBe('paused'));
    expect(worker(grpo7).calls).not.toContain('pause');

    // PPO: passes at 17 and 18 (see seed-summary.test.ts), 50 tokens and 0.25 s per update.
    const [ppo, grpo] = state.summaries;
    expect(ppo!.runs.map((r) => r.passedAt)).toEqual([17, 18]);
    expect(ppo!.updates).toEqual({ n: 2, mean: 17.5, std: Math.SQRT1_2 });
    expect(ppo!.tokens!.mean).toBe(875);
    expect(ppo!.seconds!.mean).toBe(4.375);
    expect([grpo!.passed, grpo!.pending]).toEqual([2, 0]);
    expect(grpo!.atBudget).toBeUndefined(); // 20 of 60 updates
    // Bands run to the shortest run of each preset: 60 (PPO), 20 (GRPO).
    const [ppoBand, grpoBand] = state.bands;
    expect([ppoBand!.mean.length, grpoBand!.mean.length]).toEqual([60, 20]);
    // Update 11: seed 7 right (from update 11), seed 9 not yet (from 13).
    expect(grpoBand!.mean.slice(9, 14)).toEqual([0, 0.5, 0.5, 1, 1]);
    expect(grpoBand!.caption).toBe('mean ± 1 std over 2 seeds');

    state.pauseAll();
    await vi.waitFor(() => expect(state.all.some((r) => r.status === 'running')).toBe(false));
    state.park();
    await vi.waitFor(() => expect(state.all.map((r) => r.status)).toEqual(Array(4).fill('stored')));
    for (const w of workers) expect(w.calls).toContain('terminate');
  });
});
