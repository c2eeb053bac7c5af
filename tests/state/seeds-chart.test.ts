import { describe, expect, it } from 'vitest';
import { seedBand } from '../../src/compare/seed-groups';
import { sharedBandScale } from '../../src/state/seeds-chart';

describe('sharedBandScale', () => {
  it('keeps a rate on 0–1 for every band and clips its edges there', () => {
    // Band A: updates 1–2 of two seeds, [0.9, 1] and [0.1, 0.3]: means 0.95 and 0.2, stds √0.005
    // and √0.02. Band B: [0, 0.2] at update 1: mean 0.1, std √0.02 ≈ 0.141, so 0.1 − 0.141 < 0.
    const a = seedBand([
      [0.9, 0.1],
      [1, 0.3],
    ]);
    const b = seedBand([[0], [0.2]]);
    const s = sharedBandScale([a, b]);
    expect([s.y0, s.y1]).toEqual([0, 1]);
    expect(s.hi[0]![0]).toBe(1); // 0.95 + 0.0707 clipped
    expect(s.lo[0]![0]).toBeCloseTo(0.95 - Math.sqrt(0.005), 12);
    expect(s.lo[1]![0]).toBe(0); // 0.1 − 0.1414 clipped
    expect(s.hi[1]![0]).toBeCloseTo(0.1 + Math.sqrt(0.02), 12);
  });

  it('spans every band’s edges, unclipped, for a metric that is not a rate', () => {
    // Means 2 and −1, std √2 and 0: one domain from −1 to 2 + √2 for both.
    const a = seedBand([[1], [3]]);
    const b = seedBand([[-1], [-1]]);
    const s = sharedBandScale([a, b]);
    expect(s.y0).toBe(-1);
    expect(s.y1).toBeCloseTo(2 + Math.sqrt(2), 12);
    expect(s.lo[0]![0]).toBeCloseTo(2 - Math.sqrt(2), 12);
  });
});
