import { describe, expect, it } from 'vitest';
import { startLine } from '../../src/state/run-start';

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
