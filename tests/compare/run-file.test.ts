import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  ImportError,
  MetricSeries,
  parseRunFile,
  runFromJson,
  writeCliRunFile,
  writeLabRunFile,
  type LabRunExport,
} from '../../src/compare/run-file';
import { catalog, defaultsOf } from './fixtures';

/** A valid lab-run file as an object, changed per test. */
function validFile(): Record<string, unknown> {
  return {
    format: 'agent-rl-lab/lab-run',
    version: 1,
    spec: { algorithm: 'grpo', task: 'reverse', seed: 3, config: defaultsOf('grpo') },
    metrics: {
      'reward/mean': Array.from({ length: 14 }, (_, i) => i / 10),
      b: Array.from({ length: 14 }, () => 'NaN'),
    },
    events: [{ step: 2, kind: 'hyperparams', changes: { lr: 0.01 } }],
  };
}

type Edit = (file: Record<string, unknown>) => unknown;
const spec = (f: Record<string, unknown>) => f.spec as Record<string, unknown>;
const config = (f: Record<string, unknown>) => spec(f).config as Record<string, unknown>;
const metrics = (f: Record<string, unknown>) => f.metrics as Record<string, unknown[]>;
const events = (f: Record<string, unknown>) => f.events as Record<string, unknown>[];

/** Valid reward-model settings, by hand within REWARD_MODEL_CONFIG_SPEC's ranges. */
const rewardModel = () => ({
  prompts: 64,
  samplesPerPrompt: 4,
  labelNoise: 0.1,
  steps: 30,
  pairsPerStep: 16,
  lr: 0.002,
});
/** The file with these reward-model settings. */
const withRewardModel = (f: Record<string, unknown>, value: unknown) =>
  void (spec(f).rewardModel = value);

function edited(edit: Edit): string {
  const file = validFile();
  const replaced = edit(file);
  return replaced === undefined ? JSON.stringify(file) : (replaced as string);
}

/**
 * A CLI run file of a language-model run (what `npm run train -- --out` writes), with `extra`
 * fields set on top (undefined removes one).
 */
function cliFile(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const file: Record<string, unknown> = {
    format: 'agent-rl-lab/run',
    version: 1,
    algorithm: 'grpo',
    task: 'grpo on copy(3–5)',
    seed: 4,
    backend: 'CPU (requested)',
    createdAt: '2025-01-01T00:00:00.000Z',
    config: { ...defaultsOf('grpo'), rewardModelWeight: 1 },
    taskOptions: { maxLength: 5 },
    rewardModel: rewardModel(),
    metrics: { 'reward/model': [0.5, -0.25] },
    events: [],
    summary: { updates: 2 },
    ...extra,
  };
  for (const [key, value] of Object.entries(file)) if (value === undefined) delete file[key];
  return file;
}

describe('parseRunFile', () => {
  it('reads a valid lab-run file', () => {
    const run = parseRunFile(
      edited(() => undefined),
      catalog,
    );
    expect(run.source).toBe('lab-run');
    expect(run.algorithm).toBe('grpo');
    expect(run.metrics['reward/mean']![13]).toBeCloseTo(1.3, 12);
    expect(run.metrics.b!.every(Number.isNaN)).toBe(true);
    expect(run.events).toEqual([{ step: 2, kind: 'hyperparams', changes: { lr: 0.01 } }]);
  });

  it('reads each backend choice', () => {
    for (const backend of ['auto', 'webgpu', 'cpu']) {
      const run = parseRunFile(
        edited((f) => void (spec(f).backend = backend)),
        catalog,
      );
      expect(run.backend).toBe(backend);
    }
  });

  it('gives a setting the file lacks its default (a file from before the setting existed)', () => {
    const older = edited((f) => {
      delete config(f).groupSize;
      delete config(f).lengthBonus;
    });
    const run = parseRunFile(older, catalog);
    const defaults = catalog.algorithms.find((a) => a.name === 'grpo')!.defaults;
    expect(run.config.groupSize).toBe(defaults.groupSize);
    expect(run.config.lengthBonus).toBe(0);
    expect(Object.keys(run.config).sort()).toEqual(Object.keys(defaults).sort());
  });

  // Each bad file → an ImportError naming the JSON path, and nothing else touched.
  it.each<[string, Edit, string, string]>([
    ['not JSON', () => '{"format": ', '(file)', 'is not valid JSON'],
    ['an array at the top', () => '[]', '(root)', 'must be an object, got an array of 0'],
    [
      'an unknown format',
      (f) => void (f.format = 'x/y'),
      'format',
      "must be one of 'agent-rl-lab/lab-run', 'agent-rl-lab/run'",
    ],
    [
      'a newer version',
      (f) => void (f.version = 2),
      'version',
      'must be 1 (the version this lab reads), got 2',
    ],
    ['an unknown top-level field', (f) => void (f.extra = 1), 'extra', 'is not a known field here'],
    [
      'an unknown backend',
      (f) => void (spec(f).backend = 'gpu'),
      'spec.backend',
      "must be one of 'auto', 'webgpu', 'cpu'",
    ],
    [
      'an unknown algorithm',
      (f) => void (spec(f).algorithm = 'a2c'),
      'spec.algorithm',
      'must be one of',
    ],
    [
      'a task of another family',
      (f) => void (spec(f).task = 'cartpole'),
      'spec.task',
      "must be one of 'copy', 'reverse'",
    ],
    [
      'a negative seed',
      (f) => void (spec(f).seed = -1),
      'spec.seed',
      'must be an integer in [0, 2147483647], got -1',
    ],
    ['a fractional seed', (f) => void (spec(f).seed = 1.5), 'spec.seed', 'got 1.5'],
    [
      'a setting out of range',
      (f) => void (config(f).lr = 2),
      'spec.config.lr',
      'must be a number in (0, 1], got 2',
    ],
    [
      'a setting of the wrong type',
      (f) => void (config(f).maskTruncated = 'yes'),
      'spec.config.maskTruncated',
      'must be true or false, got yes',
    ],
    [
      'an unknown setting',
      (f) => void (config(f).foo = 1),
      'spec.config.foo',
      'is not a setting of grpo',
    ],
    [
      'a prototype name as setting',
      () => edited((f) => void Object.assign(config(f), JSON.parse('{"constructor": 1}'))),
      'spec.config.constructor',
      'is not a setting of grpo',
    ],
    [
      'a bad choice',
      (f) => void (config(f).lossAggregation = 'sum'),
      'spec.config.lossAggregation',
      "must be one of 'token-mean'",
    ],
    [
      'warm-up steps on an env algorithm',
      (f) =>
        void (f.spec = {
          algorithm: 'sarsa',
          task: 'cliffwalking',
          seed: 1,
          config: defaultsOf('sarsa'),
          sftSteps: 10,
        }),
      'spec.sftSteps',
      'only for language-model runs',
    ],
    [
      'a start for an env run',
      (f) =>
        void (f.spec = {
          algorithm: 'sarsa',
          task: 'cliffwalking',
          seed: 1,
          config: defaultsOf('sarsa'),
          init: { shipped: 'reverse' },
        }),
      'spec.init',
      'only for language-model runs',
    ],
    [
      'a curriculum for an algorithm without one',
      (f) =>
        void Object.assign(spec(f), {
          algorithm: 'dpo',
          config: defaultsOf('dpo'),
          curriculum: { threshold: 0.5, patience: 3 },
        }),
      'spec.curriculum',
      'is not a setting of dpo',
    ],
    [
      'a curriculum threshold out of range',
      (f) =>
        void ((f.spec as Record<string, unknown>).curriculum = { threshold: 1.5, patience: 3 }),
      'spec.curriculum.threshold',
      'must be a number in (0, 1], got 1.5',
    ],
    [
      'a curriculum with an unknown field',
      (f) =>
        void ((f.spec as Record<string, unknown>).curriculum = {
          threshold: 0.5,
          patience: 3,
          level: 2,
        }),
      'spec.curriculum.level',
      'is not',
    ],
    [
      'a reward model for dpo (its catalog entry has no reward model)',
      (f) =>
        void Object.assign(spec(f), {
          algorithm: 'dpo',
          config: defaultsOf('dpo'),
          rewardModel: rewardModel(),
        }),
      'spec.rewardModel',
      'is not a setting of dpo',
    ],
    [
      'a reward model for an env algorithm',
      (f) =>
        void (f.spec = {
          algorithm: 'sarsa',
          task: 'cliffwalking',
          seed: 1,
          config: defaultsOf('sarsa'),
          rewardModel: rewardModel(),
        }),
      'spec.rewardModel',
      'is not a setting of sarsa',
    ],
    [
      'reward-model settings that are not an object',
      (f) => withRewardModel(f, [64, 4, 0.1, 30, 16, 0.002]),
      'spec.rewardModel',
      'must be an object, got an array of 6',
    ],
    [
      'too few reward-model prompts',
      (f) => withRewardModel(f, { ...rewardModel(), prompts: 3 }),
      'spec.rewardModel.prompts',
      'must be an integer in [4, 1024], got 3',
    ],
    [
      'a fractional reward-model step count',
      (f) => withRewardModel(f, { ...rewardModel(), steps: 2.5 }),
      'spec.rewardModel.steps',
      'must be an integer in [1, 2000], got 2.5',
    ],
    [
      'reward-model label noise of one half (the top of its range is open)',
      (f) => withRewardModel(f, { ...rewardModel(), labelNoise: 0.5 }),
      'spec.rewardModel.labelNoise',
      'must be a number in [0, 0.5), got 0.5',
    ],
    [
      'a reward-model learning rate of 0',
      (f) => withRewardModel(f, { ...rewardModel(), lr: 0 }),
      'spec.rewardModel.lr',
      'must be a number in (0, 1], got 0',
    ],
    [
      'a reward-model setting as text',
      (f) => withRewardModel(f, { ...rewardModel(), pairsPerStep: '16' }),
      'spec.rewardModel.pairsPerStep',
      'must be an integer in [1, 256], got 16',
    ],
    [
      'a reward model without its sample count',
      (f) => {
        const partial: Partial<ReturnType<typeof rewardModel>> = rewardModel();
        delete partial.samplesPerPrompt;
        withRewardModel(f, partial);
      },
      'spec.rewardModel.samplesPerPrompt',
      'is missing',
    ],
    [
      'a reward model with an unknown field',
      (f) => withRewardModel(f, { ...rewardModel(), weight: 1 }),
      'spec.rewardModel.weight',
      'is not a known field here (known: prompts, samplesPerPrompt, labelNoise, steps, pairsPerStep, lr)',
    ],
    [
      'a retained task for dpo (its catalog entry keeps none)',
      (f) =>
        void Object.assign(spec(f), {
          algorithm: 'dpo',
          config: defaultsOf('dpo'),
          retained: { task: 'addition' },
        }),
      'spec.retained',
      'is not a setting of dpo',
    ],
    [
      'an unknown retained task',
      (f) => void (spec(f).retained = { task: 'chess' }),
      'spec.retained.task',
      "must be one of 'copy', 'reverse'",
    ],
    [
      'a retained task without its name',
      (f) => void (spec(f).retained = { taskOptions: { maxDigits: 2 } }),
      'spec.retained.task',
      'is missing',
    ],
    [
      "a retained task's option out of range",
      (f) => void (spec(f).retained = { task: 'addition', taskOptions: { maxDigits: 99 } }),
      'spec.retained.taskOptions.maxDigits',
      'must be an integer in',
    ],
    [
      'an option the retained task does not have',
      (f) => void (spec(f).retained = { task: 'addition', taskOptions: { alphabet: 'ab' } }),
      'spec.retained.taskOptions.alphabet',
      'is not',
    ],
    [
      'a retained task with an unknown field',
      (f) => void (spec(f).retained = { task: 'addition', weight: 1 }),
      'spec.retained.weight',
      'is not',
    ],
    [
      'a start file that is not base64',
      (f) => void ((f.spec as Record<string, unknown>).init = { file: 'a.onnx', bytes: '**' }),
      'spec.init.bytes',
      '',
    ],
    [
      'a start with both a shipped name and a file',
      (f) =>
        void ((f.spec as Record<string, unknown>).init = { shipped: 'reverse', file: 'a.onnx' }),
      'spec.init.file',
      'is not',
    ],
    [
      'an unknown reference engine',
      (f) => void ((f.spec as Record<string, unknown>).reference = 'tensorrt'),
      'spec.reference',
      "must be one of 'engine', 'ort'",
    ],
    [
      'a boolean metric value',
      (f) => void (metrics(f)['reward/mean']![12] = true),
      "metrics['reward/mean'][12]",
      'must be a number or "NaN" ("Infinity", "-Infinity"), got true',
    ],
    [
      'a lowercase nan',
      (f) => void (metrics(f)['reward/mean']![1] = 'nan'),
      "metrics['reward/mean'][1]",
      'got "nan"',
    ],
    [
      'a number too large for a double',
      () => edited((f) => void (metrics(f).b![0] = 0)).replace('"b":[0', '"b":[1e400'),
      'metrics.b[0]',
      'got Infinity',
    ],
    [
      'series of different lengths',
      (f) => void metrics(f).b!.pop(),
      'metrics.b',
      "has 13 values; every series must have one per update, as metrics['reward/mean'] has 14",
    ],
    [
      'a metric name like a formula',
      (f) => void (metrics(f)['=cmd()'] = []),
      "metrics['=cmd()']",
      'is not a valid metric name',
    ],
    [
      'a series that is not an array',
      (f) => void (metrics(f).b = 'NaN' as never),
      'metrics.b',
      'must be an array of values, got "NaN"',
    ],
    [
      'an unknown event kind',
      (f) => void (events(f)[0]!.kind = 'boom'),
      'events[0].kind',
      "must be one of 'hyperparams'",
    ],
    [
      'an event at step 0',
      (f) => void (events(f)[0]!.step = 0),
      'events[0].step',
      'must be an integer in [1, 15], got 0',
    ],
    ['an event after the run', (f) => void (events(f)[0]!.step = 16), 'events[0].step', 'got 16'],
    [
      'a live change out of range',
      (f) => void (events(f)[0]!.changes = { lr: 5 }),
      'events[0].changes.lr',
      'must be a number in (0, 1], got 5',
    ],
    [
      'an empty live change',
      (f) => void (events(f)[0]!.changes = {}),
      'events[0].changes',
      'must change at least one setting',
    ],
    [
      'an extra event field',
      (f) => void (events(f)[0]!.extra = 1),
      'events[0].extra',
      'is not a known field here',
    ],
    [
      'a checkpoint that is not an object (tests/worker/run-checkpoint.test.ts has the rest)',
      (f) => void (f.checkpoint = 'abc$'),
      'checkpoint',
      'must be an object, got "abc$"',
    ],
    [
      'too many values',
      (f) => void (f.metrics = { a: new Array(500_001).fill(0), b: new Array(500_001).fill(0) }),
      'metrics',
      'must hold at most 1,000,000 values in all',
    ],
    [
      'a file over 20 MB',
      () => ' '.repeat(20_000_001),
      '(file)',
      'is 20,000,001 characters; the limit is 20,000,000 (about 20 MB)',
    ],
  ])('refuses %s', (_what, edit, path, message) => {
    const before = JSON.stringify(catalog);
    let error: unknown;
    try {
      parseRunFile(edited(edit), catalog);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ImportError);
    expect((error as ImportError).path).toBe(path);
    expect((error as ImportError).message).toContain(`${path}: `);
    expect((error as ImportError).problem).toContain(message);
    // A refused file changes nothing: the catalog it was checked against is as it was.
    expect(JSON.stringify(catalog)).toBe(before);
  });

  it('round-trips every exported run', () => {
    const value = fc.oneof(
      fc.double({ noNaN: true }).map((v) => v + 0), // JSON writes -0 as 0
      fc.constantFrom(NaN, Infinity, -Infinity),
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 12 }),
        fc.uniqueArray(fc.stringMatching(/^[a-z][a-z/_]{0,10}$/), { maxLength: 4 }),
        fc.infiniteStream(value),
        fc.double({ min: 1e-6, max: 1, noNaN: true }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.option(fc.uint8Array({ maxLength: 40 }), { nil: undefined }),
        fc.option(
          fc.record({
            prompts: fc.integer({ min: 4, max: 1024 }),
            samplesPerPrompt: fc.integer({ min: 2, max: 16 }),
            labelNoise: fc.double({ min: 0, max: 0.49, noNaN: true }).map((v) => v + 0),
            steps: fc.integer({ min: 1, max: 2000 }),
            pairsPerStep: fc.integer({ min: 1, max: 256 }),
            lr: fc.double({ min: 1e-6, max: 1, noNaN: true }),
          }),
          { nil: undefined },
        ),
        (updates, names, stream, lr, seed, initBytes, rewardModel) => {
          const run: LabRunExport = {
            algorithm: 'grpo',
            task: 'sort',
            seed,
            config: { ...defaultsOf('grpo'), lr },
            metrics: Object.fromEntries(
              names.map((n) => [n, Array.from({ length: updates }, () => stream.next().value)]),
            ),
            events: [
              { step: 1, kind: 'hyperparams', changes: { temperature: 0.5 } },
              { step: 1, kind: 'curriculum', level: 2, task: 'sort(2–4)' },
            ],
            label: '#1 grpo',
            backend: 'cpu',
            sftSteps: 50,
            reference: 'ort',
            curriculum: { threshold: lr, patience: updates + 1 },
            ...(rewardModel ? { rewardModel } : {}),
            init: initBytes?.length
              ? { kind: 'file', name: 'start.onnx', bytes: initBytes }
              : { kind: 'shipped', model: 'reverse' },
          };
          const back = parseRunFile(writeLabRunFile(run), catalog);
          expect(back).toEqual({ ...run, source: 'lab-run' });
        },
      ),
    );
  });

  it('reads the reward-model settings of a grpo and a ppo file as written', () => {
    const grpo = parseRunFile(
      edited((f) => withRewardModel(f, rewardModel())),
      catalog,
    );
    expect(grpo.rewardModel).toEqual({
      prompts: 64,
      samplesPerPrompt: 4,
      labelNoise: 0.1,
      steps: 30,
      pairsPerStep: 16,
      lr: 0.002,
    });
    const ppo = parseRunFile(
      edited(
        (f) =>
          void Object.assign(spec(f), {
            algorithm: 'ppo',
            config: defaultsOf('ppo'),
            rewardModel: { ...rewardModel(), labelNoise: 0 },
          }),
      ),
      catalog,
    );
    expect(ppo.rewardModel?.labelNoise).toBe(0);
    // A file without the field imports a run without a reward model.
    expect(
      'rewardModel' in
        parseRunFile(
          edited(() => undefined),
          catalog,
        ),
    ).toBe(false);
  });

  it('reads and writes a retained task under spec.retained', () => {
    const run = parseRunFile(
      edited(
        (f) =>
          void Object.assign(spec(f), {
            config: { ...defaultsOf('grpo'), ptxCoef: 0.5, retainedEvalPrompts: 16 },
            retained: { task: 'addition', taskOptions: { maxDigits: 2 } },
          }),
      ),
      catalog,
    );
    expect(run.retained).toEqual({ task: 'addition', taskOptions: { maxDigits: 2 } });
    expect(run.config.ptxCoef).toBe(0.5);
    const back = JSON.parse(writeLabRunFile({ ...run, metrics: {}, events: [] })) as {
      spec: Record<string, unknown>;
    };
    expect(back.spec.retained).toEqual({ task: 'addition', taskOptions: { maxDigits: 2 } });
    const plain = parseRunFile(
      edited((f) => void (spec(f).retained = { task: 'multiply' })),
      catalog,
    );
    expect(plain.retained).toEqual({ task: 'multiply' });
    // A file from before retained tasks existed: no retained task, ptx and the check off.
    const older = parseRunFile(
      edited(() => undefined),
      catalog,
    );
    expect('retained' in older).toBe(false);
    expect([older.config.ptxCoef, older.config.retainedEvalPrompts]).toEqual([0, 0]);
  });

  it('writes the reward-model settings under spec.rewardModel', () => {
    const text = writeLabRunFile({
      algorithm: 'ppo',
      task: 'reverse',
      seed: 1,
      config: defaultsOf('ppo'),
      metrics: {},
      events: [],
      rewardModel: rewardModel(),
    });
    expect((JSON.parse(text) as { spec: Record<string, unknown> }).spec.rewardModel).toEqual({
      prompts: 64,
      samplesPerPrompt: 4,
      labelNoise: 0.1,
      steps: 30,
      pairsPerStep: 16,
      lr: 0.002,
    });
  });

  it("reads the CLI's run file (npm run train -- --out)", () => {
    const series = new MetricSeries();
    series.push({ 'reward/mean': 0.25, 'actor/grad_norm': NaN });
    series.push({ 'reward/mean': 0.5, 'actor/grad_norm': Infinity, 'reward/std': 0.1 });
    const text = writeCliRunFile({
      format: 'agent-rl-lab/run',
      version: 1,
      algorithm: 'grpo',
      task: 'grpo on reverse(2–6)',
      seed: 7,
      backend: 'CPU',
      createdAt: '2025-01-01T00:00:00.000Z',
      config: defaultsOf('grpo'),
      metrics: series.series,
      events: [{ step: 2, kind: 'skipped-update', reason: 'non-finite gradient norm' }],
      summary: { updates: 2, seconds: 1.5 },
    });
    const run = parseRunFile(text, catalog);
    expect(run.source).toBe('cli-run');
    expect(run.task).toBe('reverse');
    expect(run.metrics).toEqual({
      'reward/mean': [0.25, 0.5],
      'actor/grad_norm': [NaN, Infinity],
      'reward/std': [NaN, 0.1],
    });
    expect(run.cli).toEqual({
      backend: 'CPU',
      createdAt: '2025-01-01T00:00:00.000Z',
      summary: { updates: 2, seconds: 1.5 },
    });
  });

  it('reads an env run file and refuses one with live changes (its config is the final one)', () => {
    const file = {
      format: 'agent-rl-lab/run',
      version: 1,
      algorithm: 'q-learning',
      task: 'q-learning on cliffwalking',
      seed: 1,
      backend: 'CPU',
      createdAt: 'now',
      config: defaultsOf('q-learning'),
      metrics: { 'charts/episodic_return': [-100] },
      events: [] as unknown[],
      summary: {},
    };
    expect(parseRunFile(JSON.stringify(file), catalog).task).toBe('cliffwalking');
    file.events = [{ step: 1, kind: 'hyperparams', changes: { alpha: 0.2 } }];
    expect(() => parseRunFile(JSON.stringify(file), catalog)).toThrow(
      'events[0]: a CLI run file records only its final config',
    );
    file.task = 'q-learning on the moon';
    expect(() => parseRunFile(JSON.stringify(file), catalog)).toThrow(
      'task: must name a task of q-learning',
    );
  });
  it("reads a CLI run file's warm-up steps and starting file as written", () => {
    expect(parseRunFile(JSON.stringify(cliFile({ sftSteps: 300 })), catalog).sftSteps).toBe(300);
    const init = { file: 'start.ckpt', bytes: 'AQID' }; // bytes 1, 2, 3
    expect(parseRunFile(JSON.stringify(cliFile({ init })), catalog).init).toEqual({
      kind: 'file',
      name: 'start.ckpt',
      bytes: new Uint8Array([1, 2, 3]),
    });
  });

  it("reads a CLI run file's task options, curriculum and reward model as written", () => {
    const grpo = parseRunFile(JSON.stringify(cliFile()), catalog);
    expect(grpo.source).toBe('cli-run');
    expect(grpo.task).toBe('copy');
    expect(grpo.taskOptions).toEqual({ maxLength: 5 });
    expect(grpo.rewardModel).toEqual({
      prompts: 64,
      samplesPerPrompt: 4,
      labelNoise: 0.1,
      steps: 30,
      pairsPerStep: 16,
      lr: 0.002,
    });
    expect(grpo.config.rewardModelWeight).toBe(1);
    expect(grpo.metrics['reward/model']).toEqual([0.5, -0.25]);
    expect('curriculum' in grpo).toBe(false);
    // A run with a curriculum: the rungs set the options, so the CLI writes none.
    const ppo = parseRunFile(
      JSON.stringify(
        cliFile({
          algorithm: 'ppo',
          task: 'ppo on copy(1–3)',
          config: defaultsOf('ppo'),
          taskOptions: undefined,
          rewardModel: undefined,
          curriculum: { threshold: 0.75, patience: 4 },
        }),
      ),
      catalog,
    );
    expect(ppo.curriculum).toEqual({ threshold: 0.75, patience: 4 });
    expect('taskOptions' in ppo || 'rewardModel' in ppo).toBe(false);
    // Files from before these fields (still version 1) read as runs without them.
    const older = parseRunFile(
      JSON.stringify(
        cliFile({ taskOptions: undefined, rewardModel: undefined, config: defaultsOf('grpo') }),
      ),
      catalog,
    );
    expect(['taskOptions', 'curriculum', 'rewardModel'].filter((k) => k in older)).toEqual([]);
  });

  it('reads back any in-range reward model and curriculum the CLI serializes', () => {
    // + 0: JSON writes -0 as 0.
    const unit = (min: number, max: number) =>
      fc.double({ min, max, noNaN: true }).map((v) => v + 0);
    fc.assert(
      fc.property(
        fc.record({
          prompts: fc.integer({ min: 4, max: 1024 }),
          samplesPerPrompt: fc.integer({ min: 2, max: 16 }),
          labelNoise: unit(0, 0.4999),
          steps: fc.integer({ min: 1, max: 2000 }),
          pairsPerStep: fc.integer({ min: 1, max: 256 }),
          lr: unit(1e-9, 1),
        }),
        fc.record({ threshold: unit(1e-9, 1), patience: fc.integer({ min: 1, max: 1000 }) }),
        (rm, curriculum) => {
          const text = writeCliRunFile({
            format: 'agent-rl-lab/run',
            version: 1,
            algorithm: 'ppo',
            task: 'ppo on reverse(1–3)',
            seed: 1,
            backend: 'CPU',
            createdAt: 'now',
            config: defaultsOf('ppo'),
            curriculum,
            rewardModel: rm,
            metrics: {},
            events: [],
            summary: {},
          });
          const run = parseRunFile(text, catalog);
          expect(run.rewardModel).toEqual(rm);
          expect(run.curriculum).toEqual(curriculum);
        },
      ),
    );
  });

  // Each bad CLI file → an ImportError naming the JSON path of the bad value.
  it.each<[string, Record<string, unknown>, string, string]>([
    [
      'a reward model for an algorithm without one',
      { algorithm: 'dpo', task: 'dpo on copy(3–5)', config: defaultsOf('dpo') },
      'rewardModel',
      'is not a setting of dpo',
    ],
    [
      'a curriculum for an algorithm without one',
      {
        algorithm: 'dpo',
        task: 'dpo on copy(3–5)',
        config: defaultsOf('dpo'),
        rewardModel: undefined,
        curriculum: { threshold: 0.5, patience: 3 },
      },
      'curriculum',
      'is not a setting of dpo',
    ],
    [
      'task options for an environment run',
      {
        algorithm: 'q-learning',
        task: 'q-learning on cliffwalking',
        config: defaultsOf('q-learning'),
        rewardModel: undefined,
      },
      'taskOptions',
      'is only for language-model runs, not q-learning',
    ],
    [
      'reward-model steps out of range',
      { rewardModel: { ...rewardModel(), steps: 0 } },
      'rewardModel.steps',
      'must be an integer in [1, 2000], got 0',
    ],
    [
      'a label noise of one half (the labels would carry nothing)',
      { rewardModel: { ...rewardModel(), labelNoise: 0.5 } },
      'rewardModel.labelNoise',
      'must be a number in [0, 0.5), got 0.5',
    ],
    [
      'a reward model without its lr',
      { rewardModel: { ...rewardModel(), lr: undefined } },
      'rewardModel.lr',
      'is missing',
    ],
    [
      'a reward model with an unknown field',
      { rewardModel: { ...rewardModel(), weight: 1 } },
      'rewardModel.weight',
      'is not a known field here (known: prompts, samplesPerPrompt, labelNoise, steps, pairsPerStep, lr)',
    ],
    [
      'a curriculum patience of 0',
      { curriculum: { threshold: 0.5, patience: 0 } },
      'curriculum.patience',
      'must be an integer in [1, 1000], got 0',
    ],
    [
      'a task option out of range',
      { taskOptions: { maxLength: 40 } },
      'taskOptions.maxLength',
      'must be an integer in [1, 32], got 40',
    ],
    [
      'an unknown task option',
      { taskOptions: { digits: 3 } },
      'taskOptions.digits',
      'is not a setting of copy',
    ],
    [
      "a lab-run spec field the CLI's file does not have",
      { reference: 'ort' },
      'reference',
      'is not a known field here (known: format, version, algorithm, task, seed, backend, createdAt, config, metrics, events, summary, taskOptions, curriculum, rewardModel, retained, sftSteps, init, model)',
    ],
    [
      'a model wider than a transformer here may be',
      { model: { width: 512, layers: 2, heads: 4 } },
      'model.width',
      'must be an integer in [16, 256], got 512',
    ],
    ['a model without its heads', { model: { width: 64, layers: 2 } }, 'model.heads', 'is missing'],
    [
      'more warm-up steps than the lab runs',
      { sftSteps: 6000 },
      'sftSteps',
      'must be an integer in [0, 5000], got 6000',
    ],
    [
      'a starting file that is not base64',
      { init: { file: 'start.ckpt', bytes: 'AB$=' } },
      'init.bytes',
      'character "$" at index 2 is not base64',
    ],
    [
      'a starting file on an environment run',
      {
        algorithm: 'q-learning',
        task: 'q-learning on cliffwalking',
        config: defaultsOf('q-learning'),
        taskOptions: undefined,
        rewardModel: undefined,
        init: { file: 'start.ckpt', bytes: 'AAAA' },
      },
      'init',
      'is only for language-model runs, not q-learning',
    ],
  ])('refuses a CLI run file with %s', (_what, extra, path, message) => {
    // JSON.stringify drops the undefined lr, as a file without the field would be.
    const text = JSON.stringify(cliFile(extra));
    let error: unknown;
    try {
      parseRunFile(text, catalog);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ImportError);
    expect((error as ImportError).path).toBe(path);
    expect((error as ImportError).message).toBe(`${path}: ${message}`);
  });
});

describe('CLI run files: the model’s positions', () => {
  /** A CLI run file of a grpo run on copy from a new model, recording `model`. */
  const cliRun = (model: unknown) =>
    JSON.stringify(
      cliFile({
        config: defaultsOf('grpo'),
        rewardModel: undefined,
        sftSteps: 300,
        model,
        metrics: { 'reward/mean': [0.5, 0.25] },
      }),
    );

  it('reads a rotary model as written, and the lab rebuilds it with rotary positions', () => {
    const model = { width: 64, layers: 2, heads: 4, positions: 'rotary', rotaryBase: 10000 };
    expect(parseRunFile(cliRun(model), catalog).cli?.model).toEqual(model);
    const lab = runFromJson(cliRun(model), catalog);
    expect(lab.spec.positions).toBe('rotary');
    // The lab's own shape at the default base: nothing to warn about.
    expect(lab.note).toBeUndefined();
    // A file that leaves the base out means the default one.
    const noBase = { width: 64, layers: 2, heads: 4, positions: 'rotary' };
    expect(runFromJson(cliRun(noBase), catalog).note).toBeUndefined();
    expect(parseRunFile(cliRun(noBase), catalog).cli?.model).toEqual(noBase);
  });

  it('reads a model recorded before positions existed as learned', () => {
    const old = { width: 64, layers: 2, heads: 4 };
    expect(parseRunFile(cliRun(old), catalog).cli?.model).toEqual({
      width: 64,
      layers: 2,
      heads: 4,
      positions: 'learned',
    });
    const lab = runFromJson(cliRun(old), catalog);
    expect('positions' in lab.spec).toBe(false);
    expect(lab.note).toBeUndefined();
  });

  it('names the positions when the model is not the one the lab builds', () => {
    const note = runFromJson(
      cliRun({ width: 64, layers: 2, heads: 4, positions: 'rotary', rotaryBase: 1e6 }),
      catalog,
    ).note;
    expect(note).toBe(
      'It trained a transformer of width 64, 2 layers, 4 heads, rotary positions (base 1000000); ' +
        'the lab builds width 64, 2 layers, 4 heads, rotary positions (base 10000). Starting it ' +
        'here replays its updates on the lab’s model, whose curves will differ from the file’s: ' +
        'compare it as it is.',
    );
    expect(runFromJson(cliRun({ width: 32, layers: 1, heads: 4 }), catalog).note).toContain(
      'width 32, 1 layer, 4 heads, learned positions; the lab builds width 64, 2 layers, 4 ' +
        'heads, learned positions.',
    );
  });

  it.each<[string, Record<string, unknown>, string, string]>([
    [
      'an unknown kind of positions',
      { positions: 'alibi' },
      'model.positions',
      `must be one of 'learned', 'rotary', got "alibi"`,
    ],
    [
      'positions as a boolean',
      { positions: true },
      'model.positions',
      `must be one of 'learned', 'rotary', got true`,
    ],
    [
      'a rotary base of 0',
      { positions: 'rotary', rotaryBase: 0 },
      'model.rotaryBase',
      'must be a number in [100, 10000000], got 0',
    ],
    [
      'a negative rotary base',
      { positions: 'rotary', rotaryBase: -10000 },
      'model.rotaryBase',
      'must be a number in [100, 10000000], got -10000',
    ],
    [
      'a rotary base spelled as infinity',
      { positions: 'rotary', rotaryBase: 'Infinity' },
      'model.rotaryBase',
      'must be a number in [100, 10000000], got "Infinity"',
    ],
    [
      'a rotary base of a learned model',
      { positions: 'learned', rotaryBase: 10000 },
      'model.rotaryBase',
      "is only meaningful with positions 'rotary'",
    ],
    [
      'a rotary base without positions',
      { rotaryBase: 10000 },
      'model.rotaryBase',
      "is only meaningful with positions 'rotary'",
    ],
    [
      'an unknown model field',
      { theta: 10000 },
      'model.theta',
      'is not a known field here (known: width, layers, heads, positions, rotaryBase)',
    ],
  ])('refuses a model with %s, naming the field', (_what, extra, path, problem) => {
    let error: unknown;
    try {
      parseRunFile(cliRun({ width: 64, layers: 2, heads: 4, ...extra }), catalog);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ImportError);
    expect((error as ImportError).message).toBe(`${path}: ${problem}`);
  });
});
