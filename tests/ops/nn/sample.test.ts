import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../../src/ops/errors';
import {
  type SampleOptions,
  checkSampleOptions,
  pickIndex,
  sampleTokens,
  sampleTokensAnyVocab,
  samplingDistribution,
} from '../../../src/ops/nn/sample';
import { counterHash, counterUniform, fmix32 } from '../../../src/util/counter-rng';
import { randomLogits, seededRandom } from '../../support/random';

/** `row` repeated `rows` times: (rows, V). */
function repeatRow(row: number[], rows: number): Float32Array {
  const out = new Float32Array(rows * row.length);
  for (let r = 0; r < rows; r++) out.set(row, r * row.length);
  return out;
}

/** Pearson correlation of two equally long samples. */
function correlation(a: number[], b: number[]): number {
  const n = a.length;
  const ma = a.reduce((s, v) => s + v, 0) / n;
  const mb = b.reduce((s, v) => s + v, 0) / n;
  let sab = 0;
  let saa = 0;
  let sbb = 0;
  for (let i = 0; i < n; i++) {
    sab += (a[i]! - ma) * (b[i]! - mb);
    saa += (a[i]! - ma) ** 2;
    sbb += (b[i]! - mb) ** 2;
  }
  return sab / Math.sqrt(saa * sbb);
}

/** Pearson's χ² of observed counts against expected probabilities (all > 0). */
function chiSquare(counts: number[], probs: number[], draws: number): number {
  let chi = 0;
  probs.forEach((p, i) => {
    const expected = p * draws;
    chi += (counts[i]! - expected) ** 2 / expected;
  });
  return chi;
}

describe('counterUniform (counter-based RNG shared with the WGSL kernel)', () => {
  it('is a pure function of (seed, step, row), in [0, 1), on the 2^-24 grid', () => {
    const next = seededRandom(1);
    for (let i = 0; i < 1000; i++) {
      const seed = Math.floor(next() * 2 ** 32);
      const step = Math.floor(next() * 2 ** 32);
      const row = Math.floor(next() * 2 ** 32);
      const u = counterUniform(seed, step, row);
      expect(counterUniform(seed, step, row)).toBe(u);
      expect(u).toBeGreaterThanOrEqual(0);
      expect(u).toBeLessThan(1);
      expect(Number.isInteger(u * 2 ** 24)).toBe(true);
      expect(Math.fround(u)).toBe(u); // exactly an f32, so the GPU holds the same value
    }
  });

  it('fmix32 is murmur3’s finalizer: fixes 0 and maps 1 to a dense word', () => {
    expect(fmix32(0)).toBe(0); // every step maps 0 to 0, hence the seed offset in counterHash
    // 1 → 1 ^ 0 = 1; ·0x85ebca6b = 0x85ebca6b; ^ (>>> 13) and ·0xc2b2ae35 spread it over all bits.
    expect(fmix32(1)).not.toBe(1);
    expect(fmix32(1).toString(2).length).toBeGreaterThan(24);
    expect(counterHash(0, 0, 0)).not.toBe(0);
  });

  it('gives different values for neighbouring counters', () => {
    const u = counterUniform(5, 6, 7);
    for (const [s, t, r] of [
      [4, 6, 7],
      [6, 6, 7],
      [5, 5, 7],
      [5, 7, 7],
      [5, 6, 6],
      [5, 6, 8],
    ] as const) {
      expect(counterUniform(s, t, r)).not.toBe(u);
    }
  });

  it('is uniform over 100k draws (χ² over 100 bins)', () => {
    const bins = new Array<number>(100).fill(0);
    const draws = 100_000;
    for (let i = 0; i < draws; i++) {
      const u = counterUniform(123, i % 10, Math.floor(i / 10));
      bins[Math.floor(u * 100)]! += 1;
    }
    // 99 degrees of freedom: mean 99, sd 14; 99.99 % quantile ≈ 163. A loose bound: < 170.
    const chi = chiSquare(bins, new Array<number>(100).fill(0.01), draws);
    expect(chi).toBeLessThan(170);
  });

  it('shows no correlation between adjacent rows, steps or seeds', () => {
    const n = 20_000;
    const rowA: number[] = [];
    const rowB: number[] = [];
    const stepB: number[] = [];
    const seedB: number[] = [];
    for (let i = 0; i < n; i++) {
      rowA.push(counterUniform(9, 4, i));
      rowB.push(counterUniform(9, 4, i + 1));
      stepB.push(counterUniform(9, 5, i));
      seedB.push(counterUniform(10, 4, i));
    }
    // For independent uniforms the sample correlation has sd 1/√n ≈ 0.007; bound at ~4.5 sd.
    expect(Math.abs(correlation(rowA, rowB))).toBeLessThan(0.03);
    expect(Math.abs(correlation(rowA, stepB))).toBeLessThan(0.03);
    expect(Math.abs(correlation(rowA, seedB))).toBeLessThan(0.03);
    // Pairs (u_r, u_{r+1}) fill a 10 × 10 grid evenly (χ², 99 df, same loose bound as above).
    const grid = new Array<number>(100).fill(0);
    for (let i = 0; i < n; i++) {
      grid[Math.floor(rowA[i]! * 10) * 10 + Math.floor(rowB[i]! * 10)]! += 1;
    }
    expect(chiSquare(grid, new Array<number>(100).fill(0.01), n)).toBeLessThan(170);
  });
});

describe('sampleTokens (CPU twin of kernels/nn/sample.wgsl)', () => {
  it('greedy (temperature 0) picks the argmax, ties to the lower index, logprob 0', () => {
    // Row 0: max 3 at indices 1 and 2 → 1. Row 1: max 5 at index 3. top-k / top-p are ignored.
    const logits = new Float32Array([1, 3, 3, 2, -1, 0, 4, 5]);
    for (const options of [
      { temperature: 0 },
      { temperature: 0, topK: 3, topP: 0.1 },
    ] as SampleOptions[]) {
      for (const seed of [0, 1, 77]) {
        const { tokens, logprobs } = sampleTokens(logits, 2, 4, options, seed, 0);
        expect(Array.from(tokens)).toEqual([1, 3]);
        expect(Array.from(logprobs)).toEqual([0, 0]);
      }
    }
  });

  it('top-k = 1 picks greedy’s token with logprob 0', () => {
    const rows = 50;
    const vocab = 37;
    const logits = randomLogits(rows * vocab, 3, 8);
    logits[5] = logits[9]!; // plant ties; the lower index must win either way
    const greedy = sampleTokens(logits, rows, vocab, { temperature: 0 }, 1, 2);
    for (const temperature of [0.3, 1, 2.5]) {
      const top1 = sampleTokens(logits, rows, vocab, { temperature, topK: 1 }, 1, 2);
      expect(Array.from(top1.tokens)).toEqual(Array.from(greedy.tokens));
      expect(Array.from(top1.logprobs)).toEqual(new Array<number>(rows).fill(0));
    }
  });

  it('hand-worked 3-token top-p cases', () => {
    // logits [0, ln 3, ln 6], T = 1: softmax = [1, 3, 6] / 10 = [0.1, 0.3, 0.6].
    // Order (most probable first): token 2 (0.6), token 1 (0.3), token 0 (0.1).
    const row = [0, Math.log(3), Math.log(6)];
    const logits = new Float32Array(row);
    const dist = (options: SampleOptions): [number[], number[]] => {
      const d = samplingDistribution(logits, 0, 3, checkSampleOptions(options));
      return [Array.from(d.tokens), Array.from(d.logProbs, Math.exp)];
    };
    // top-p 0.8: cumulative 0.6 < 0.8, then 0.9 ≥ 0.8 → keep {2, 1}; renormalised 0.6/0.9 = 2/3, 1/3.
    const [kept08, q08] = dist({ topP: 0.8 });
    expect(kept08).toEqual([2, 1]);
    expect(q08[0]).toBeCloseTo(2 / 3, 6);
    expect(q08[1]).toBeCloseTo(1 / 3, 6);
    // top-p 0.5: 0.6 ≥ 0.5 already → only token 2, probability 1.
    expect(dist({ topP: 0.5 })).toEqual([[2], [1]]);
    // top-p 0.95: 0.6, 0.9 < 0.95, 1.0 ≥ 0.95 → all three, unchanged [0.6, 0.3, 0.1].
    const [kept095, q095] = dist({ topP: 0.95 });
    expect(kept095).toEqual([2, 1, 0]);
    [0.6, 0.3, 0.1].forEach((p, j) => expect(q095[j]).toBeCloseTo(p, 6));
    // top-k 2 then top-p 0.7: kept {2, 1} renormalised to [2/3, 1/3]; 2/3 < 0.7 → still both.
    expect(dist({ topK: 2, topP: 0.7 })[0]).toEqual([2, 1]);
    // T = 2 on logits [0, 2 ln 2, 2 ln 4]: z = [0, ln 2, ln 4] → [1, 2, 4] / 7 = [.143, .286, .571].
    // top-p 0.5: 4/7 ≥ 0.5 → {2}. top-p 0.6: 4/7 < 0.6, 6/7 ≥ 0.6 → {2, 1} with [2/3, 1/3].
    const hot = new Float32Array([0, 2 * Math.log(2), 2 * Math.log(4)]);
    const hotDist = (topP: number) =>
      samplingDistribution(hot, 0, 3, checkSampleOptions({ temperature: 2, topP }));
    expect(Array.from(hotDist(0.5).tokens)).toEqual([2]);
    expect(Array.from(hotDist(0.6).tokens)).toEqual([2, 1]);
    expect(Math.exp(hotDist(0.6).logProbs[0]!)).toBeCloseTo(2 / 3, 6);

    // Sampling with top-p 0.8: token 2 iff u < 2/3 (first cumulative > u), else token 1;
    // logprob = ln(2/3) or ln(1/3). Every row draws its own u = counterUniform(seed, step, row).
    const rows = 300;
    const { tokens, logprobs } = sampleTokens(repeatRow(row, rows), rows, 3, { topP: 0.8 }, 42, 7);
    for (let r = 0; r < rows; r++) {
      const u = counterUniform(42, 7, r);
      expect(tokens[r]).toBe(u < 2 / 3 ? 2 : 1);
      expect(logprobs[r]).toBeCloseTo(Math.log(u < 2 / 3 ? 2 / 3 : 1 / 3), 6);
    }
  });

  it('pickIndex takes the first cumulative > u and guards against rounding', () => {
    const dist = {
      tokens: new Int32Array([4, 2, 0]),
      logProbs: new Float64Array([Math.log(0.5), Math.log(0.5), -Infinity]),
    };
    expect(pickIndex(dist, 0)).toBe(0);
    expect(pickIndex(dist, 0.4999)).toBe(0);
    expect(pickIndex(dist, 0.5)).toBe(1); // cumulative 0.5 does not exceed u = 0.5
    // Probabilities that sum to < u by rounding: the last one of positive probability, not the
    // zero-probability tail.
    const short = {
      ...dist,
      logProbs: new Float64Array([Math.log(0.3), Math.log(0.3), -Infinity]),
    };
    expect(pickIndex(short, 0.9)).toBe(1);
  });

  it.each<[string, SampleOptions]>([
    ['temperature only', { temperature: 0.8 }],
    ['top-k', { temperature: 1.3, topK: 4 }],
    ['top-p', { temperature: 1, topP: 0.7 }],
    ['top-k and top-p', { temperature: 0.8, topK: 6, topP: 0.9 }],
  ])('empirical frequencies match the truncated softmax (%s)', (_, options) => {
    const row = [0.5, -1, 2, 1.2, 0, 2.4, -0.3, 1.9];
    const vocab = row.length;
    // Expected distribution, written out independently: softmax of row / T, sorted, truncated.
    const T = options.temperature ?? 1;
    const w = row.map((l) => Math.exp(l / T));
    const order = [...w.keys()].sort((a, b) => w[b]! - w[a]!);
    const topK = options.topK ?? 0;
    let keep = topK > 0 ? order.slice(0, topK) : order;
    const sumK = keep.reduce((s, i) => s + w[i]!, 0);
    let acc = 0;
    const p = options.topP ?? 1;
    const cut = keep.findIndex((i) => (acc += w[i]! / sumK) >= p);
    if (p < 1) keep = keep.slice(0, cut + 1);
    const sumP = keep.reduce((s, i) => s + w[i]!, 0);
    const expected = keep.map((i) => w[i]! / sumP);

    const rows = 30_000;
    const { tokens, logprobs } = sampleTokens(repeatRow(row, rows), rows, vocab, options, 11, 3);
    const counts = new Array<number>(keep.length).fill(0);
    const bad: string[] = [];
    for (let r = 0; r < rows; r++) {
      const j = keep.indexOf(tokens[r]!);
      if (j < 0) bad.push(`row ${r}: token ${tokens[r]} outside the kept set`);
      else if (Math.abs(logprobs[r]! - Math.log(expected[j]!)) > 1e-5)
        bad.push(`row ${r}: logprob`);
      else counts[j]! += 1;
    }
    expect(bad.slice(0, 5)).toEqual([]);
    // ≤ 7 degrees of freedom: the 99.999 % quantile is < 35; bound loosely at 40.
    expect(chiSquare(counts, expected, rows)).toBeLessThan(40);
  });

  it('is deterministic in (seed, step), and changes with either', () => {
    const rows = 200;
    const vocab = 50;
    const logits = randomLogits(rows * vocab, 1, 4);
    const options = { temperature: 1, topK: 20, topP: 0.95 };
    const a = sampleTokens(logits, rows, vocab, options, 3, 9);
    const b = sampleTokens(logits, rows, vocab, options, 3, 9);
    expect(Array.from(b.tokens)).toEqual(Array.from(a.tokens));
    expect(Array.from(b.logprobs)).toEqual(Array.from(a.logprobs));
    for (const [seed, step] of [
      [4, 9],
      [3, 10],
    ]) {
      const c = sampleTokens(logits, rows, vocab, options, seed!, step!);
      const same = c.tokens.filter((t, r) => t === a.tokens[r]).length;
      expect(same).toBeLessThan(rows / 2); // ~20 near-uniform choices: ~1/10 agree by chance
    }
  });

  it('gives the same tokens for Float64Array logits as for the same Float32Array values', () => {
    const logits = randomLogits(40 * 30, 4, 12);
    const options = { temperature: 0.7, topP: 0.9 };
    const f32 = sampleTokens(logits, 40, 30, options, 5, 6);
    const f64 = sampleTokens(Float64Array.from(logits), 40, 30, options, 5, 6);
    expect(Array.from(f64.tokens)).toEqual(Array.from(f32.tokens));
  });

  it('never picks a -Infinity (masked) logit', () => {
    const rows = 500;
    const row = [-Infinity, 0.2, -Infinity, 0.1, -Infinity];
    const { tokens, logprobs } = sampleTokens(repeatRow(row, rows), rows, 5, {}, 1, 1);
    for (let r = 0; r < rows; r++) {
      expect([1, 3]).toContain(tokens[r]);
      expect(Number.isFinite(logprobs[r])).toBe(true);
    }
  });

  it('property: tokens stay inside the top-k / top-p set; logprobs are consistent', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        fc.boolean(),
        fc.oneof(fc.constant(0), fc.double({ min: 0.05, max: 3, noNaN: true })),
        fc.integer({ min: 0, max: 45 }),
        fc.oneof(fc.constant(1), fc.double({ min: 0.01, max: 1, noNaN: true })),
        fc.integer({ min: 0, max: 2 ** 32 - 1 }),
        (rows, vocab, dataSeed, ties, temperature, topK, topP, seed) => {
          const logits = randomLogits(rows * vocab, 4, dataSeed);
          if (ties) logits.forEach((v, i) => (logits[i] = Math.round(v))); // many equal logits
          const options = { temperature, topK, topP };
          const { tokens, logprobs } = sampleTokens(logits, rows, vocab, options, seed, 17);
          for (let r = 0; r < rows; r++) {
            const l = Array.from(logits.subarray(r * vocab, (r + 1) * vocab));
            const t = tokens[r]!;
            expect(t).toBeGreaterThanOrEqual(0);
            expect(t).toBeLessThan(vocab);
            // rank = tokens ordered before t (larger logit, or equal logit and lower index).
            const ahead = l.flatMap((v, i) => (v > l[t]! || (v === l[t]! && i < t) ? [i] : []));
            if (temperature === 0) {
              expect(ahead).toEqual([]);
              expect(logprobs[r]).toBe(0);
              continue;
            }
            if (topK > 0) expect(ahead.length).toBeLessThan(topK);
            // Softmax over the top-k set: the tokens ahead of t hold < topP of it (t is in the
            // nucleus), and renormalising can only raise t's probability.
            const kept = topK > 0 ? Math.min(topK, vocab) : vocab;
            const lmax = Math.max(...l);
            const w = l.map((v) => Math.exp((v - lmax) / temperature));
            const sorted = [...w.keys()].sort((a, b) => l[b]! - l[a]! || a - b).slice(0, kept);
            const z = sorted.reduce((s, i) => s + w[i]!, 0);
            const massAhead = ahead.reduce((s, i) => s + w[i]!, 0) / z;
            if (topP < 1) expect(massAhead).toBeLessThan(topP + 1e-9);
            expect(logprobs[r]).toBeLessThanOrEqual(1e-6);
            expect(logprobs[r]).toBeGreaterThanOrEqual(Math.log(w[t]! / z) - 1e-5);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  const logits6 = new Float32Array(6);
  it.each<[string, () => unknown, RegExp]>([
    [
      'temperature < 0',
      () => sampleTokens(logits6, 2, 3, { temperature: -0.1 }, 0, 0),
      /temperature must be in \[0, ∞\), got -0.1/,
    ],
    [
      'temperature NaN',
      () => sampleTokens(logits6, 2, 3, { temperature: NaN }, 0, 0),
      /temperature must be in \[0, ∞\), got NaN/,
    ],
    [
      'temperature ∞',
      () => sampleTokens(logits6, 2, 3, { temperature: Infinity }, 0, 0),
      /temperature must be in \[0, ∞\)/,
    ],
    [
      'topK < 0',
      () => sampleTokens(logits6, 2, 3, { topK: -1 }, 0, 0),
      /topK must be an integer in \[0, /,
    ],
    [
      'topK fractional',
      () => sampleTokens(logits6, 2, 3, { topK: 1.5 }, 0, 0),
      /topK must be an integer in \[0, .*got 1.5/,
    ],
    [
      'topP 0',
      () => sampleTokens(logits6, 2, 3, { topP: 0 }, 0, 0),
      /topP must be in \(0, 1\], got 0/,
    ],
    [
      'topP > 1',
      () => sampleTokens(logits6, 2, 3, { topP: 1.01 }, 0, 0),
      /topP must be in \(0, 1\], got 1.01/,
    ],
    [
      'topP NaN',
      () => sampleTokens(logits6, 2, 3, { topP: NaN }, 0, 0),
      /topP must be in \(0, 1\], got NaN/,
    ],
    ['rows 0', () => sampleTokens(logits6, 0, 3, {}, 0, 0), /rows must be an integer in \[1, /],
    [
      'vocab 0',
      () => sampleTokens(logits6, 6, 0, {}, 0, 0),
      /vocab must be an integer in \[1, 1024\], got 0/,
    ],
    [
      'vocab > 1024',
      () => sampleTokens(new Float32Array(1025), 1, 1025, {}, 0, 0),
      /vocab must be an integer in \[1, 1024\], got 1025/,
    ],
    [
      'logits length',
      () => sampleTokens(new Float32Array(5), 2, 3, {}, 0, 0),
      /logits must have rows × vocab = 2 × 3 = 6 elements, got 5/,
    ],
    [
      'seed < 0',
      () => sampleTokens(logits6, 2, 3, {}, -1, 0),
      /seed must be an integer in \[0, 4294967295\], got -1/,
    ],
    [
      'seed ≥ 2^32',
      () => sampleTokens(logits6, 2, 3, {}, 2 ** 32, 0),
      /seed must be an integer in \[0, 4294967295\]/,
    ],
    [
      'step fractional',
      () => sampleTokens(logits6, 2, 3, {}, 0, 0.5),
      /step must be an integer in \[0, 4294967295\], got 0.5/,
    ],
  ])('rejects %s', (_, call, message) => {
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(message);
  });
});

describe('sampleTokensAnyVocab (CPU twin of kernels/nn/sample_large.wgsl)', () => {
  it('gives sampleTokens’ tokens and log-probs where both apply (V ≤ 1024)', () => {
    const rows = 6;
    const vocab = 300;
    const logits = randomLogits(rows * vocab, 3, 12);
    for (const options of [{ temperature: 0 }, { temperature: 0.7, topK: 20, topP: 0.9 }, {}]) {
      const a = sampleTokens(logits, rows, vocab, options, 4, 5);
      const b = sampleTokensAnyVocab(logits, rows, vocab, options, 4, 5);
      expect(Array.from(b.tokens)).toEqual(Array.from(a.tokens));
      expect(Array.from(b.logprobs)).toEqual(Array.from(a.logprobs));
    }
  });

  it('at V = 49,152: greedy and top-k 1 give the first argmax; equal logits give floor(n · u)', () => {
    const vocab = 49_152;
    const logits = randomLogits(2 * vocab, 3, 3);
    logits[40_000] = 9;
    logits[30_000] = 9; // tie: the lower index wins
    logits.fill(1.5, vocab); // row 1: all equal
    const greedy = sampleTokensAnyVocab(logits, 2, vocab, { temperature: 0 }, 1, 1);
    expect(Array.from(greedy.tokens)).toEqual([30_000, 0]);
    const top1 = sampleTokensAnyVocab(logits, 2, vocab, { topK: 1 }, 1, 1);
    expect(top1.tokens[0]).toBe(30_000);
    expect(top1.logprobs[0]).toBe(0);
    // Row 1 with top-k 9: nine equal tokens 0–8 in index order, q = 1/9 each.
    const top9 = sampleTokensAnyVocab(logits, 2, vocab, { topK: 9 }, 6, 2);
    expect(top9.tokens[1]).toBe(Math.floor(((counterHash(6, 2, 1) >>> 8) * 9) / 2 ** 24));
    expect(top9.logprobs[1]).toBeCloseTo(-Math.log(9), 6);
  });

  it('rejects a vocabulary past 2^20 and names itself; takes one past 1024', () => {
    expect(() => sampleTokensAnyVocab(new Float32Array(4), 1, 2 ** 20 + 1, {}, 0, 0)).toThrow(
      /sampleTokensAnyVocab: vocab must be an integer in \[1, 1048576\], got 1048577/,
    );
    expect(() => sampleTokensAnyVocab(new Float32Array(6), 2, 3, { topP: 2 }, 0, 0)).toThrow(
      /sampleTokensAnyVocab: topP must be in \(0, 1\], got 2/,
    );
    const out = sampleTokensAnyVocab(new Float32Array(1025), 1, 1025, { temperature: 0 }, 0, 0);
    expect(out.tokens[0]).toBe(0);
  });
});
