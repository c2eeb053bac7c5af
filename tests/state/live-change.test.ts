import { describe, expect, it } from 'vitest';
import { appliedNote, changeText } from '../../src/state/live-change';

describe('appliedNote', () => {
  it('names the next update when none was under way', () => {
    expect(appliedNote(9, 8)).toBe('Applies from update 9; the charts mark it there.');
  });

  it('says which update was under way when the change starts one later', () => {
    expect(appliedNote(10, 8)).toBe(
      'Applies from update 10 (update 9 was under way); the charts mark it there.',
    );
  });
});

describe('changeText', () => {
  it('names each changed setting with its new value, in the order changed', () => {
    expect(changeText({ lr: 0.0005, klCoef: 0.1, dynamicSampling: true })).toBe(
      'lr → 0.0005, klCoef → 0.1, dynamicSampling → true',
    );
  });
});
