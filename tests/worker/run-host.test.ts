import { describe, expect, it } from 'vitest';
import { bucketPoints } from '../../src/worker/metric-buckets';
import { importOnnx, importTransformerOnnx } from '../../src/onnx/import';
import { nodeOrtOptions } from '../../src/onnx/ort-node';
import { loadLanguageModel } from '../../src/models/lm-checkpoint';
import { transformerLayout } from '../../src/models/transformer-params';
import type { TransformerConfig } from '../../src/models/transformer-config';
import { CharTokenizer } from '../../src/models/tokenizer';
import { exportTransformerOnnx } from '../../src/onnx/export-transformer';
import { readShipped, shippedEntry } from '../onnx/shipped';
import { createRunHost } from '../../src/worker/run-host';
import { TrainingSlots } from '../../src/state/training-slots';
import type { MetricPoint, RunMessage, RunSpec, Settings } from '../../src/worker/run-protocol';
import { checkRunSpec, runCatalog } from '../../src/worker/run-spec';
import { DEFAULT_REWARD_MODEL_CONFIG } from '../../src/rl/reward-model';

const spec: RunSpec = {
  algo: 'q-learning',
  env: 'cliffwalking',
  seed: 1,
  config: runCatalog().algorithms.find((a) => a.name === 'q-learning')!.defaults,
  backend: 'cpu',
};

function host() {
  const messages: RunMessage[] = [];
  const api = createRunHost({ flushMs: 50 });
  const updates = () => messages.filter((m) => m.type === 'update');
  return { api, messages, updates, listener: (m: RunMessage) => messages.push(m) };
}

describe('run host (the worker side of a run)', () => {
  it('builds a q-learning run, steps it, and reports a live change at its step', async () => {
    const { api, messages, updates, listener } = host();
    await api.createRun(spec, listener);
    expect(messages.filter((m) => m.type === 'status').map((m) => m.status)).toEqual([
      'warming',
      'idle',
    ]);
    expect(messages.find((m) => m.type === 'backend')).toMatchObject({ kind: 'cpu' });

    await api.step();
    const first = updates().at(-1)!;
    expect(first.type === 'update' && first.points.map((p) => p.step)).toEqual([1]);
    expect(first.type === 'update' && Object.keys(first.points[0]!.metrics)).toContain(
      'charts/episodic_return',
    );

    expect(await api.setHyperparams({ epsilon: 2 })).toEqual({
      ok: false,
      error: 'q-learning: epsilon must be a number in [0, 1], got 2',
    });
    expect((await api.setHyperparams({ initialQ: 1 })).ok).toBe(false);
    expect(await api.setHyperparams({ epsilon: 0.3 })).toEqual({ ok: true, appliesAt: 2 });
    await api.step();
    const second = updates().at(-1)!;
    expect(second.type === 'update' && second.events).toEqual([
      { step: 2, kind: 'hyperparams', changes: { epsilon: 0.3 } },
    ]);
    expect(second.type === 'update' && second.config.epsilon).toBe(0.3);
    await api.dispose();
  });

  it('trains until paused, batching metrics into a few messages', async () => {
    const { api, messages, updates, listener } = host();
    await api.createRun(spec, listener);
    await api.start();
    await new Promise((resolve) => setTimeout(resolve, 400));
    await api.pause();
    const statuses = messages.filter((m) => m.type === 'status').map((m) => m.status);
    expect(statuses.slice(-2)).toEqual(['running', 'paused']);
    const batches = updates().filter((m) => m.type === 'update' && m.points.length > 0);
    // 400 ms at ≤ 20 messages a second, plus the flush at pause.
    expect(batches.length).toBeGreaterThan(0);
    expect(batches.length).toBeLessThanOrEqual(10);
    const steps = batches.flatMap((m) => (m.type === 'update' ? m.points.map((p) => p.step) : []));
    expect(steps.every((s, i) => i === 0 || s > steps[i - 1]!)).toBe(true);
    await expect(api.start().then(() => api.step())).rejects.toThrow('pause the run');
    await api.dispose();
  });

  it('refuses a bad spec with every field and range named', async () => {
    const { api, listener } = host();
    const bad = { ...spec, seed: -1, config: { ...spec.config, alpha: 2 } };
    await expect(api.createRun(bad, listener)).rejects.toThrow(
      'seed must be an integer in [0, 2147483647], got -1; alpha must be a number in (0, 1], got 2',
    );
  });
});

describe('checkRunSpec', () => {
  it.each([
    [{ algo: 'nope' }, 'algo'],
    [{ env: 'cartpole' }, 'env'],
    [{ config: { ...spec.config, gamma: 1.5 } }, 'gamma'],
    [{ config: { ...spec.config, bogus: 1 } }, 'bogus'],
    [{ config: { gamma: 0.9 } }, 'alpha'],
    // Names of Object.prototype's members are not algorithms or settings.
    [{ algo: 'constructor' }, 'algo'],
    [{ algo: 'toString' }, 'algo'],
    [{ config: { ...spec.config, constructor: 1 } }, 'constructor'],
    [{ config: { ...spec.config, hasOwnProperty: 1 } }, 'hasOwnProperty'],
  ])('%o → error on %s', (change, field) => {
    expect(checkRunSpec({ ...spec, ...change } as RunSpec).map((e) => e.field)).toContain(field);
  });

  it('checks a language-model spec (task and warm-up)', () => {
    const grpo = runCatalog().algorithms.find((a) => a.name === 'grpo')!;
    const lm: RunSpec = {
      algo: 'grpo',
      task: 'reverse',
      seed: 1,
      config: grpo.defaults,
      backend: 'cpu',
    };
    expect(checkRunSpec(lm)).toEqual([]);
    expect(checkRunSpec({ ...lm, task: 'chess', sftSteps: -1 }).map((e) => e.field)).toEqual([
      'task',
      'sftSteps',
    ]);
  });
});

describe('bucketPoints', () => {
  it('keeps short batches and averages long ones into buckets ending at their last step', () => {
    const points = [1, 2, 3, 4, 5, 6].map((step) => ({ step, metrics: { m: step } }));
    expect(bucketPoints(points, 10)).toEqual(points);
    expect(bucketPoints(points, 2)).toEqual([
      { step: 3, metrics: { m: 2 } },
      { step: 6, metrics: { m: 5 } },
    ]);
  });

  it('averages each metric over the updates that reported it', () => {
    const points: MetricPoint[] = [
      { step: 1, metrics: { a: 1, b: 10 } },
      { step: 2, metrics: { a: 3 } },
    ];
    expect(bucketPoints(points, 1)).toEqual([{ step: 2, metrics: { a: 2, b: 10 } }]);
  });
});

describe('run host: language models', () => {
  it('sets up GRPO on the CPU with a warm-up, reports progress, and trains one update', async () => {
    const { api, messages, updates, listener } = host();
    const grpo = runCatalog().algorithms.find((a) => a.name === 'grpo')!;
    await api.createRun(
      { algo: 'grpo', task: 'copy', seed: 1, config: grpo.defaults, backend: 'cpu', sftSteps: 2 },
      listener,
    );
    expect(messages.find((m) => m.type === 'backend')).toEqual({
      type: 'backend',
      kind: 'cpu',
      line: 'CPU — requested for this run',
    });
    const warmups = messages.filter((m) => m.type === 'warmup');
    expect(warmups[0]).toEqual({ type: 'warmup', done: 0, total: 2 });
    expect(warmups.at(-1)).toMatchObject({ done: 2, total: 2, successRate: expect.any(Number) });
    expect(await api.inspect()).toBeNull();
    expect(messages.filter((m) => m.type === 'phase')).toEqual([]); // the warm-up is no update
    await api.step();
    // The update said what it was doing, in order, before its metrics came.
    expect(messages.filter((m) => m.type === 'phase')).toEqual([
      { type: 'phase', phase: 'generating', update: 1 },
      { type: 'phase', phase: 'updating', update: 1 },
    ]);
    const last = updates().at(-1)!;
    expect(last.type === 'update' && Object.keys(last.points[0]!.metrics)).toContain('reward/mean');
    const inspection = await api.inspect();
    expect(inspection).toMatchObject({ kind: 'samples', algorithm: 'grpo', step: 1 });
    if (inspection?.kind !== 'samples') throw new Error('samples expected');
    const { groupSize, promptsPerUpdate } = grpo.defaults as Record<string, number>;
    expect(inspection!.samples).toHaveLength(groupSize! * promptsPerUpdate!);
    expect(inspection!.samples[0]!.tokens.length).toBeGreaterThan(0);
    // Plain data: it survives the structured clone a worker message makes.
    expect(structuredClone(inspection)).toEqual(inspection);
    // The policy as ONNX: our importer reads it back with the run's config.
    const onnx = await api.exportOnnx();
    const back = importTransformerOnnx(onnx!);
    expect(back.config).toMatchObject({ width: 64, layers: 2, valueHead: false });
    expect(back.params.every(Number.isFinite)).toBe(true);
    await api.dispose();
  }, 60_000);

  it('builds a new model with rotary positions when the spec asks, and trains it', async () => {
    const { api, updates, listener } = host();
    const grpo = runCatalog().algorithms.find((a) => a.name === 'grpo')!;
    const rotary: RunSpec = {
      algo: 'grpo',
      task: 'copy',
      seed: 1,
      config: grpo.defaults,
      backend: 'cpu',
      sftSteps: 2,
      positions: 'rotary',
    };
    expect(checkRunSpec(rotary)).toEqual([]);
    await api.createRun(rotary, listener);
    const warmed = importTransformerOnnx((await api.exportOnnx())!);
    // The lab's trunk with rotary positions at the default base: no wpe table.
    expect(warmed.config).toMatchObject({ width: 64, layers: 2, heads: 4, positions: 'rotary' });
    expect(transformerLayout(warmed.config).entries.some((e) => e.name.includes('wpe'))).toBe(
      false,
    );
    for (let i = 0; i < 3; i++) await api.step();
    const last = updates().at(-1)!;
    expect(last.type === 'update' && last.points.at(-1)!.step).toBe(3);
    const after = importTransformerOnnx((await api.exportOnnx())!);
    expect(after.config).toEqual(warmed.config);
    expect(after.params).not.toEqual(warmed.params);
    expect(after.params.every(Number.isFinite)).toBe(true);
    await api.dispose();
  }, 60_000);

  it.each<[string, Partial<RunSpec>, string, string]>([
    [
      'an unknown kind',
      { positions: 'alibi' as never },
      'positions',
      `positions must be one of 'learned', 'rotary', got "alibi"`,
    ],
    [
      'positions beside a shipped start',
      { positions: 'rotary', init: { kind: 'shipped', model: 'copy' } },
      'positions',
      'positions is only for a new model; a run started from weights keeps their positions',
    ],
  ])('refuses a spec with %s, naming positions', (_what, over, field, message) => {
    const grpo = runCatalog().algorithms.find((a) => a.name === 'grpo')!;
    const lm: RunSpec = {
      algo: 'grpo',
      task: 'copy',
      seed: 1,
      config: grpo.defaults,
      backend: 'cpu',
    };
    expect(checkRunSpec({ ...lm, ...over })).toEqual([{ field, message }]);
    expect(checkRunSpec({ ...spec, positions: 'rotary' })).toEqual([
      { field: 'positions', message: 'positions is only for language-model runs, not q-learning' },
    ]);
  });
});

describe('run host: a curriculum', () => {
  const grpo = () => runCatalog().algorithms.find((a) => a.name === 'grpo')!;
  const spec = (over: Partial<RunSpec> = {}): RunSpec => ({
    algo: 'grpo',
    task: 'copy',
    seed: 1,
    config: grpo().defaults,
    backend: 'cpu',
    sftSteps: 60,
    curriculum: { threshold: 0.1, patience: 1 },
    ...over,
  });

  it('is checked: only for algorithms that have one, fields in range, no task options', () => {
    expect(checkRunSpec(spec())).toEqual([]);
    const dpo = runCatalog().algorithms.find((a) => a.name === 'dpo')!;
    expect(checkRunSpec(spec({ algo: 'dpo', config: dpo.defaults }))).toEqual([
      { field: 'curriculum', message: 'curriculum is only for grpo and ppo, not dpo' },
    ]);
    expect(
      checkRunSpec(
        spec({ curriculum: { threshold: 0, patience: 2.5 }, taskOptions: { maxLength: 4 } }),
      ),
    ).toEqual([
      { field: 'curriculum.threshold', message: 'threshold must be a number in (0, 1], got 0' },
      {
        field: 'curriculum.patience',
        message: 'patience must be an integer in [1, 1000], got 2.5',
      },
      {
        field: 'taskOptions',
        message: "a curriculum sets the task's options rung by rung; leave taskOptions out",
      },
    ]);
    // The shipped copy model's context (it was warmed up on 3–6 letters) cannot hold the last
    // rung (12–32 letters).
    const [error] = checkRunSpec(spec({ init: { kind: 'shipped', model: 'copy' } }));
    expect(error?.field).toBe('init');
    expect(error?.message).toMatch(/the curriculum's hardest rung needs 6\d/);
  });

  it.each(['grpo', 'ppo'])(
    '%s starts on the easiest rung, moves up when the pass rate allows, and sizes the model for the last',
    async (algo) => {
      const { api, updates, listener } = host();
      const defaults = runCatalog().algorithms.find((a) => a.name === algo)!.defaults;
      await api.createRun(spec({ algo, config: defaults }), listener);
      for (let i = 0; i < 3; i++) await api.step();
      const batches = updates().filter((m) => m.type === 'update');
      const points = batches.flatMap((m) => (m.type === 'update' ? m.points : []));
      const events = batches.flatMap((m) => (m.type === 'update' ? m.events : []));
      // Copy of 1–3 letters after 60 warm-up steps passes more than 10% of the time at once, and so
      // does 3–6 letters; 5–10 letters of a larger alphabet, new to the model, does not.
      expect(points.map((p) => p.metrics['curriculum/level'])).toEqual([0, 1, 2]);
      expect(events.filter((e) => e.kind === 'curriculum').map((e) => e.step)).toEqual([1, 2]);
      // Context: the last rung's longest prompt and answer (32 + 1 + 32) + 2, plus the 8 spare slots.
      const back = importTransformerOnnx((await api.exportOnnx())!);
      expect(back.config.context).toBe(75);
      await api.dispose();
    },
    60_000,
  );
});

describe('run host: a learned reward model', () => {
  const grpo = () => runCatalog().algorithms.find((a) => a.name === 'grpo')!;
  const rewardModel = {
    prompts: 8,
    samplesPerPrompt: 4,
    labelNoise: 0,
    steps: 3,
    pairsPerStep: 4,
    lr: 1e-3,
  };
  const spec = (over: Partial<RunSpec> = {}): RunSpec => ({
    algo: 'grpo',
    task: 'copy',
    taskOptions: { minLength: 3, maxLength: 6, alphabet: 'abcde' },
    init: { kind: 'shipped', model: 'copy' },
    sftSteps: 0,
    seed: 3,
    config: {
      ...grpo().defaults,
      promptsPerUpdate: 2,
      groupSize: 4,
      correctWeight: 0,
      rewardModelWeight: 1,
    },
    backend: 'cpu',
    rewardModel,
    ...over,
  });

  it('is checked: only for algorithms that have one, every setting in range, a weight only with one', () => {
    expect(checkRunSpec(spec())).toEqual([]);
    const dpo = runCatalog().algorithms.find((a) => a.name === 'dpo')!;
    expect(checkRunSpec(spec({ algo: 'dpo', config: dpo.defaults }))).toEqual([
      { field: 'rewardModel', message: 'rewardModel is only for grpo and ppo, not dpo' },
    ]);
    const noLr: Partial<typeof rewardModel> = { ...rewardModel };
    delete noLr.lr;
    expect(checkRunSpec(spec({ rewardModel: { ...noLr, steps: 0, extra: 1 } as never }))).toEqual([
      { field: 'rewardModel.steps', message: 'steps must be an integer in [1, 2000], got 0' },
      { field: 'rewardModel.extra', message: 'extra is not a setting of rewardModel' },
      { field: 'rewardModel.lr', message: 'lr is missing' },
    ]);
    const without = spec();
    delete without.rewardModel;
    expect(checkRunSpec(without)).toEqual([
      {
        field: 'rewardModelWeight',
        message:
          'rewardModelWeight must be 0 in a run without a reward model (set rewardModel to train one)',
      },
    ]);
  });

  it.each([
    ['grpo', { promptsPerUpdate: 2, groupSize: 4 }],
    ['ppo', { promptsPerUpdate: 4, minibatches: 2 }],
  ] as const)(
    '%s: trains it before the first update, reports it, and rewards with its score alone',
    async (algo, small) => {
      const defaults = runCatalog().algorithms.find((a) => a.name === algo)!.defaults;
      const config = { ...defaults, ...small, correctWeight: 0, rewardModelWeight: 1 };
      const messages: RunMessage[] = [];
      const listener = (m: RunMessage) => messages.push(m);
      const updates = () => messages.filter((m) => m.type === 'update');
      const api = createRunHost({ flushMs: 1, lm: { readShipped: async (f) => readShipped(f) } });
      await api.createRun(spec({ algo, config }), listener);
      const progress = messages.flatMap((m) => (m.type === 'reward-model' ? [m] : []));
      expect(progress[0]).toEqual({ type: 'reward-model', done: 0, total: 3 });
      const report = progress.at(-1)!.report!;
      expect(progress.at(-1)).toMatchObject({ done: 3, total: 3 });
      expect(report.pairs).toBeGreaterThanOrEqual(2);
      expect(report.heldOutPairs).toBe(Math.floor(report.pairs / 5));
      expect(Number.isFinite(report.firstLoss) && Number.isFinite(report.lastLoss)).toBe(true);
      await api.step();
      const points = updates().flatMap((m) => (m.type === 'update' ? m.points : []));
      const metrics = points.at(-1)!.metrics;
      // correctWeight 0: the reward is the model's term alone, while accuracy is still measured.
      expect(metrics['reward/mean']).toBeCloseTo(metrics['reward/model']!, 6);
      expect(metrics['reward/correct']).toBe(0);
      expect(metrics).toHaveProperty('reward/strict_accuracy');
      await api.dispose();
    },
    60_000,
  );
});

describe('run host: a retained task', () => {
  const grpo = () => runCatalog().algorithms.find((a) => a.name === 'grpo')!;
  const spec = (over: Partial<RunSpec> = {}): RunSpec => ({
    algo: 'grpo',
    task: 'copy',
    taskOptions: { minLength: 2, maxLength: 3, alphabet: 'abcde' },
    sftSteps: 2,
    seed: 4,
    config: {
      ...grpo().defaults,
      promptsPerUpdate: 2,
      groupSize: 2,
      maxNewTokens: 4,
      ptxCoef: 0.5,
      ptxBatch: 4,
      retainedEvalPrompts: 4,
    },
    backend: 'cpu',
    retained: { task: 'addition', taskOptions: { maxDigits: 1 } },
    ...over,
  });

  it('is checked: only for grpo and ppo, a known task, options in range, its settings only with one', () => {
    expect(checkRunSpec(spec())).toEqual([]);
    const dpo = runCatalog().algorithms.find((a) => a.name === 'dpo')!;
    expect(checkRunSpec(spec({ algo: 'dpo', config: dpo.defaults }))).toEqual([
      { field: 'retained', message: 'retained is only for grpo and ppo, not dpo' },
    ]);
    expect(checkRunSpec(spec({ retained: { task: 'chess' } }))).toEqual([
      {
        field: 'retained.task',
        message:
          "retained.task must be one of copy, reverse, sort, addition, countdown, wordproblem, multiply, shopping, facts, got 'chess'",
      },
    ]);
    expect(
      checkRunSpec(spec({ retained: { task: 'addition', taskOptions: { maxDigits: 0, x: 1 } } })),
    ).toEqual([
      {
        field: 'retained.taskOptions.maxDigits',
        message: 'maxDigits must be an integer in [1, 20], got 0',
      },
      { field: 'retained.taskOptions.x', message: 'x is not an option of addition' },
    ]);
    const without = spec();
    delete without.retained;
    expect(checkRunSpec(without).map((e) => e.field)).toEqual(['ptxCoef', 'retainedEvalPrompts']);
  });

  it('trains with the ptx term, reports the retained success, and sizes the model for both tasks', async () => {
    const { api, updates, listener } = host();
    await api.createRun(spec(), listener);
    await api.step();
    await api.step();
    const points = updates().flatMap((m) => (m.type === 'update' ? m.points : []));
    for (const { metrics } of points) {
      expect(Number.isFinite(metrics['actor/ptx_loss'])).toBe(true);
      expect(metrics['retained/success_rate']).toBeGreaterThanOrEqual(0);
      expect(metrics['retained/success_rate']).toBeLessThanOrEqual(1);
    }
    expect(points.map((p) => p.step)).toEqual([1, 2]);
    await api.dispose();
  }, 60_000);
});

describe('run host: runs stored before a setting existed', () => {
  it('a GRPO spec without the reward settings trains with their defaults (the verifier alone)', async () => {
    const { api, updates, listener } = host();
    const grpo = runCatalog().algorithms.find((a) => a.name === 'grpo')!;
    const older = Object.fromEntries(
      Object.entries(grpo.defaults).filter(
        ([key]) => !['lengthBonus', 'verifierMatch'].includes(key),
      ),
    );
    expect(
      checkRunSpec({
        algo: 'grpo',
        task: 'copy',
        seed: 1,
        config: older,
        sftSteps: 1,
        backend: 'cpu',
      }),
    ).toEqual([
      { field: 'lengthBonus', message: 'lengthBonus is missing' },
      { field: 'verifierMatch', message: 'verifierMatch is missing' },
    ]);
    await api.createRun(
      { algo: 'grpo', task: 'copy', seed: 1, config: older, backend: 'cpu', sftSteps: 1 },
      listener,
    );
    await api.step();
    const last = updates().at(-1)!;
    if (last.type !== 'update') throw new Error('update expected');
    expect(last.config).toMatchObject({ lengthBonus: 0, verifierMatch: 'full' });
    const metrics = last.points[0]!.metrics;
    // The verifier alone: the reward is the accuracy, and the full and configured verifiers agree.
    expect(metrics['reward/mean']).toBe(metrics['reward/accuracy']);
    expect(metrics['reward/strict_accuracy']).toBe(metrics['reward/accuracy']);
    await api.dispose();
  }, 60_000);
});

describe('run host: starting from saved weights', () => {
  const grpo = runCatalog().algorithms.find((a) => a.name === 'grpo')!;
  const ppo = runCatalog().algorithms.find((a) => a.name === 'ppo')!;
  const reverse = shippedEntry('reverse');
  const readShippedFile = async (file: string) => readShipped(file);
  const startSpec = (over: Partial<RunSpec>): RunSpec => ({
    algo: 'grpo',
    task: 'reverse',
    taskOptions: reverse.taskOptions as Settings,
    seed: 2,
    config: grpo.defaults,
    backend: 'cpu',
    sftSteps: 0,
    init: { kind: 'shipped', model: 'reverse' },
    ...over,
  });

  it('lists the shipped checkpoints in the catalog, from the manifest', () => {
    const listed = runCatalog().startingModels.find((m) => m.name === 'reverse');
    expect(listed).toEqual({
      name: 'reverse',
      task: 'reverse',
      taskOptions: reverse.taskOptions,
      context: reverse.config.context,
      sftSteps: reverse.recipe.steps,
      successRate: reverse.successRate,
      sampled: reverse.sampled,
      file: 'reverse.ckpt',
    });
  });

  it('GRPO from a shipped checkpoint: its weights, value head dropped, no warm-up', async () => {
    const messages: RunMessage[] = [];
    const api = createRunHost({ lm: { readShipped: readShippedFile } });
    await api.createRun(startSpec({}), (m) => messages.push(m));
    expect(messages.some((m) => m.type === 'warmup')).toBe(false);
    const exported = importTransformerOnnx((await api.exportOnnx())!);
    const shipped = loadLanguageModel(readShipped('reverse.ckpt'));
    expect(exported.config).toEqual({ ...shipped.config, valueHead: false });
    const layout = transformerLayout(exported.config);
    const full = transformerLayout(shipped.config);
    for (const entry of layout.entries) {
      expect(layout.view(exported.params, entry.name)).toEqual(
        full.view(shipped.params, entry.name),
      );
    }
    await api.step(); // and it trains
    await api.dispose();
  }, 60_000);

  it('PPO from an ONNX file the user picked: its weights and its value head', async () => {
    const bytes = readShipped('copy.onnx');
    const api = createRunHost();
    await api.createRun(
      startSpec({
        algo: 'ppo',
        task: 'copy',
        config: ppo.defaults,
        init: { kind: 'file', name: 'copy.onnx', bytes },
      }),
      () => {},
    );
    const exported = importTransformerOnnx((await api.exportOnnx())!);
    expect(exported.params).toEqual(importTransformerOnnx(bytes).params);
    await api.dispose();
  }, 60_000);

  it('GRPO from a file of a model with rotary positions: the run keeps them and trains', async () => {
    // The shipped copy model's shape with rotary positions (no wpe), fresh weights, then the
    // run's own warm-up: an untrained model is never right, so its first RL steps move nothing.
    const copy = shippedEntry('copy');
    const config: TransformerConfig = { ...copy.config, valueHead: false, positions: 'rotary' };
    const params = transformerLayout(config).initialize<Float32Array>(5);
    const bytes = exportTransformerOnnx(config, params, CharTokenizer.createDefault().spec);
    const api = createRunHost();
    await api.createRun(
      startSpec({
        task: 'copy',
        taskOptions: copy.taskOptions as Settings,
        init: { kind: 'file', name: 'rotary.onnx', bytes },
        // Enough to move every weight off the file's: the assertions are on the shape it keeps.
        sftSteps: 2,
      }),
      () => {},
    );
    const warmed = importTransformerOnnx((await api.exportOnnx())!);
    expect(warmed.config).toEqual(config);
    expect(warmed.params).not.toEqual(params);
    await api.step();
    const after = importTransformerOnnx((await api.exportOnnx())!);
    expect(after.config.positions).toBe('rotary');
    expect(after.params.every(Number.isFinite)).toBe(true);
    await api.dispose();
  }, 60_000);

  it('refuses a damaged file when the run is created, naming the problem', async () => {
    const api = createRunHost();
    const bytes = readShipped('copy.onnx').subarray(0, 1000);
    await expect(
      api.createRun(
        startSpec({ task: 'copy', init: { kind: 'file', name: 'x.onnx', bytes } }),
        () => {},
      ),
    ).rejects.toThrow(/^onnx: ModelProto field 7 declares \d+ bytes/);
  });

  it.each([
    [
      { init: { kind: 'shipped', model: 'gpt' } },
      "init.model must be one of reverse, copy, copy-noisy, reverse-noisy, sort-noisy, addition, addition-noisy, countdown, multiply, shopping, multiply-recall, got 'gpt'",
    ],
    [{ task: 'copy' }, "init.model 'reverse' was warmed up on reverse, not copy"],
    [
      { taskOptions: { ...reverse.taskOptions, maxLength: 12 } },
      `init.model 'reverse' has a context of ${reverse.config.context} tokens; these task options need 27`,
    ],
    [
      { init: { kind: 'file', name: 'x.onnx', bytes: new Uint8Array(0) } },
      'init.bytes of x.onnx must be a non-empty file',
    ],
  ] as [Partial<RunSpec>, string][])('refuses %j before any work: %s', (over, message) => {
    const errors = checkRunSpec(startSpec(over));
    expect(errors).toHaveLength(1);
    expect(errors[0]!.field).toBe('init');
    expect(errors[0]!.message.startsWith(message)).toBe(true);
  });

  it('refuses a start, a curriculum, a reward model or a retained task for environment algorithms', () => {
    expect(checkRunSpec({ ...spec, init: { kind: 'shipped', model: 'reverse' } })).toEqual([
      { field: 'init', message: 'init is only for language-model runs, not q-learning' },
    ]);
    const languageModelOnly = {
      curriculum: { threshold: 0.8, patience: 5 },
      rewardModel: { ...DEFAULT_REWARD_MODEL_CONFIG },
      retained: { task: 'addition' },
    };
    expect(checkRunSpec({ ...spec, ...languageModelOnly })).toEqual(
      Object.keys(languageModelOnly).map((field) => ({
        field,
        message: `${field} is only for language-model runs, not q-learning`,
      })),
    );
  });
});

describe('run host: the frozen reference on onnxruntime-web', () => {
  const grpo = runCatalog().algorithms.find((a) => a.name === 'grpo')!;
  const klSpec = (reference: RunSpec['reference']): RunSpec => ({
    algo: 'grpo',
    task: 'copy',
    seed: 3,
    config: { ...grpo.defaults, klCoef: 0.1, lr: 3e-3, groupSize: 4, promptsPerUpdate: 2 },
    backend: 'cpu',
    sftSteps: 2,
    reference,
  });
  /** KL and reward of updates 1..n of a run with this reference engine. */
  async function trainWith(reference: RunSpec['reference'], n: number) {
    const messages: RunMessage[] = [];
    const api = createRunHost({ flushMs: 10, lm: { ort: nodeOrtOptions() } });
    await api.createRun(klSpec(reference), (m) => messages.push(m));
    for (let i = 0; i < n; i++) await api.step();
    await api.dispose();
    const points = messages.flatMap((m) => (m.type === 'update' ? m.points : []));
    const lines = messages.flatMap((m) => (m.type === 'backend' ? [m.line] : []));
    return {
      kl: points.map((p) => p.metrics['actor/kl_loss']!),
      reward: points.map((p) => p.metrics['reward/mean']!),
      line: lines.at(-1)!,
    };
  }

  it('scores the KL term as our engine does (wasm EP), and says so on the backend line', async () => {
    const ours = await trainWith('engine', 3);
    const ort = await trainWith('ort', 3);
    expect(ours.line).toBe('CPU — requested for this run');
    expect(ort.line).toBe('CPU — requested for this run · reference on onnxruntime-web (wasm)');
    // Same samples (the policy and its sampling do not depend on the reference engine) ...
    expect(ort.reward).toEqual(ours.reward);
    // ... and the same KL within float tolerance, once the policy has moved away from π_ref.
    expect(ours.kl[2]).toBeGreaterThan(1e-6);
    for (let i = 0; i < 3; i++) {
      expect(Math.abs(ort.kl[i]! - ours.kl[i]!)).toBeLessThanOrEqual(1e-5 + 1e-3 * ours.kl[i]!);
    }
  }, 120_000);

  it('refuses an unknown reference engine, naming the choices', () => {
    expect(checkRunSpec(klSpec('trt' as never))).toEqual([
      { field: 'reference', message: "reference must be one of engine, ort, got 'trt'" },
    ]);
  });
});

describe('run host: replay (resume a saved run, fork at a step)', () => {
  /** The metrics of update `step` as the host reported them, wall-clock rates left out. */
  const metricsAt = (messages: RunMessage[], step: number) => {
    const point = messages
      .flatMap((m) => (m.type === 'update' ? m.points : []))
      .find((p) => p.step === step);
    return Object.entries(point?.metrics ?? {}).filter(
      ([name]) => !/SPS|per_s|timing_s/.test(name),
    );
  };

  it.each<[string, string, Settings, Settings]>([
    ['q-learning', 'cliffwalking', { epsilon: 0.3 }, {}],
    ['reinforce', 'frozenlake-4x4', { lr: 0.05 }, {}],
    // Short rollouts: exactness does not depend on their length, and 12 updates of the default
    // ones were most of this file's time.
    ['ppo-mlp', 'cartpole', { learningRate: 5e-4 }, { numEnvs: 2, numSteps: 16 }],
  ])(
    '%s: replaying 5 updates with a live change at update 4 continues exactly as the original',
    async (algo, env, change, smaller) => {
      const defaults = runCatalog().algorithms.find((a) => a.name === algo)!.defaults;
      const config = { ...defaults, ...smaller };
      const runSpec: RunSpec = { algo, env, seed: 3, config, backend: 'cpu' };
      // The original: 3 updates, a live change, 3 more (the change lands at update 4).
      const original = host();
      await original.api.createRun(runSpec, original.listener);
      for (let i = 0; i < 3; i++) await original.api.step();
      expect((await original.api.setHyperparams(change)).ok).toBe(true);
      for (let i = 0; i < 3; i++) await original.api.step();
      await original.api.dispose();

      // The replay: built at update 5, then one update of its own.
      const copy = host();
      await copy.api.createRun(runSpec, copy.listener, {
        steps: 5,
        changes: [{ step: 4, changes: change }],
      });
      const replays = copy.messages.filter((m) => m.type === 'replay');
      expect(replays.at(-1)).toEqual({ type: 'replay', done: 5, total: 5 });
      // Nothing of the replay is re-sent as metrics or events.
      expect(copy.updates().every((m) => m.type === 'update' && m.points.length === 0)).toBe(true);
      expect(copy.updates().at(-1)).toMatchObject({ config: change });
      await copy.api.step();
      const next = copy.updates().at(-1)!;
      expect(next.type === 'update' && next.points.map((p) => p.step)).toEqual([6]);
      expect(metricsAt(copy.messages, 6)).toEqual(metricsAt(original.messages, 6));
      await copy.api.dispose();
    },
    30_000,
  );

  it('a replay without the change diverges (the plan matters)', async () => {
    const config = runCatalog().algorithms.find((a) => a.name === 'q-learning')!.defaults;
    const runSpec: RunSpec = {
      algo: 'q-learning',
      env: 'cliffwalking',
      seed: 3,
      config,
      backend: 'cpu',
    };
    const a = host();
    await a.api.createRun(runSpec, a.listener, {
      steps: 3,
      changes: [{ step: 2, changes: { epsilon: 0.9 } }],
    });
    await a.api.step();
    const b = host();
    await b.api.createRun(runSpec, b.listener, { steps: 3, changes: [] });
    await b.api.step();
    expect(metricsAt(a.messages, 4).length).toBeGreaterThan(0);
    expect(metricsAt(a.messages, 4)).not.toEqual(metricsAt(b.messages, 4));
  });

  it('refuses a bad plan with the field named', async () => {
    const { api, listener } = host();
    await expect(api.createRun(spec, listener, { steps: -1, changes: [] })).rejects.toThrow(
      /replay.steps must be a whole number ≥ 0, got -1/,
    );
  });
});

describe('run spec: task options', () => {
  const grpo = runCatalog().algorithms.find((a) => a.name === 'grpo')!;
  const lm = (taskOptions: Record<string, number | boolean | string>): RunSpec => ({
    algo: 'grpo',
    task: 'reverse',
    taskOptions,
    seed: 1,
    config: grpo.defaults,
    backend: 'cpu',
  });

  it('recommends, for each task that names one, a shipped start warmed up on that task with its options and made for RL', () => {
    const catalog = runCatalog();
    const recommending = catalog.tasks.filter((t) => t.recommended.start !== undefined);
    expect(recommending.map((t) => t.name).sort()).toEqual([
      'addition',
      'copy',
      'countdown',
      'multiply',
      'reverse',
      'sort',
    ]);
    for (const task of recommending) {
      const start = catalog.startingModels.find((m) => m.name === task.recommended.start);
      expect(start, task.name).toBeDefined();
      expect(start!.task).toBe(task.name);
      // The form's task options become the start's: they must be ones the task accepts.
      expect(
        checkRunSpec({ ...lm(start!.taskOptions as Record<string, number>), task: task.name }),
      ).toEqual([]);
      // Room and signal: most prompts have a right answer among G samples — four in five, or three
      // in four for a start whose task says before Create that it does not rise fast (countdown).
      const least = task.recommended.expect === undefined ? 0.8 : 0.75;
      expect(start!.sampled!.passAtG, task.name).toBeGreaterThanOrEqual(least);
    }
  });

  it('lists each task with its options, defaults and recommended settings', () => {
    const multiply = runCatalog().tasks.find((t) => t.name === 'multiply')!;
    expect(multiply.spec.useTools).toMatchObject({ kind: 'boolean' });
    expect(multiply.defaults).toMatchObject({ useTools: true, minDigits: 2, maxDigits: 3 });
    expect(multiply.recommended).toEqual({ maxNewTokens: 32, sftSteps: 400, start: 'multiply' });
  });

  it.each([
    [{ maxLength: 40 }, 'task.maxLength', /maxLength must be an integer in \[1, 32\], got 40/],
    [{ bogus: 1 }, 'task.bogus', /bogus is not an option of reverse/],
    [{ minLength: 5, maxLength: 3 }, 'task', /minLength/],
  ])('refuses %o on %s', (options, field, message) => {
    const errors = checkRunSpec(lm(options));
    expect(errors.map((e) => e.field)).toEqual([field]);
    expect(errors[0]!.message).toMatch(message);
  });

  it('accepts valid options', () => {
    expect(checkRunSpec(lm({ minLength: 2, maxLength: 4, alphabet: 'abcde' }))).toEqual([]);
  });
});

describe('run host: inspecting between updates', () => {
  it('PPO on CartPole: a greedy episode, taken between updates while the run trains', async () => {
    const { api, listener } = host();
    const config = runCatalog().algorithms.find((a) => a.name === 'ppo-mlp')!.defaults;
    await api.createRun(
      { algo: 'ppo-mlp', env: 'cartpole', seed: 1, config, backend: 'cpu' },
      listener,
    );
    const before = await api.inspect();
    expect(before).toMatchObject({ kind: 'cartpole', step: 0 });
    // The MLP actor-critic as ONNX, read back by our importer with the agent's shape.
    const onnx = importOnnx((await api.exportOnnx())!);
    if (onnx.format !== 'mlp-actor-critic') throw new Error('actor-critic expected');
    expect(onnx.actorConfig).toMatchObject({ inputs: 4, outputs: 2 });
    expect(onnx.criticConfig).toMatchObject({ inputs: 4, outputs: 1 });
    await api.start();
    const during = await api.inspect();
    await api.pause();
    if (during?.kind !== 'cartpole') throw new Error('cartpole expected');
    expect(during.x).toHaveLength(during.steps + 1);
    expect(during.theta).toHaveLength(during.steps + 1);
    expect(during.steps).toBeGreaterThan(0);
    expect(during.steps).toBeLessThanOrEqual(500);
    // 'fell' means the last frame is out of bounds: |θ| > 12° or |x| > 2.4.
    if (during.end === 'fell') {
      const i = during.steps;
      expect(
        Math.abs(during.theta[i]!) > (12 * Math.PI) / 180 || Math.abs(during.x[i]!) > 2.4,
      ).toBe(true);
    }
    await api.dispose();
  }, 60_000);
});

describe('run host: turns at training (the lab leaves a core for the page)', () => {
  /** Turns from `slots` that count how many runs hold one at once. */
  function countedTurns(
    slots: TrainingSlots,
    stats: { holding: number; most: number; taken: number },
  ) {
    const turns = slots.forRun();
    let mine = false;
    const granted = (ok: boolean) => {
      if (ok) {
        mine = true;
        stats.holding += 1;
        stats.most = Math.max(stats.most, stats.holding);
        stats.taken += 1;
      }
      return ok;
    };
    const released = () => {
      if (mine) stats.holding -= 1;
      mine = false;
    };
    return {
      take: async () => granted(await turns.take()),
      async pass(ms: number) {
        released();
        return granted(await turns.pass(ms));
      },
      give(ms?: number) {
        released();
        turns.give(ms);
      },
      cancel: () => turns.cancel(),
    };
  }

  it('two runs on one slot train in turns, slice by slice, never both at once', async () => {
    const slots = new TrainingSlots(1);
    const stats = { holding: 0, most: 0, taken: 0 };
    const [a, b] = [host(), host()];
    await a.api.createRun(spec, a.listener, undefined, undefined, countedTurns(slots, stats));
    await b.api.createRun(
      { ...spec, seed: 2 },
      b.listener,
      undefined,
      undefined,
      countedTurns(slots, stats),
    );
    await Promise.all([a.api.start(), b.api.start()]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await Promise.all([a.api.pause(), b.api.pause()]);
    expect(stats.most).toBe(1);
    expect(stats.holding).toBe(0); // every turn given back
    expect(stats.taken).toBeGreaterThanOrEqual(4);
    const steps = (h: ReturnType<typeof host>) =>
      h.updates().flatMap((m) => (m.type === 'update' ? m.points.map((p) => p.step) : [])).length;
    expect(steps(a)).toBeGreaterThan(0);
    expect(steps(b)).toBeGreaterThan(0);
    await Promise.all([a.api.dispose(), b.api.dispose()]);
  });

  it('a replay takes turns too: it waits while another run holds the only slot', async () => {
    const slots = new TrainingSlots(1);
    const blocker = slots.forRun();
    await blocker.take();
    // Slices long enough for the whole replay: ungated, it would be done within the 50 ms below.
    const messages: RunMessage[] = [];
    const api = createRunHost({ flushMs: 50, sliceMs: 5_000 });
    const listener = (m: RunMessage) => messages.push(m);
    const created = api.createRun(
      spec,
      listener,
      { steps: 300, changes: [] },
      undefined,
      slots.forRun(),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(messages.some((m) => m.type === 'replay')).toBe(false);
    expect(slots.queued).toBe(1);
    blocker.give(10);
    await created;
    expect(messages.filter((m) => m.type === 'replay').at(-1)).toEqual({
      type: 'replay',
      done: 300,
      total: 300,
    });
    expect([slots.training, slots.queued]).toEqual([0, 0]); // its turn given back
    await api.dispose();
  });

  it("a language model's warm-up takes turns too, slice by slice, and gives its turn back", async () => {
    const slots = new TrainingSlots(1);
    const blocker = slots.forRun();
    await blocker.take();
    const messages: RunMessage[] = [];
    const api = createRunHost({ flushMs: 50, sliceMs: 1 });
    const grpo = runCatalog().algorithms.find((a) => a.name === 'grpo')!;
    const stats = { holding: 0, most: 0, taken: 0 };
    const created = api.createRun(
      {
        algo: 'grpo',
        task: 'copy',
        seed: 1,
        sftSteps: 6,
        config: grpo.defaults,
        backend: 'cpu',
      },
      (m) => messages.push(m),
      undefined,
      undefined,
      countedTurns(slots, stats),
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    // Ungated, 6 SFT steps of the lab's model would have begun within the 50 ms.
    expect(messages.filter((m) => m.type === 'warmup')).toEqual([]);
    expect(slots.queued).toBe(1);
    blocker.give(10);
    await created;
    const warmup = messages.filter((m) => m.type === 'warmup');
    expect(warmup.at(-1)).toMatchObject({ done: 6, total: 6 });
    // sliceMs 1: the turn was passed on after (nearly) every step, and given back at the end.
    expect(stats.taken).toBeGreaterThanOrEqual(5);
    expect(stats.holding).toBe(0);
    expect([slots.training, slots.queued]).toEqual([0, 0]);
    await api.dispose();
  });

  it('a run waiting for a turn answers an inspection, and pauses without getting one', async () => {
    const slots = new TrainingSlots(1);
    const blocker = slots.forRun();
    await blocker.take(); // holds the only slot throughout
    const { api, messages, listener } = host();
    await api.createRun(spec, listener, undefined, undefined, slots.forRun());
    await api.step(); // one update (a step is the user's own, not a turn)
    await api.start();
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(slots.queued).toBe(1);
    expect(await api.inspect()).not.toBeNull();
    await api.pause();
    expect(slots.queued).toBe(0);
    expect(
      messages
        .filter((m) => m.type === 'status')
        .map((m) => m.status)
        .slice(-2),
    ).toEqual(['running', 'paused']);
    // No update ran while it waited: only the step's.
    const steps = messages.flatMap((m) => (m.type === 'update' ? m.points.map((p) => p.step) : []));
    expect(steps).toEqual([1]);
    await api.dispose();
  });
});
