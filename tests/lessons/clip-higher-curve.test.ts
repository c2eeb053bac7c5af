/**
 * The clip-higher lesson's run: a four-token policy trained by the real ops on updates in which a
 * rare right answer was sampled once in a group of 8. What must hold: the clip matters only from
 * the second optimizer step on a batch, the plot's "clipped" flag is the op's verdict at the bound,
 * and a higher upper clip lets the rare answer grow faster.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  clipHigherRun,
  initialLogits,
  probabilityOf,
  RARE_TOKEN,
  COMMON_TOKEN,
  type ClipHigherOptions,
} from '../../src/lessons/clip-higher-curve';

const BASE: ClipHigherOptions = {
  initialProbability: 0.01,
  clipHigh: 0.28,
  iterations: 4,
  lr: 0.05,
  updates: 30,
};

describe('the four-token policy', () => {
  it('starts with π(rare) as asked and the rest split 0.8 / 0.1 / 0.1', () => {
    const logits = initialLogits(0.05);
    expect(probabilityOf(logits, RARE_TOKEN)).toBeCloseTo(0.05, 6);
    expect(probabilityOf(logits, COMMON_TOKEN)).toBeCloseTo(0.8 * 0.95, 6);
    expect(probabilityOf(logits, 2)).toBeCloseTo(0.1 * 0.95, 6);
    expect(clipHigherRun(BASE).perUpdate[0]).toBeCloseTo(0.01, 6);
  });

  it("takes AdamW's first step: the rare logit up by lr, the common one down by lr", () => {
    // At the first step every ratio is 1, so with token-mean over G = 8 rows the loss gradient on
    // each answer's log-prob is −A_i/8: the rare answer's A > 0 and the common one's A < 0. Both
    // gradients are far above AdamW's eps, and its first step moves a parameter by lr·g/(|g| + eps),
    // i.e. by lr against the sign of g. The odds π(rare)/π(common) therefore grow by e^(2·lr),
    // whatever the two unsampled logits do.
    const lr = 0.05;
    const { steps } = clipHigherRun({ ...BASE, lr, iterations: 1, updates: 1 });
    const odds0 = 0.01 / (0.8 * 0.99);
    expect(steps[0]!.probability / steps[0]!.common).toBeCloseTo(odds0 * Math.exp(2 * lr), 7);
  });
});

describe('the upper clip', () => {
  it('changes nothing with one optimizer step per batch (μ = 1): the ratio is always 1', () => {
    const runs = [0.05, 0.2, 0.28, 10].map((clipHigh) =>
      clipHigherRun({ ...BASE, clipHigh, iterations: 1 }),
    );
    for (const run of runs) {
      expect(run.perUpdate).toEqual(runs[0]!.perUpdate);
      expect(run.steps.some((s) => s.clipped)).toBe(false);
    }
  });

  it('is flagged exactly where the ratio the loss saw had reached 1 + ε_high', () => {
    for (const clipHigh of [0.1, 0.2, 0.28]) {
      const { steps } = clipHigherRun({ ...BASE, clipHigh, iterations: 6 });
      let flagged = 0;
      steps.forEach((step, i) => {
        // The loss of step i is evaluated at the ratio left by step i − 1 of the same update.
        const seen = step.iteration === 1 ? 1 : steps[i - 1]!.ratio;
        if (Math.abs(seen - (1 + clipHigh)) < 1e-4) return; // float32 at the bound: either way
        expect(step.clipped, `update ${step.update} step ${step.iteration}`).toBe(
          seen > 1 + clipHigh,
        );
        if (step.clipped) flagged += 1;
      });
      expect(flagged).toBeGreaterThan(0);
    }
  });

  it('lets the rare answer grow faster the higher it is (μ = 4)', () => {
    const reach = (clipHigh: number) => clipHigherRun({ ...BASE, clipHigh }).updatesToHalf;
    const [symmetric, dapo, none] = [reach(0.2), reach(0.28), reach(10)];
    expect(symmetric).not.toBeNull();
    expect(dapo!).toBeLessThan(symmetric!);
    expect(none!).toBeLessThan(dapo!);
    // No upper clip: no step is clipped.
    expect(clipHigherRun({ ...BASE, clipHigh: 10 }).steps.some((s) => s.clipped)).toBe(false);
  });

  it('holds each update near ×(1 + ε_high), past it only by what AdamW carries over', () => {
    // The clip stops the rare answer's gradient, not the optimizer: momentum and the common
    // answer's falling probability carry π(rare) on, so an update ends above the bound, but well
    // below where the same steps go without the clip.
    const clipped = clipHigherRun({ ...BASE, clipHigh: 0.2 });
    const free = clipHigherRun({ ...BASE, clipHigh: 10 });
    const growth = (run: typeof clipped, u: number) => run.perUpdate[u + 1]! / run.perUpdate[u]!;
    for (let u = 1; u < 6; u++) {
      expect(growth(clipped, u)).toBeGreaterThan(1.2);
      expect(growth(clipped, u)).toBeLessThan(growth(free, u));
    }
  });
});

describe('its input', () => {
  it.each([
    [{ initialProbability: 0 }, /initialProbability must be a number in \[0\.001, 0\.5\], got 0/],
    [{ iterations: 2.5 }, /iterations must be an integer in \[1, 16\], got 2\.5/],
    [{ updates: 201 }, /updates must be an integer in \[1, 200\], got 201/],
    [{ groupSize: 1 }, /groupSize must be an integer in \[2, 64\], got 1/],
    [{ lr: 0 }, /lr must be a number in \(0, 1\], got 0/],
    [{ lr: Number.NaN }, /lr must be a number in \(0, 1\], got NaN/],
    [{ clipHigh: -0.1 }, /clipHigh/],
  ] as const)('refuses %o by name', (change, message) => {
    expect(() => clipHigherRun({ ...BASE, ...change })).toThrow(message);
  });

  it('gives finite probabilities in (0, 1) for any allowed setting', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0.001, max: 0.5, noNaN: true }),
        fc.double({ min: 0.05, max: 1, noNaN: true }),
        fc.integer({ min: 1, max: 8 }),
        fc.double({ min: 0.01, max: 0.2, noNaN: true }),
        (initialProbability, clipHigh, iterations, lr) => {
          const run = clipHigherRun({ initialProbability, clipHigh, iterations, lr, updates: 10 });
          expect(run.perUpdate).toHaveLength(11);
          expect(run.steps).toHaveLength(10 * iterations);
          for (const s of run.steps) {
            expect(s.probability).toBeGreaterThan(0);
            expect(s.probability + s.common).toBeLessThanOrEqual(1 + 1e-9);
          }
        },
      ),
      { numRuns: 40 },
    );
  });
});
