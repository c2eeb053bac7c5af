import { describe, expect, it } from 'vitest';
import { COLORBLIND_SAFE_PALETTE, dashStyle } from '../../../src/state/compare-view/line-styles';

describe('palette and dash styles', () => {
  // WCAG 2 relative luminance and contrast, written out here so the test does not trust the
  // module: L = 0.2126 R + 0.7152 G + 0.0722 B of linearised channels; contrast (1.05)/(L + 0.05).
  const contrastOnWhite = (hex: string) => {
    const channel = (i: number) => {
      const c = parseInt(hex.slice(i, i + 2), 16) / 255;
      return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
    };
    const l = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
    return 1.05 / (l + 0.05);
  };

  it('every colour has at least 3:1 contrast on white, and no two are equal', () => {
    for (const c of COLORBLIND_SAFE_PALETTE) expect(contrastOnWhite(c)).toBeGreaterThanOrEqual(3);
    expect(new Set(COLORBLIND_SAFE_PALETTE.map((c) => c.toLowerCase())).size).toBe(6);
  });

  it('cycles solid, dashed, dotted, dash-dot by creation order', () => {
    expect([0, 1, 2, 3, 4, 5, 12].map((i) => dashStyle(i).name)).toEqual([
      'solid',
      'dashed',
      'dotted',
      'dash-dot',
      'solid',
      'dashed',
      'solid',
    ]);
    // A bad index (a run id without a number gives −1) falls back to solid.
    expect(dashStyle(-1).dash).toBe('');
    expect(dashStyle(1.5).dash).toBe('');
  });

  it('gives the first 12 runs 12 different colour and dash pairs', () => {
    const pairs = Array.from(
      { length: 12 },
      (_, i) =>
        `${COLORBLIND_SAFE_PALETTE[i % COLORBLIND_SAFE_PALETTE.length]} ${dashStyle(i).dash}`,
    );
    expect(new Set(pairs).size).toBe(12);
  });
});
