import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../src/ops';
import { entropyFromLogits } from '../../src/ops/entropy';
import { rowStats, tokenLogprobs, tokenLogprobsBackward } from '../../src/ops/token-logprobs';
import { randomLogits, seededRandom } from '../support/random';

const { log, exp, E } = Math;
const LN2 = log(2);
const LN3 = log(3);

/** Random token ids in [0, cols). */
function randomTargets(rows: number, cols: number, seed: number): Int32Array {
  const next = seededRandom(seed);
  return Int32Array.from({ length: rows }, () => Math.floor(next() * cols));
}

describe('tokenLogprobs (CPU reference)', () => {
  it('matches hand-worked values on [0, ln 2, ln 3]', () => {
    // exp(z) = [1, 2, 3], Σ = 6, p = [1/6, 1/3, 1/2], lse = ln 6.
    // logp(t = 2) = ln 3 − ln 6 = −ln 2;  logp(t = 0) = −ln 6.
    // entropy = lse − Σ p z = ln 6 − (ln 2 / 3 + ln 3 / 2) = (2/3) ln 2 + (1/2) ln 3
    //         (= −Σ p ln p = ln 6 / 6 + ln 3 / 3 + ln 2 / 2, the same number) ≈ 1.0114.
    const row = [0, LN2, LN3];
    const { logp, entropy } = tokenLogprobs(
      new Float32Array([...row, ...row]),
      new Int32Array([2, 0]),
      2,
      3,
    );
    expect(logp[0]).toBeCloseTo(-LN2, 6);
    expect(logp[1]).toBeCloseTo(-log(6), 6);
    expect(entropy![0]).toBeCloseTo((2 / 3) * LN2 + LN3 / 2, 6);
    expect(entropy![1]).toBeCloseTo((2 / 3) * LN2 + LN3 / 2, 6);
  });

  it('gives logp = −ln V and entropy = ln V for a uniform row, 0 and 0 for V = 1', () => {
    const { logp, entropy } = tokenLogprobs(
      new Float32Array(2 * 5).fill(-3.25),
      new Int32Array([0, 4]),
      2,
      5,
    );
    for (const v of logp) expect(v).toBeCloseTo(-log(5), 6);
    for (const v of entropy!) expect(v).toBeCloseTo(log(5), 6);
    const single = tokenLogprobs(new Float32Array([123]), new Int32Array([0]), 1, 1);
    expect(single.logp[0]).toBe(0);
    expect(single.entropy![0]).toBe(0);
  });

  it('divides the logits by the temperature', () => {
    // T = 2 on [0, 2 ln 2, 2 ln 3] gives z = [0, ln 2, ln 3]: the values of the first test.
    const halved = tokenLogprobs(
      new Float32Array([0, 2 * LN2, 2 * LN3]),
      new Int32Array([2]),
      1,
      3,
      { temperature: 2 },
    );
    expect(halved.logp[0]).toBeCloseTo(-LN2, 6);
    expect(halved.entropy![0]).toBeCloseTo((2 / 3) * LN2 + LN3 / 2, 6);
    // T = 2 on [0, ln 4]: z = [0, ln 2], p = [1/3, 2/3]; logp(0) = −ln 3;
    // entropy = ln 3 − (2/3) ln 2.
    const pair = tokenLogprobs(new Float32Array([0, log(4)]), new Int32Array([0]), 1, 2, {
      temperature: 2,
    });
    expect(pair.logp[0]).toBeCloseTo(-LN3, 6);
    expect(pair.entropy![0]).toBeCloseTo(LN3 - (2 / 3) * LN2, 6);
  });

  it('stays finite and exact for logits of magnitude 1e4', () => {
    // Row [1e4, 1e4 − 1, −1e4]: z − m = [0, −1, −2e4], s = 1 + e^−1 (the last term underflows).
    // logp(0) = −ln(1 + e^−1); logp(2) = −2e4 − ln(1 + e^−1).
    // entropy = log s − Σ p (z − m) = ln(1 + e^−1) + p₁ with p₁ = e^−1 / (1 + e^−1) = 1 / (1 + e).
    const row = [1e4, 1e4 - 1, -1e4];
    const { logp, entropy } = tokenLogprobs(
      new Float32Array([...row, ...row]),
      new Int32Array([0, 2]),
      2,
      3,
    );
    const log1pe = log(1 + exp(-1));
    expect(logp[0]).toBeCloseTo(-log1pe, 6);
    expect(logp[1]).toBeCloseTo(-2e4 - log1pe, 2);
    expect(entropy![0]).toBeCloseTo(log1pe + 1 / (1 + E), 6);
    const wide = randomLogits(8 * 300, 1e4, 4);
    const out = tokenLogprobs(wide, randomTargets(8, 300, 4), 8, 300, { temperature: 0.7 });
    for (const v of [...out.logp, ...out.entropy!]) expect(Number.isFinite(v)).toBe(true);
  });

  it('omits the entropy when withEntropy is false', () => {
    const out = tokenLogprobs(new Float32Array([1, 2]), new Int32Array([1]), 1, 2, {
      withEntropy: false,
    });
    expect(out.entropy).toBeUndefined();
    expect(out.logp[0]).toBeCloseTo(-log(1 + exp(-1)), 6);
  });

  it('property: logp ≤ 0, 0 ≤ entropy ≤ ln V, entropy equals entropyFromLogits', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.double({ min: 0.01, max: 100, noNaN: true }),
        fc.double({ min: 0.1, max: 10, noNaN: true }),
        (rows, cols, seed, scale, temperature) => {
          const logits = randomLogits(rows * cols, scale, seed);
          const targets = randomTargets(rows, cols, seed + 1);
          const { logp, entropy } = tokenLogprobs(logits, targets, rows, cols, { temperature });
          const alone = entropyFromLogits(logits, rows, cols, { temperature });
          for (let n = 0; n < rows; n++) {
            expect(exp(logp[n]!)).toBeLessThanOrEqual(1);
            expect(entropy![n]!).toBeGreaterThanOrEqual(0);
            expect(entropy![n]!).toBeLessThanOrEqual(log(cols) + 1e-6);
            expect(alone[n]).toBe(entropy![n]);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('property: adding a constant to a row changes neither logp nor entropy', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.double({ min: -100, max: 100, noNaN: true }),
        fc.double({ min: 0.5, max: 4, noNaN: true }),
        (rows, cols, seed, shift, temperature) => {
          const scale = 10;
          const logits = randomLogits(rows * cols, scale, seed);
          const targets = randomTargets(rows, cols, seed + 1);
          const a = tokenLogprobs(logits, targets, rows, cols, { temperature });
          const shifted = logits.map((v) => v + shift);
          const b = tokenLogprobs(shifted, targets, rows, cols, { temperature });
          // Storing x + shift in f32 moves each z by ≤ δ = ulp/2 / T; logp moves by ≤ 2δ, the
          // entropy by ≤ δ·(2 + z range) (its gradient −p (z − Σ p z) sums to ≤ that range).
          const delta = ((scale + Math.abs(shift)) * 2 ** -24) / temperature;
          const zRange = (2 * scale) / temperature;
          for (let n = 0; n < rows; n++) {
            expect(Math.abs(a.logp[n]! - b.logp[n]!)).toBeLessThanOrEqual(1e-6 + 3 * delta);
            expect(Math.abs(a.entropy![n]! - b.entropy![n]!)).toBeLessThanOrEqual(
              1e-6 + 2 * delta * (2 + zRange),
            );
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('tokenLogprobsBackward (CPU reference)', () => {
  const row = [0, LN2, LN3];
  // p = [1/6, 1/3, 1/2];  μ = Σ p z = ln 2 / 3 + ln 3 / 2.
  const mu = LN2 / 3 + LN3 / 2;

  it('matches hand-worked gradients of logp and of the entropy', () => {
    const logits = new Float32Array(row);
    const targets = new Int32Array([2]);
    // ∂logp/∂z = 1[v = t] − p = [−1/6, −1/3, 1/2].
    const dLogp = tokenLogprobsBackward(logits, targets, new Float32Array([1]), undefined, 1, 3);
    [-1 / 6, -1 / 3, 1 / 2].forEach((g, v) => expect(dLogp[v]).toBeCloseTo(g, 6));
    // ∂H/∂z_v = −p_v (z_v − μ) = [μ/6, −(ln 2 − μ)/3, −(ln 3 − μ)/2].
    const dH = tokenLogprobsBackward(
      logits,
      targets,
      new Float32Array([0]),
      new Float32Array([1]),
      1,
      3,
    );
    [mu / 6, -(LN2 - mu) / 3, -(LN3 - mu) / 2].forEach((g, v) => expect(dH[v]).toBeCloseTo(g, 6));
    // Both at once, scaled: 2·∂logp − 3·∂H.
    const both = tokenLogprobsBackward(
      logits,
      targets,
      new Float32Array([2]),
      new Float32Array([-3]),
      1,
      3,
    );
    for (let v = 0; v < 3; v++) expect(both[v]).toBeCloseTo(2 * dLogp[v]! - 3 * dH[v]!, 6);
  });

  it('divides by the temperature: T = 2 on 2·z halves the gradient', () => {
    // z = [0, 2 ln 2, 2 ln 3] / 2 is the row above, and ∂z/∂x = 1/2.
    const out = tokenLogprobsBackward(
      new Float32Array(row.map((v) => 2 * v)),
      new Int32Array([2]),
      new Float32Array([1]),
      new Float32Array([1]),
      1,
      3,
      { temperature: 2 },
    );
    const expected = [-1 / 6 + mu / 6, -1 / 3 - (LN2 - mu) / 3, 1 / 2 - (LN3 - mu) / 2];
    expected.forEach((g, v) => expect(out[v]).toBeCloseTo(g / 2, 6));
  });

  it('stays finite for logits of magnitude 1e4', () => {
    // Row [1e4, 1e4 − 1, −1e4], t = 0: p = [1 − q, q, 0] with q = 1/(1 + e); ∂logp = [q, −q, 0].
    // ∂H: μ' = Σ p (z − m) = −q, so −p_v (d_v − μ') = [−(1 − q)·q, −q·(−1 + q), 0] = [−q(1−q), q(1−q), 0].
    const q = 1 / (1 + E);
    const out = tokenLogprobsBackward(
      new Float32Array([1e4, 1e4 - 1, -1e4]),
      new Int32Array([0]),
      new Float32Array([1]),
      new Float32Array([1]),
      1,
      3,
    );
    [q - q * (1 - q), -q + q * (1 - q), 0].forEach((g, v) => expect(out[v]).toBeCloseTo(g, 6));
  });

  it('agrees with central finite differences of the float64 forward', () => {
    // L(x) = Σ_n g_n·logp_n(x) + h_n·H_n(x), evaluated in float64 through the shared row statistics.
    const rows = 4;
    const cols = 7;
    const temperature = 1.7;
    const logits = randomLogits(rows * cols, 3, 77);
    const targets = randomTargets(rows, cols, 78);
    const g = randomLogits(rows, 2, 79);
    const h = randomLogits(rows, 2, 80);
    const loss = (x: Float64Array): number => {
      let total = 0;
      for (let n = 0; n < rows; n++) {
        const { max, logSum, meanShifted } = rowStats(x, n, cols, temperature);
        const logp = x[n * cols + targets[n]!]! / temperature - max - logSum;
        total += g[n]! * logp + h[n]! * (logSum - meanShifted);
      }
      return total;
    };
    const analytic = tokenLogprobsBackward(logits, targets, g, h, rows, cols, { temperature });
    const x = Float64Array.from(logits);
    const eps = 1e-5;
    for (let i = 0; i < x.length; i++) {
      const saved = x[i]!;
      x[i] = saved + eps;
      const up = loss(x);
      x[i] = saved - eps;
      const down = loss(x);
      x[i] = saved;
      const numeric = (up - down) / (2 * eps);
      expect(Math.abs(analytic[i]! - numeric), `index ${i}`).toBeLessThan(
        1e-7 + 1e-6 * Math.abs(numeric),
      );
    }
  });

  it('property: every row of the gradient sums to zero', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 50 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.double({ min: 0.1, max: 5, noNaN: true }),
        fc.boolean(),
        (rows, cols, seed, temperature, withEntropy) => {
          const logits = randomLogits(rows * cols, 20, seed);
          const targets = randomTargets(rows, cols, seed + 1);
          const dLogp = randomLogits(rows, 3, seed + 2);
          const dEntropy = withEntropy ? randomLogits(rows, 3, seed + 3) : undefined;
          const out = tokenLogprobsBackward(logits, targets, dLogp, dEntropy, rows, cols, {
            temperature,
          });
          for (let n = 0; n < rows; n++) {
            let sum = 0;
            let magnitude = 0;
            for (let v = 0; v < cols; v++) {
              sum += out[n * cols + v]!;
              magnitude += Math.abs(out[n * cols + v]!);
            }
            // Each entry is rounded to f32 (relative 2^-24): the sum is 0 up to that.
            expect(Math.abs(sum)).toBeLessThanOrEqual(1e-12 + magnitude * 2 ** -23);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('entropyFromLogits (CPU reference)', () => {
  it('matches hand-worked values and the temperature', () => {
    // [0, ln 2, ln 3]: (2/3) ln 2 + (1/2) ln 3 (see above); a uniform row of 4: ln 4.
    const out = entropyFromLogits(new Float32Array([0, LN2, LN3, 1, 1, 1]), 2, 3);
    expect(out[0]).toBeCloseTo((2 / 3) * LN2 + LN3 / 2, 6);
    expect(out[1]).toBeCloseTo(LN3, 6);
    const tempered = entropyFromLogits(new Float32Array([0, log(4)]), 1, 2, { temperature: 2 });
    expect(tempered[0]).toBeCloseTo(LN3 - (2 / 3) * LN2, 6);
  });
});

describe('bad input', () => {
  const ok = new Float32Array([0, 1, 2, 3, 4, 5]); // 2 × 3
  const t = new Int32Array([0, 2]);
  const d = new Float32Array([1, 1]);
  it.each([
    ['rows', () => tokenLogprobs(ok, t, 0, 3), /tokenLogprobs: rows must be an integer in \[1, /],
    ['cols', () => tokenLogprobs(ok, t, 2, 1.5), /cols must be an integer in \[1, /],
    [
      'logits length',
      () => tokenLogprobs(ok, t, 2, 2),
      /logits must have rows × cols = 2 × 2 = 4 elements, got 6/,
    ],
    [
      'targets length',
      () => tokenLogprobs(ok, new Int32Array([0, 1, 2]), 2, 3),
      /targets must have one entry per row \(2\), got 3/,
    ],
    [
      'NaN logit',
      () => tokenLogprobs(new Float32Array([0, 1, 2, NaN, 4, 5]), t, 2, 3),
      /logits must be finite, but index 3 \(row 1, col 0\) is NaN/,
    ],
    [
      'infinite logit',
      () => tokenLogprobs(new Float32Array([0, Infinity, 2, 3, 4, 5]), t, 2, 3),
      /logits must be finite, but index 1 \(row 0, col 1\) is Infinity/,
    ],
    [
      'target ≥ V',
      () => tokenLogprobs(ok, new Int32Array([0, 3]), 2, 3),
      /targets must be token ids in \[0, 3\) \(cols = vocabulary size\), but row 1 has 3/,
    ],
    [
      'negative target',
      () => tokenLogprobs(ok, new Int32Array([-1, 0]), 2, 3),
      /targets must be token ids in \[0, 3\).*row 0 has -1/,
    ],
    [
      'temperature 0',
      () => tokenLogprobs(ok, t, 2, 3, { temperature: 0 }),
      /temperature must be in \(0, ∞\), got 0/,
    ],
    [
      'temperature < 0',
      () => tokenLogprobs(ok, t, 2, 3, { temperature: -1 }),
      /temperature must be in \(0, ∞\), got -1/,
    ],
    [
      'temperature NaN',
      () => tokenLogprobs(ok, t, 2, 3, { temperature: NaN }),
      /temperature must be in \(0, ∞\), got NaN/,
    ],
    [
      'temperature ∞',
      () => tokenLogprobs(ok, t, 2, 3, { temperature: Infinity }),
      /temperature must be in \(0, ∞\), got Infinity/,
    ],
    [
      'backward dLogp length',
      () => tokenLogprobsBackward(ok, t, new Float32Array(3), undefined, 2, 3),
      /tokenLogprobsBackward: dLogp must have one entry per row \(2\), got 3/,
    ],
    [
      'backward NaN dLogp',
      () => tokenLogprobsBackward(ok, t, new Float32Array([0, NaN]), undefined, 2, 3),
      /dLogp must be finite, but index 1 is NaN/,
    ],
    [
      'backward dEntropy length',
      () => tokenLogprobsBackward(ok, t, d, new Float32Array(1), 2, 3),
      /dEntropy must have one entry per row \(2\), got 1/,
    ],
    [
      'backward infinite dEntropy',
      () => tokenLogprobsBackward(ok, t, d, new Float32Array([-Infinity, 0]), 2, 3),
      /dEntropy must be finite, but index 0 is -Infinity/,
    ],
    [
      'backward target',
      () => tokenLogprobsBackward(ok, new Int32Array([5, 0]), d, undefined, 2, 3),
      /tokenLogprobsBackward: targets must be token ids in \[0, 3\).*row 0 has 5/,
    ],
    [
      'backward temperature',
      () => tokenLogprobsBackward(ok, t, d, undefined, 2, 3, { temperature: 0 }),
      /temperature must be in \(0, ∞\)/,
    ],
    [
      'entropy NaN logit',
      () => entropyFromLogits(new Float32Array([0, 1, 2, 3, 4, NaN]), 2, 3),
      /entropyFromLogits: logits must be finite, but index 5 \(row 1, col 2\) is NaN/,
    ],
    [
      'entropy temperature',
      () => entropyFromLogits(ok, 2, 3, { temperature: -0.5 }),
      /entropyFromLogits: temperature must be in \(0, ∞\), got -0.5/,
    ],
  ])('rejects bad %s with an OpInputError naming it', (_name, call, pattern) => {
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(pattern);
  });
});
