import { describe, expect, it } from 'vitest';
import { startLine, startingModelLabel } from '../../src/state/run-start';

describe('startLine', () => {
  it.each<[Parameters<typeof startLine>[0], string | undefined]>([
    [{ task: undefined, sftSteps: 100 }, undefined],
    [
      { task: 'copy', init: { kind: 'shipped', model: 'copy-noisy' } },
      'Starts from the shipped copy-noisy model',
    ],
    [
      {
        task: 'copy',
        init: { kind: 'file', name: 'copy.onnx', bytes: new Uint8Array() },
        sftSteps: 20,
      },
      'Starts from copy.onnx, then 20 SFT steps',
    ],
    [
      { task: 'reverse', sftSteps: 100 },
      'Starts from a new model with learned positions (a position table, as GPT-2), then 100 SFT steps',
    ],
    [
      { task: 'reverse', positions: 'rotary', sftSteps: 0 },
      'Starts from a new model with rotary positions (RoPE, as Llama, SmolLM2 and Qwen2.5)',
    ],
  ])('%o → %s', (spec, line) => {
    expect(startLine(spec)).toBe(line);
  });
});

describe('startingModelLabel', () => {
  it('gives greedy success, and sampled success where it was measured', () => {
    const sampled = { temperature: 1, groupSize: 8, passAt1: 0.33203125, passAtG: 0.949 };
    expect(startingModelLabel({ name: 'reverse-noisy', successRate: 0.96484375, sampled })).toBe(
      'shipped reverse-noisy (96% greedy, 33% sampled)',
    );
    expect(startingModelLabel({ name: 'old', successRate: 0.402 })).toBe(
      'shipped old (40% greedy)',
    );
    // Just short of 1 is not 100%.
    expect(startingModelLabel({ name: 'sort-noisy', successRate: 0.99609375 })).toBe(
      'shipped sort-noisy (>99% greedy)',
    );
    expect(startingModelLabel({ name: 'exact', successRate: 1 })).toBe(
      'shipped exact (100% greedy)',
    );
  });
});
