/**
 * The stand-ins the RunManager tests share: a run worker that records its calls and lets a test
 * push its messages, a small catalog, an in-memory run store, and a manager wired to them.
 */
import { RunManager, type RunPort } from '../../src/state/runs.svelte';
import type { RunStorePort, StoredRun } from '../../src/state/run-store';
import type {
  FieldError,
  Inspection,
  KeptInspection,
  RunCatalog,
  RunMessage,
  RunSpec,
  Settings,
  TrainingTurns,
} from '../../src/worker/run-protocol';
import type { TrainingSlots } from '../../src/state/training-slots';

/** A run worker stand-in: records calls, answers like run-host.ts, lets the test push messages. */
export function fakeWorker(
  options: {
    refuse?: string;
    disposeThrows?: boolean;
    pauseHangs?: boolean;
    /** What inspect() answers (default null: nothing to show). */
    inspection?: Inspection;
    /** inspect() answers only after this many ms (a busy worker). */
    inspectMs?: number;
    /** What inspectKept() answers (default: nothing kept). */
    kept?: KeptInspection[];
  } = {},
) {
  const calls: string[] = [];
  const failures: ((reason: string) => void)[] = [];
  /** The worker dies, as its 'error' event reports it (src/worker/worker-failure.ts). */
  const die = (reason: string) => failures.splice(0).forEach((listener) => listener(reason));
  let listener: ((message: RunMessage) => void) | undefined;
  const send = (message: RunMessage) => listener?.(message);
  const received: { turns?: TrainingTurns } = {};
  const port: RunPort = {
    api: {
      async createRun(_spec: RunSpec, onMessage, replay, _checkpoint, turns) {
        received.turns = turns;
        calls.push(replay ? `createRun replay ${JSON.stringify(replay)}` : 'createRun');
        listener = onMessage;
        if (options.refuse) throw new Error(options.refuse);
        send({ type: 'status', status: 'warming' });
        send({ type: 'backend', kind: 'cpu', line: 'CPU — test' });
        send({ type: 'status', status: 'idle' });
      },
      async start() {
        calls.push('start');
        send({ type: 'status', status: 'running' });
      },
      async pause() {
        calls.push('pause');
        // A dead worker never answers.
        if (options.pauseHangs) return new Promise<void>(() => {});
        // As run-training.ts ends a pause: a language model's inspections, then 'paused'.
        if (options.inspection)
          send({ type: 'inspections', last: options.inspection, earlier: options.kept ?? [] });
        send({ type: 'status', status: 'paused' });
      },
      async step() {
        calls.push('step');
      },
      async setHyperparams(partial: Settings) {
        calls.push(`set ${JSON.stringify(partial)}`);
        if (partial.boom) throw new Error('worker gone');
        return Number(partial.epsilon) > 1
          ? { ok: false, error: 'q-learning: epsilon must be a number in [0, 1], got 2' }
          : { ok: true, appliesAt: 1 };
      },
      async inspectKept() {
        return options.kept ?? [];
      },
      async inspect() {
        calls.push('inspect');
        if (options.inspectMs)
          await new Promise((resolve) => setTimeout(resolve, options.inspectMs));
        return options.inspection ?? null;
      },
      async exportOnnx() {
        calls.push('exportOnnx');
        return null;
      },
      async checkpoint() {
        calls.push('checkpoint');
        return null;
      },
      async dispose() {
        calls.push('dispose');
        if (options.disposeThrows) throw new Error('already closed');
      },
    },
    terminate: () => calls.push('terminate'),
    onFailure: (listener) => failures.push(listener),
  };
  return { port, calls, send, received, die };
}

export const catalog: RunCatalog = {
  algorithms: [
    {
      name: 'q-learning',
      family: 'env',
      doc: 'TD control',
      spec: {
        epsilon: { kind: 'number', min: 0, max: 1, live: true, doc: 'exploration' },
        initialQ: { kind: 'number', min: -1e6, max: 1e6, live: false, doc: 'initial Q' },
      },
      defaults: { epsilon: 0.1, initialQ: 0 },
      envs: ['gridworld', 'cliffwalking'],
      exportsOnnx: false,
      checkpoints: false,
      reference: null,
      curriculum: false,
      rewardModel: false,
      retained: false,
    },
    {
      name: 'grpo',
      family: 'lm',
      doc: 'group-relative',
      spec: {
        lr: { kind: 'number', min: 0, max: 1, live: true, doc: 'learning rate' },
        maxNewTokens: { kind: 'int', min: 1, max: 255, live: true, doc: 'tokens per turn' },
      },
      defaults: { lr: 1e-3, maxNewTokens: 8 },
      envs: [],
      exportsOnnx: true,
      checkpoints: true,
      reference: 'kl',
      curriculum: true,
      rewardModel: true,
      retained: true,
    },
  ],
  tasks: [
    {
      name: 'reverse',
      doc: 'reverse it',
      example: { prompt: 'ab=', answer: 'ba' },
      spec: { maxLength: { kind: 'int', min: 1, max: 32, live: true, doc: 'longest string' } },
      defaults: { maxLength: 6 },
      recommended: {},
      levels: [{ maxLength: 3 }, { maxLength: 6 }],
    },
    {
      name: 'multiply',
      doc: 'with a calculator',
      example: { prompt: '2*3=', answer: '6' },
      spec: { useTools: { kind: 'boolean', live: false, doc: 'offer the tools' } },
      defaults: { useTools: true },
      recommended: { maxNewTokens: 32, sftSteps: 400 },
      levels: [{ useTools: true }],
    },
  ],
  sftSteps: { default: 100, min: 0, max: 5000, doc: 'warm-up' },
  startingModels: [
    {
      name: 'reverse',
      task: 'reverse',
      taskOptions: { maxLength: 5 },
      context: 13,
      sftSteps: 200,
      successRate: 0.4,
      file: 'reverse.ckpt',
    },
  ],
};

export function setUp(
  workerOptions: Parameters<typeof fakeWorker>[0] = {},
  store?: RunStorePort,
  slots?: TrainingSlots,
  saveEveryMs = 1,
) {
  const workers: ReturnType<typeof fakeWorker>[] = [];
  const manager = new RunManager({
    store,
    slots,
    saveEveryMs,
    catalog: {
      runCatalog: async () => catalog,
      checkRunSpec: async (): Promise<FieldError[]> => [],
    },
    spawn: () => {
      const worker = fakeWorker(workerOptions);
      workers.push(worker);
      return worker.port;
    },
    maxRuns: 4,
  });
  return { manager, workers };
}

export const spec: RunSpec = {
  algo: 'q-learning',
  env: 'cliffwalking',
  seed: 1,
  config: { epsilon: 0.1, initialQ: 0 },
  backend: 'auto',
};

/** An in-memory RunStorePort that records what was saved and removed. */
export function memoryStore(initial: StoredRun[] = []) {
  const runs = new Map(initial.map((r) => [r.id, structuredClone(r)]));
  const removed: string[] = [];
  const store: RunStorePort = {
    list: async () => [...runs.values()].map((r) => structuredClone(r)),
    save: async (run) => void runs.set(run.id, structuredClone(run)),
    remove: async (id) => {
      removed.push(id);
      runs.delete(id);
    },
  };
  return { store, runs, removed };
}

export const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A worker's report of one update with one episodic return, settings unchanged. */
export const oneUpdate = (episodicReturn: number) => ({
  type: 'update' as const,
  points: [{ step: 1, metrics: { 'charts/episodic_return': episodicReturn } }],
  events: [],
  config: spec.config,
});
