import { describe, expect, it } from 'vitest';
import { comparisonToken } from '../../src/compare/comparison-token';
import { decodeComparison } from '../../src/compare/url-state';
import { runFromJson, runToCsv, runToJson, specsFromLink } from '../../src/compare/run-file';
import type { RunSpec } from '../../src/worker/run-protocol';
import { runCatalog } from '../../src/worker/run-spec';

const catalog = runCatalog();
const defaults = (name: string) => ({
  ...catalog.algorithms.find((a) => a.name === name)!.defaults,
});

const grpoSpec: RunSpec = {
  algo: 'grpo',
  task: 'multiply',
  taskOptions: { ...catalog.tasks.find((t) => t.name === 'multiply')!.defaults, toolCost: 0.2 },
  seed: 3,
  config: defaults('grpo'),
  backend: 'cpu',
  sftSteps: 400,
};
const run = {
  label: '#1 grpo on multiply, seed 3',
  spec: grpoSpec,
  // reward/mean at updates 1–3; tools/call_frequency only at update 2.
  series: {
    'reward/mean': { x: [1, 2, 3], y: [0.25, 0.5, 0.75] },
    'tools/call_frequency': { x: [2], y: [1.5] },
  },
  events: [{ step: 2, kind: 'hyperparams' as const, changes: { lr: 0.0005 } }],
};

/** A ppo run that trains a reward model (and a curriculum) first: settings by hand. */
const rewardModelSpec: RunSpec = {
  algo: 'ppo',
  task: 'reverse',
  seed: 5,
  config: { ...defaults('ppo'), rewardModelWeight: 0.5 },
  backend: 'auto',
  sftSteps: 100,
  curriculum: { threshold: 0.75, patience: 4 },
  rewardModel: {
    prompts: 32,
    samplesPerPrompt: 6,
    labelNoise: 0.25,
    steps: 80,
    pairsPerStep: 8,
    lr: 0.0005,
  },
};

describe('run files', () => {
  it('a run survives JSON export and import: spec, sparse series, events, config after changes', () => {
    const back = runFromJson(runToJson(run, '2026-12-02T00:00:00Z'), catalog);
    expect(back.spec).toEqual(grpoSpec);
    expect(back.label).toBe(run.label);
    expect(back.data.series).toEqual(run.series);
    expect(back.data.events).toEqual(run.events);
    expect(back.data.steps).toBe(3);
    expect(back.data.config.lr).toBe(0.0005);
  });

  it('a reward model survives JSON export and import', () => {
    const text = runToJson({ ...run, spec: rewardModelSpec });
    expect(text).toContain(
      '"rewardModel":{"prompts":32,"samplesPerPrompt":6,"labelNoise":0.25,"steps":80,"pairsPerStep":8,"lr":0.0005}',
    );
    const back = runFromJson(text, catalog);
    expect(back.spec).toEqual(rewardModelSpec);
    expect(back.spec.rewardModel).not.toBe(rewardModelSpec.rewardModel);
  });

  it('refuses a file whose reward model is out of range, naming spec.rewardModel.<field>', () => {
    const text = runToJson({ ...run, spec: rewardModelSpec }).replace(
      '"pairsPerStep":8',
      '"pairsPerStep":257',
    );
    expect(() => runFromJson(text, catalog)).toThrow(
      'spec.rewardModel.pairsPerStep: must be an integer in [1, 256], got 257',
    );
  });

  it('quotes a 5 MB string given as config.lr cut short, in a one-line error (issue 42: 6)', () => {
    const json = JSON.parse(runToJson(run));
    json.spec.config.lr = 'x'.repeat(5_000_000);
    const refusal = () => runFromJson(JSON.stringify(json), catalog);
    expect(refusal).toThrow(/^spec\.config\.lr: must be a number in \(0, 1\], got x{37}…$/);
    // The same for a reward model's setting and a task option: every checked field is cut.
    json.spec.config.lr = 0.001;
    json.spec.taskOptions.toolCost = 'y'.repeat(5_000_000);
    expect(() => runFromJson(JSON.stringify(json), catalog)).toThrow(/got y{37}…$/);
  });

  it('refuses a broken file with the JSON path named', () => {
    const text = runToJson(run).replace('"reward/mean":[0.25', '"reward/mean":[true');
    expect(() => runFromJson(text, catalog)).toThrow(/metrics\['reward\/mean'\]\[0\]/);
    expect(() => runFromJson('{"format": "something else"', catalog)).toThrow();
  });

  it('writes the metrics as CSV, one row per update, empty where not reported', () => {
    expect(runToCsv(run)).toBe(
      'update,reward/mean,tools/call_frequency\r\n1,0.25,\r\n2,0.5,1.5\r\n3,0.75,\r\n',
    );
  });

  it('links a comparison that recreates the same specs (task options that differ only)', () => {
    const envSpec: RunSpec = {
      algo: 'q-learning',
      env: 'cliffwalking',
      seed: 2,
      config: { ...defaults('q-learning'), epsilon: 0.3 },
      backend: 'auto',
    };
    const token = comparisonToken([{ spec: grpoSpec }, { spec: envSpec }], catalog);
    const specs = specsFromLink(decodeComparison(token, catalog), catalog);
    expect(specs[0]).toMatchObject({ algo: 'grpo', task: 'multiply', seed: 3, sftSteps: 400 });
    expect(specs[0]!.taskOptions).toEqual({ toolCost: 0.2 });
    expect(specs[0]!.config).toEqual(grpoSpec.config);
    expect(specs[1]).toEqual(envSpec);
  });

  it('links a run with a reward model that recreates the same spec', () => {
    const token = comparisonToken([{ spec: rewardModelSpec }], catalog);
    const [spec] = specsFromLink(decodeComparison(token, catalog), catalog);
    expect(spec).toEqual(rewardModelSpec);
    const dpo: RunSpec = { ...rewardModelSpec, algo: 'dpo', config: defaults('dpo') };
    delete dpo.curriculum;
    expect(() => comparisonToken([{ spec: dpo }], catalog)).toThrow(
      'runs[0].rewardModel: is not a setting of dpo',
    );
  });
});

describe('run files: a new model’s positions', () => {
  const rotarySpec: RunSpec = { ...grpoSpec, positions: 'rotary' };

  it('a lab run of a rotary model keeps its positions through export and import', () => {
    const text = runToJson({ ...run, spec: rotarySpec });
    expect(JSON.parse(text).spec.positions).toBe('rotary');
    expect(runFromJson(text, catalog).spec).toEqual(rotarySpec);
  });

  it('a lab-run file from before positions reads as a learned model (no positions in its spec)', () => {
    const text = runToJson(run);
    expect('positions' in JSON.parse(text).spec).toBe(false);
    expect(runFromJson(text, catalog).spec.positions).toBeUndefined();
  });

  it.each([
    ['an unknown kind', { positions: 'alibi' }, `must be one of 'learned', 'rotary', got "alibi"`],
    ['a number', { positions: 1 }, `must be one of 'learned', 'rotary', got 1`],
    [
      'positions beside a start from weights',
      { positions: 'rotary', init: { shipped: 'reverse' } },
      'is only for a run started from a new model (leave out init)',
    ],
  ])('refuses spec.positions of %s, naming the field', (_what, extra, problem) => {
    const file = JSON.parse(runToJson(run));
    Object.assign(file.spec, extra);
    expect(() => runFromJson(JSON.stringify(file), catalog)).toThrow(`spec.positions: ${problem}`);
  });

  it('refuses spec.positions on an environment run', () => {
    const envSpec: RunSpec = {
      algo: 'q-learning',
      env: 'cliffwalking',
      seed: 1,
      config: defaults('q-learning'),
      backend: 'auto',
    };
    const envRun = { ...run, spec: envSpec, events: [] };
    const file = JSON.parse(runToJson(envRun));
    file.spec.positions = 'rotary';
    expect(() => runFromJson(JSON.stringify(file), catalog)).toThrow(
      'spec.positions: is only for language-model runs, not q-learning',
    );
  });

  it('links a rotary run that recreates the same spec; a learned one’s link has no positions', () => {
    const token = comparisonToken([{ spec: rotarySpec }], catalog);
    expect(specsFromLink(decodeComparison(token, catalog), catalog)[0]!.positions).toBe('rotary');
    const plain = comparisonToken([{ spec: grpoSpec }], catalog);
    expect(specsFromLink(decodeComparison(plain, catalog), catalog)[0]!.positions).toBeUndefined();
  });
});
