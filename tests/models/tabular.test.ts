import { describe, expect, it } from 'vitest';
import { decodeCheckpoint, encodeCheckpoint } from '../../src/models/checkpoint';
import { TabularSoftmaxPolicy } from '../../src/models/tabular';
import { OpInputError } from '../../src/ops/errors';
import { seededRandom } from '../../src/util/random';
import { gradCheck, randomF64 } from '../support/gradcheck';

const LN2 = Math.log(2);
const LN3 = Math.log(3);

/** One state with θ = [0, ln 2, ln 3]: exp θ = [1, 2, 3], Σ = 6, π = [1/6, 2/6, 3/6]. */
const worked = (): TabularSoftmaxPolicy =>
  new TabularSoftmaxPolicy(1, 3, { logits: new Float64Array([0, LN2, LN3]) });

describe('TabularSoftmaxPolicy', () => {
  it('starts uniform: π = 1/A and H = ln A in every state', () => {
    const policy = new TabularSoftmaxPolicy(4, 5);
    expect(policy.logits).toEqual(new Float64Array(20));
    for (let s = 0; s < 4; s++) {
      for (const p of policy.probs(s)) expect(p).toBeCloseTo(0.2, 15);
      expect(policy.entropy(s)).toBeCloseTo(Math.log(5), 14);
      expect(policy.logProb(s, 3)).toBeCloseTo(-Math.log(5), 14);
    }
  });

  it('matches hand-worked values for θ = [0, ln 2, ln 3]', () => {
    const policy = worked();
    const p = policy.probs(0);
    expect(p[0]).toBeCloseTo(1 / 6, 15);
    expect(p[1]).toBeCloseTo(2 / 6, 15);
    expect(p[2]).toBeCloseTo(3 / 6, 15);
    // log π(2) = ln 3 − ln 6 = −ln 2.
    expect(policy.logProb(0, 2)).toBeCloseTo(-LN2, 15);
    // ∇ log π(1) = onehot(1) − π = [−1/6, 1 − 2/6, −3/6].
    const g = policy.gradLogProb(0, 1);
    expect(g[0]).toBeCloseTo(-1 / 6, 15);
    expect(g[1]).toBeCloseTo(2 / 3, 15);
    expect(g[2]).toBeCloseTo(-1 / 2, 15);
    // H = (1/6) ln 6 + (2/6) ln 3 + (3/6) ln 2 = 0.298627… + 0.366204… + 0.346574… = 1.011404…
    expect(policy.entropy(0)).toBeCloseTo(Math.log(6) / 6 + LN3 / 3 + LN2 / 2, 14);
    expect(policy.entropy(0)).toBeCloseTo(1.011404, 6);
  });

  it('keeps states independent', () => {
    // State 1 holds [0, ln 2, ln 3]; state 0 stays zero (uniform).
    const policy = new TabularSoftmaxPolicy(2, 3, {
      logits: new Float64Array([0, 0, 0, 0, LN2, LN3]),
    });
    expect(policy.probs(0)[2]).toBeCloseTo(1 / 3, 15);
    expect(policy.probs(1)[2]).toBeCloseTo(1 / 2, 15);
  });

  it('is stable for large logits (shifted by the row max)', () => {
    // [1000, 1000 + ln 3]: the shift leaves [0, ln 3], so π = [1/4, 3/4].
    const big = new TabularSoftmaxPolicy(1, 2, { logits: new Float64Array([1000, 1000 + LN3]) });
    expect(big.probs(0)[0]).toBeCloseTo(0.25, 12);
    expect(big.logProb(0, 1)).toBeCloseTo(Math.log(0.75), 12);
    // [0, 800]: π(0) = e^−800 underflows to 0, but log π(0) = −800 stays exact.
    const skew = new TabularSoftmaxPolicy(1, 2, { logits: new Float64Array([0, 800]) });
    expect(Array.from(skew.probs(0))).toEqual([0, 1]);
    expect(skew.logProb(0, 0)).toBe(-800);
    expect(skew.entropy(0)).toBe(0);
    const random = seededRandom(3);
    for (let i = 0; i < 100; i++) expect(skew.sample(0, random)).toBe(1);
  });

  it('samples by inverse CDF: cumulative π = [1/6, 1/2, 1]', () => {
    const policy = worked();
    const at = (u: number): number => policy.sample(0, () => u);
    expect([at(0), at(0.16), at(0.17), at(0.49), at(0.51), at(0.999999)]).toEqual([
      0, 0, 1, 1, 2, 2,
    ]);
  });

  it('samples with the right frequencies over 20k seeded draws', () => {
    const policy = worked();
    const random = seededRandom(2024);
    const counts = [0, 0, 0];
    const n = 20_000;
    for (let i = 0; i < n; i++) counts[policy.sample(0, random)]!++;
    // Standard error ≤ √(0.25 / 20000) ≈ 0.0035; 0.015 is over 4 standard errors.
    expect(Math.abs(counts[0]! / n - 1 / 6)).toBeLessThan(0.015);
    expect(Math.abs(counts[1]! / n - 2 / 6)).toBeLessThan(0.015);
    expect(Math.abs(counts[2]! / n - 3 / 6)).toBeLessThan(0.015);
  });

  it('gradLogProb matches finite differences of logProb (all states and actions)', () => {
    const S = 3;
    const A = 4;
    const policy = new TabularSoftmaxPolicy(S, A, { logits: randomF64(S * A, 3, 17) });
    for (let s = 0; s < S; s++) {
      for (let a = 0; a < A; a++) {
        // ∇_θ log π(a|s) over the whole table: the row s, zeros elsewhere.
        const full = new Float64Array(S * A);
        full.set(policy.gradLogProb(s, a), s * A);
        const result = gradCheck(policy.logits, full, () => policy.logProb(s, a));
        expect(result.maxRelError, JSON.stringify(result.worst)).toBeLessThan(1e-7);
      }
    }
  });

  it('steps one row by lr · direction', () => {
    const policy = new TabularSoftmaxPolicy(2, 3, {
      logits: new Float64Array([0, LN2, LN3, 1, 2, 3]),
    });
    policy.step(0, new Float64Array([1, -2, 0]), 0.5);
    expect(Array.from(policy.logits)).toEqual([0.5, LN2 - 1, LN3, 1, 2, 3]);
  });

  it('REINFORCE learns the best arm of a 3-armed Bernoulli bandit', () => {
    // Arms pay 1 with probability 0.2, 0.5, 0.8. Update: θ += lr (r − b) ∇ log π(a), b a
    // running mean of rewards (baseline).
    const payout = [0.2, 0.5, 0.8];
    const policy = new TabularSoftmaxPolicy(1, 3);
    const random = seededRandom(7);
    let baseline = 0;
    for (let t = 0; t < 2000; t++) {
      const a = policy.sample(0, random);
      const r = random() < payout[a]! ? 1 : 0;
      const grad = policy.gradLogProb(0, a);
      policy.step(
        0,
        grad.map((g) => g * (r - baseline)),
        0.1,
      );
      baseline += 0.05 * (r - baseline);
    }
    expect(policy.probs(0)[2]).toBeGreaterThan(0.9);
  });

  it('round-trips through toTensors / a checkpoint / fromTensors', () => {
    const policy = new TabularSoftmaxPolicy(2, 3, {
      logits: new Float64Array([0, 0.5, -1.25, 2, 4, 8]), // exact in float32
    });
    const [t] = policy.toTensors();
    expect(t!.name).toBe('logits');
    expect(t!.shape).toEqual([2, 3]);
    const file = encodeCheckpoint({
      model: { kind: 'tabular', config: { states: 2, actions: 3 } },
      step: 10,
      seed: 1,
      tensors: policy.toTensors(),
    });
    const back = decodeCheckpoint(file, {
      kind: 'tabular',
      tensors: [{ name: 'logits', shape: [2, 3] }],
    });
    const again = TabularSoftmaxPolicy.fromTensors(back.tensors);
    expect([again.states, again.actions]).toEqual([2, 3]);
    expect(Array.from(again.logits)).toEqual([0, 0.5, -1.25, 2, 4, 8]);
  });

  describe('bad input (OpInputError naming the field and range)', () => {
    const p = (): TabularSoftmaxPolicy => new TabularSoftmaxPolicy(2, 3);
    it.each<[string, () => unknown, RegExp]>([
      ['states 0', () => new TabularSoftmaxPolicy(0, 3), /states must be an integer in \[1, /],
      [
        'actions 1.5',
        () => new TabularSoftmaxPolicy(2, 1.5),
        /actions must be an integer in \[1, /,
      ],
      [
        'init logits of the wrong length',
        () => new TabularSoftmaxPolicy(2, 3, { logits: new Float64Array(5) }),
        /logits must have states × actions = 6 elements, got 5/,
      ],
      [
        'a NaN init logit',
        () => new TabularSoftmaxPolicy(2, 3, { logits: new Float64Array([0, 0, 0, 0, NaN, 0]) }),
        /logits must be finite, but index 4 \(row 1, col 1\) is NaN/,
      ],
      ['state −1', () => p().probs(-1), /state must be an integer in \[0, 1\], got -1/],
      ['state = states', () => p().logProb(2, 0), /state must be an integer in \[0, 1\], got 2/],
      ['a fractional state', () => p().entropy(0.5), /state must be an integer in \[0, 1\]/],
      ['action = actions', () => p().logProb(0, 3), /action must be an integer in \[0, 2\], got 3/],
      ['action −1', () => p().gradLogProb(1, -1), /action must be an integer in \[0, 2\], got -1/],
      ['random() = 1', () => p().sample(0, () => 1), /random\(\) must be in \[0, 1\), got 1/],
      ['random() = NaN', () => p().sample(0, () => NaN), /random\(\) must be in \[0, 1\), got NaN/],
      [
        'a direction of the wrong length',
        () => p().step(0, new Float64Array(2), 1),
        /direction must have actions = 3 elements, got 2/,
      ],
      ['a NaN lr', () => p().step(0, new Float64Array(3), NaN), /lr must be in \(-∞, ∞\), got NaN/],
      [
        'fromTensors with another name',
        () =>
          TabularSoftmaxPolicy.fromTensors([
            { name: 'w', shape: [1, 2], data: new Float32Array(2) },
          ]),
        /tensors must be exactly one tensor named 'logits', got \["w"\]/,
      ],
      [
        'fromTensors with a 1-D shape',
        () =>
          TabularSoftmaxPolicy.fromTensors([
            { name: 'logits', shape: [4], data: new Float32Array(4) },
          ]),
        /'logits' must have shape \[states, actions\], got \[4\]/,
      ],
    ])('rejects %s', (_name, run, message) => {
      expect(run).toThrow(OpInputError);
      expect(run).toThrow(message);
    });

    it('leaves θ untouched when an update is not finite', () => {
      const policy = worked();
      const before = Array.from(policy.logits);
      expect(() => policy.step(0, new Float64Array([1, NaN, 0]), 0.1)).toThrow(
        /direction must be finite, but index 1 is NaN/,
      );
      // Finite inputs whose product overflows: 1e300 · 1e10 = Infinity.
      expect(() => policy.step(0, new Float64Array([0, 0, 1e10]), 1e300)).toThrow(
        /step would make θ\[0, 2\] = .* non-finite \(Infinity\); θ is unchanged/,
      );
      expect(Array.from(policy.logits)).toEqual(before);
    });
  });
});
