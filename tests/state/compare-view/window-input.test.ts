import { describe, expect, it } from 'vitest';
import { parseWindow } from '../../../src/state/compare-view/window-input';

describe('parseWindow', () => {
  it('accepts whole numbers in [1, 1000], from the number field or text', () => {
    expect(parseWindow(10)).toEqual({ ok: true, value: 10 });
    expect(parseWindow(' 1000 ')).toEqual({ ok: true, value: 1000 });
  });

  it.each([
    [0, 'got 0'],
    [1001, 'got 1001'],
    [2.5, 'got 2.5'],
    [NaN, 'got NaN'],
    [null, 'got nothing'],
    ['', 'got nothing'],
    ['ten', 'got "ten"'],
  ])('refuses %s, naming the range', (value, got) => {
    const r = parseWindow(value);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toBe(`window must be a whole number in [1, 1000], ${got}`);
  });
});
