import { describe, expect, it } from 'vitest';
import {
  describeToken,
  diverging,
  scaleOf,
  tokenColor,
  tokenValue,
  visibleText,
} from '../../src/state/token-colors';
import type { InspectedToken } from '../../src/worker/run-protocol';

const token = (over: Partial<InspectedToken> = {}): InspectedToken => ({
  text: 'a',
  trained: true,
  observation: false,
  advantage: 0.5,
  ratio: 1,
  clipped: false,
  ...over,
});

describe('token colours', () => {
  it('diverges blue–white–orange and clamps', () => {
    expect(diverging(0)).toBe('rgb(255, 255, 255)');
    expect(diverging(1)).toBe('rgb(230, 97, 1)');
    expect(diverging(-1)).toBe('rgb(33, 102, 172)');
    expect(diverging(-5)).toBe(diverging(-1));
    // Half way to orange: 255 + (230 − 255)/2 = 242.5 → 243; 255 − 79 = 176; 255 − 127 = 128.
    expect(diverging(0.5)).toBe('rgb(243, 176, 128)');
    expect(diverging(NaN)).toBe('rgb(255, 255, 255)');
  });

  it('reads each mode, with nothing shown for untrained or tool tokens', () => {
    expect(tokenValue(token(), 'advantage')).toBe(0.5);
    expect(tokenValue(token({ trained: false }), 'advantage')).toBeNaN();
    expect(tokenValue(token({ ratio: Math.E }), 'ratio')).toBeCloseTo(1, 12);
    expect(tokenValue(token({ clipped: true }), 'clipped')).toBe(1);
    expect(tokenValue(token({ trained: false }), 'mask')).toBe(0);
    expect(tokenValue(token(), 'value')).toBeNaN();
    expect(tokenValue(token({ value: 0.25 }), 'value')).toBe(0.25);
    expect(tokenColor(token({ observation: true, trained: false }), 'mask', 1)).toBe('transparent');
  });

  it('scales by the largest magnitude so the strongest token is fully coloured', () => {
    const tokens = [token({ advantage: -2 }), token({ advantage: 1 })];
    expect(scaleOf(tokens, 'advantage')).toBe(2);
    expect(tokenColor(tokens[0]!, 'advantage', 2)).toBe(diverging(-1));
    expect(tokenColor(tokens[1]!, 'advantage', 2)).toBe(diverging(0.5));
  });

  it('shows spaces and newlines, and describes a token in words', () => {
    expect(visibleText('a b\n')).toBe('a␣b⏎');
    expect(describeToken(token({ clipped: true, ratio: 1.3 }))).toBe(
      '"a", trained, advantage 0.500, ratio 1.300, clipped',
    );
    expect(describeToken(token({ observation: true, trained: false, ratio: NaN }))).toBe(
      '"a", tool result (not trained)',
    );
  });
});
