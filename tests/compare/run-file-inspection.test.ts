/**
 * A run's kept inspection inside its lab-run file: each kind comes back as it was written (a
 * token's NaN ratio included), the lab's conversions carry it both ways, and a damaged one is
 * refused with the JSON path of the first bad value.
 */
import { describe, expect, it } from 'vitest';
import {
  ImportError,
  parseRunFile,
  runFromJson,
  runToJson,
  writeLabRunFile,
  type LabRunExport,
} from '../../src/compare/run-file';
import type {
  CartPoleInspection,
  GridInspection,
  Inspection,
  RunSpec,
  SampleInspection,
} from '../../src/worker/run-protocol';
import { catalog, defaultsOf } from './fixtures';

const samples = (): SampleInspection => ({
  kind: 'samples',
  algorithm: 'grpo',
  step: 3,
  groupSize: 2,
  has: { ratio: true, value: false },
  samples: [
    {
      group: 0,
      prompt: 'abc',
      completion: 'cba',
      reward: 1,
      advantage: 0.5,
      tokens: [
        // A token outside the loss mask has no ratio: NaN, which plain JSON would turn into null.
        { text: 'c', trained: false, observation: true, advantage: 0, ratio: NaN, clipped: false },
        {
          text: 'b',
          trained: true,
          observation: false,
          advantage: 0.5,
          ratio: 1.25,
          clipped: true,
        },
      ],
    },
    { group: 0, prompt: 'abc', completion: '', reward: -1, advantage: -0.5, tokens: [] },
  ],
});

const grid = (): GridInspection => ({
  kind: 'grid',
  algorithm: 'q-learning',
  step: 2,
  rows: 1,
  cols: 3,
  cells: ['floor', 'cliff', 'goal'],
  start: 0,
  values: [-1.5, -Infinity, 0],
  moves: [
    [0, 1],
    [0, 0],
    [0, 0],
  ],
});

const cartPole = (): CartPoleInspection => ({
  kind: 'cartpole',
  algorithm: 'ppo-mlp',
  step: 1,
  x: [0, 0.01, 0.03],
  theta: [0.02, 0.025, 0.031],
  steps: 2,
  end: 'fell',
});

/** A grpo run of three updates, as the lab exports it. */
function exported(inspection: Inspection | undefined): LabRunExport {
  return {
    algorithm: 'grpo',
    task: 'reverse',
    seed: 3,
    config: defaultsOf('grpo'),
    metrics: { 'reward/mean': [0.1, 0.2, 0.3] },
    events: [],
    ...(inspection ? { inspection } : {}),
  };
}

/** The file of exported(samples()) as an object, with `edit` applied to its inspection. */
function editedFile(edit: (inspection: Record<string, unknown>) => void): string {
  const file = JSON.parse(writeLabRunFile(exported(samples()))) as Record<string, unknown>;
  edit(file.inspection as Record<string, unknown>);
  return JSON.stringify(file);
}

const sample0 = (i: Record<string, unknown>) =>
  (i.samples as Record<string, unknown>[])[0] as Record<string, unknown>;
const token1 = (i: Record<string, unknown>) =>
  (sample0(i).tokens as Record<string, unknown>[])[1] as Record<string, unknown>;

describe('the inspection in a lab-run file', () => {
  it.each<[string, Inspection]>([
    ['samples (a NaN ratio kept)', samples()],
    ['a grid (a -Infinity value kept)', grid()],
    ['a CartPole episode', cartPole()],
  ])('reads back %s as written', (_what, inspection) => {
    const text = writeLabRunFile(exported(inspection));
    expect(text).not.toContain('null');
    expect(parseRunFile(text, catalog).inspection).toEqual(inspection);
  });

  it('is left out of a run that kept none, and such a file reads without one', () => {
    const text = writeLabRunFile(exported(undefined));
    expect(text).not.toContain('inspection');
    expect(parseRunFile(text, catalog).inspection).toBeUndefined();
  });

  it("goes with the lab's export and comes back as the imported run's", () => {
    const spec: RunSpec = {
      algo: 'grpo',
      task: 'reverse',
      seed: 3,
      config: defaultsOf('grpo'),
      backend: 'cpu',
    };
    const run = {
      label: '#1 grpo on reverse, seed 3',
      spec,
      series: { 'reward/mean': { x: [1, 2, 3], y: [0.1, 0.2, 0.3] } },
      events: [],
    };
    const back = runFromJson(runToJson({ ...run, inspection: samples() }), catalog);
    expect(back.data.inspection).toEqual(samples());
    const without = runFromJson(runToJson({ ...run, inspection: undefined }), catalog);
    expect(without.data).not.toHaveProperty('inspection');
  });

  it.each<[string, (i: Record<string, unknown>) => void, string, string]>([
    [
      'an unknown kind',
      (i) => void (i.kind = 'video'),
      'inspection.kind',
      "must be one of 'samples', 'grid', 'cartpole'",
    ],
    [
      'a step after the last update',
      (i) => void (i.step = 4),
      'inspection.step',
      'must be an integer in [0, 3], got 4',
    ],
    [
      'a ratio that is not a number',
      (i) => void (token1(i).ratio = true),
      'inspection.samples[0].tokens[1].ratio',
      'must be a number or "NaN"',
    ],
    [
      'a token without its text',
      (i) => void delete token1(i).text,
      'inspection.samples[0].tokens[1].text',
      'is missing',
    ],
    [
      'an unknown token field',
      (i) => void (token1(i).logits = [1, 2]),
      'inspection.samples[0].tokens[1].logits',
      'is not a known field here',
    ],
    [
      'a prompt over 2,000 characters',
      (i) => void (sample0(i).prompt = 'x'.repeat(2001)),
      'inspection.samples[0].prompt',
      'must be at most 2000 characters',
    ],
    [
      'more than 100,000 tokens',
      (i) =>
        void (sample0(i).tokens = new Array(100_001).fill({
          text: 'a',
          trained: true,
          observation: false,
          advantage: 0,
          ratio: 1,
          clipped: false,
        })),
      'inspection.samples',
      'must hold at most 100,000 tokens in all, got 100,001',
    ],
  ])('refuses %s', (_what, edit, path, message) => {
    let error: unknown;
    try {
      parseRunFile(editedFile(edit), catalog);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ImportError);
    expect((error as ImportError).path).toBe(path);
    expect((error as ImportError).problem).toContain(message);
  });

  it.each<[string, Inspection, string, string]>([
    [
      'a grid whose cells do not fill it',
      { ...grid(), cells: ['floor', 'goal'] },
      'inspection.cells',
      'must be a list of 3 items, got an array of 2',
    ],
    [
      'a grid cell the inspector cannot draw',
      { ...grid(), cells: ['floor', 'lava', 'goal'] },
      'inspection.cells[1]',
      "must be one of 'floor', 'wall', 'goal', 'hole', 'cliff'",
    ],
    [
      'a move of two cells',
      {
        ...grid(),
        moves: [
          [0, 2],
          [0, 0],
          [0, 0],
        ],
      },
      'inspection.moves[0][1]',
      'must be an integer in [-1, 1], got 2',
    ],
    [
      'a start outside the grid',
      { ...grid(), start: 3 },
      'inspection.start',
      'must be an integer in [0, 2], got 3',
    ],
    [
      'an episode whose angles do not match its positions',
      { ...cartPole(), theta: [0, 0] },
      'inspection.theta',
      'must be a list of 3 items, got an array of 2',
    ],
    [
      'an episode with an unknown ending',
      { ...cartPole(), end: 'flew' as 'fell' },
      'inspection.end',
      "must be one of 'fell', 'truncated'",
    ],
  ])('refuses %s', (_what, inspection, path, message) => {
    let error: unknown;
    try {
      parseRunFile(writeLabRunFile(exported(inspection)), catalog);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ImportError);
    expect((error as ImportError).path).toBe(path);
    expect((error as ImportError).problem).toContain(message);
  });
});
