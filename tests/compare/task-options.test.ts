/** Task options travel with a run: in the lab-run file and in a comparison link, checked by the task's spec. */
import { describe, expect, it } from 'vitest';
import { writeLabRunFile, parseRunFile } from '../../src/compare/run-file';
import { decodeComparison, encodeComparison } from '../../src/compare/url-state';
import { catalog, defaultsOf } from './fixtures';

const grpo = {
  algorithm: 'grpo',
  task: 'multiply',
  seed: 4,
  config: defaultsOf('grpo'),
  metrics: { 'reward/mean': [0.1, 0.4] },
  events: [],
};

describe('task options', () => {
  it('survive a lab-run export and import', () => {
    const text = writeLabRunFile({ ...grpo, taskOptions: { useTools: false, maxDigits: 2 } });
    expect(parseRunFile(text, catalog).taskOptions).toEqual({ useTools: false, maxDigits: 2 });
  });

  it.each([
    [{ bogus: 1 }, 'spec.taskOptions.bogus: is not a setting of multiply'],
    [{ maxDigits: 9 }, 'spec.taskOptions.maxDigits: must be an integer in [1, 6], got 9'],
  ])('a file with task options %o is refused: %s', (taskOptions, message) => {
    const text = writeLabRunFile({ ...grpo, taskOptions });
    expect(() => parseRunFile(text, catalog)).toThrow(message);
  });

  it('are refused on an environment run', () => {
    const text = writeLabRunFile({
      algorithm: 'q-learning',
      task: 'cliffwalking',
      seed: 1,
      config: defaultsOf('q-learning'),
      metrics: {},
      events: [],
      taskOptions: { useTools: true },
    });
    expect(() => parseRunFile(text, catalog)).toThrow(/spec.taskOptions.*only for language-model/);
  });

  it('survive a comparison link, and bad ones name the run', () => {
    const runs = [
      { ...grpo, taskOptions: { toolCost: 0.2 } },
      { ...grpo, seed: 5 },
    ];
    const decoded = decodeComparison(encodeComparison(runs, catalog), catalog);
    expect(decoded.map((r) => r.taskOptions)).toEqual([{ toolCost: 0.2 }, undefined]);
    expect(() => encodeComparison([{ ...grpo, taskOptions: { toolCost: -1 } }], catalog)).toThrow(
      /runs\[0\]\.taskOptions\.toolCost.*\[0, 10\]/,
    );
  });
});
