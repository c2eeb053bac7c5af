import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../src/ops/errors';
import { LOSS_AGG_MODES, type LossAggMode, aggregateLoss } from '../../src/ops/loss-aggregation';
import {
  POLICY_LOSS_STATS,
  type PolicyLossOptions,
  policyLoss,
  resolvePolicyLossOptions,
} from '../../src/ops/policy-loss';
import { seededRandom } from '../support/random';

const ln = Math.log;

/** One row of tokens with the given ratios and advantages; oldLogp = −1, logp = −1 + ln ratio. */
function row(tokens: readonly { ratio: number; a: number }[]) {
  const cols = tokens.length;
  const oldLogp = new Float32Array(cols).fill(-1);
  const logp = Float32Array.from(tokens, (t) => -1 + ln(t.ratio));
  const advantages = Float32Array.from(tokens, (t) => t.a);
  const mask = new Float32Array(cols).fill(1);
  return { logp, oldLogp, advantages, mask, rows: 1, cols };
}

/** Per-token view: with B = 1 and seq-mean-token-sum every weight is 1, so gradLogp = ∂ℓ/∂logp. */
function perToken(ratio: number, a: number, options: PolicyLossOptions) {
  const b = row([{ ratio, a }]);
  return policyLoss(b.logp, b.oldLogp, b.advantages, b.mask, 1, 1, {
    ...options,
    aggregation: 'seq-mean-token-sum',
  });
}

describe('policyLoss (CPU reference)', () => {
  describe('ppo: hand-worked per-token values (verl: ε = 0.2, clip_ratio_c = 3)', () => {
    // ℓ = max(−A·r, −A·clip(r, 0.8, 1.2)), then for A < 0 min(ℓ, −3A); grad = ∂ℓ/∂logp = ∂ℓ/∂r · r.
    it.each<[string, number, number, number, number]>([
      // l1 = l2 = −2·1.1 = −2.2; slope −A·r = −2.2.
      ['A > 0, ratio 1.1 inside the clip range', 1.1, 2, -2.2, -2.2],
      // l1 = −3, l2 = −2·1.2 = −2.4 → max −2.4 (clipped, flat).
      ['A > 0, ratio 1.5 above 1 + ε: clipped', 1.5, 2, -2.4, 0],
      // l1 = −1, l2 = −2·0.8 = −1.6 → max −1 (the unclipped, pessimistic side).
      ['A > 0, ratio 0.5 below 1 − ε: unclipped', 0.5, 2, -1, -1],
      // l1 = 0.5, l2 = 0.8 → 0.8 (clipped, flat).
      ['A < 0, ratio 0.5 below 1 − ε: clipped', 0.5, -1, 0.8, 0],
      // l1 = 1.5, l2 = 1.2 → 1.5; slope −A·r = 1.5; below the dual cap 3.
      ['A < 0, ratio 1.5 above 1 + ε: unclipped', 1.5, -1, 1.5, 1.5],
      // l1 = 4, l2 = 1.2 → 4, capped by −A·c = 3 (dual clip, flat).
      ['A < 0, ratio 4: dual clip caps at 3', 4, -1, 3, 0],
      // l1 = l2 = 0.
      ['A = 0', 1.5, 0, 0, 0],
    ])('%s', (_name, ratio, a, loss, grad) => {
      const out = perToken(ratio, a, { flavor: 'verl' });
      expect(out.tokenLoss[0]).toBeCloseTo(loss, 5);
      expect(out.loss).toBeCloseTo(loss, 5);
      expect(out.gradLogp[0]).toBeCloseTo(grad, 5);
    });

    it('computes the statistics and the token-mean loss of those six tokens by hand', () => {
      const b = row([
        { ratio: 1.1, a: 2 },
        { ratio: 1.5, a: 2 },
        { ratio: 0.5, a: 2 },
        { ratio: 0.5, a: -1 },
        { ratio: 1.5, a: -1 },
        { ratio: 4, a: -1 },
      ]);
      const out = policyLoss(b.logp, b.oldLogp, b.advantages, b.mask, 1, 6, { flavor: 'verl' });
      // (−2.2 − 2.4 − 1 + 0.8 + 1.5 + 3) / 6 = −0.3 / 6.
      expect(out.loss).toBeCloseTo(-0.05, 6);
      // l2 > l1 for tokens 2 and 4; the dual cap hits token 6; TRL low: token 4; high: token 2.
      expect(out.stats.pg_clipfrac).toBeCloseTo(2 / 6, 12);
      expect(out.stats.pg_clipfrac_lower).toBeCloseTo(1 / 6, 12);
      expect(out.stats['clip_ratio/low_mean']).toBeCloseTo(1 / 6, 12);
      expect(out.stats['clip_ratio/high_mean']).toBeCloseTo(1 / 6, 12);
      expect(out.stats['clip_ratio/region_mean']).toBeCloseTo(2 / 6, 12);
      // Σ ln r = ln 1.1 + 2 ln 1.5 + 2 ln 0.5 + ln 4 = ln 1.1 + 2 ln 1.5.
      expect(out.stats.ppo_kl).toBeCloseTo(-(ln(1.1) + 2 * ln(1.5)) / 6, 6);
      // Σ (ln r)² = ln²1.1 + 2 ln²1.5 + 2 ln²2 + (2 ln 2)² = ln²1.1 + 2 ln²1.5 + 6 ln²2; half the mean.
      expect(out.stats.approx_kl_half_sq).toBeCloseTo(
        (ln(1.1) ** 2 + 2 * ln(1.5) ** 2 + 6 * ln(2) ** 2) / 12,
        6,
      );
      // TRL's defaults have no dual clip: token 6 keeps ℓ = 4, so the loss is 0.7 / 6.
      const trl = policyLoss(b.logp, b.oldLogp, b.advantages, b.mask, 1, 6, { flavor: 'trl' });
      expect(trl.loss).toBeCloseTo(0.7 / 6, 6);
      expect(trl.stats.pg_clipfrac_lower).toBe(0);
      expect(trl.gradLogp[5]).toBeCloseTo(4 / 6, 5); // −A·r / 6
    });

    it('clip-higher (DAPO 0.2 / 0.28) lets ratio 1.25 through for A > 0', () => {
      // ε_high = 0.2: −2·1.2 = −2.4, flat; ε_high = 0.28: −2·1.25 = −2.5, slope −2.5.
      const symmetric = perToken(1.25, 2, { flavor: 'trl' });
      expect(symmetric.tokenLoss[0]).toBeCloseTo(-2.4, 5);
      expect(symmetric.gradLogp[0]).toBe(0);
      expect(symmetric.stats['clip_ratio/high_mean']).toBe(1);
      const higher = perToken(1.25, 2, { flavor: 'trl', clipHigh: 0.28 });
      expect(higher.tokenLoss[0]).toBeCloseTo(-2.5, 5);
      expect(higher.gradLogp[0]).toBeCloseTo(-2.5, 5);
      expect(higher.stats['clip_ratio/high_mean']).toBe(0);
    });

    it("TRL's delta caps the unclipped ratio (two-sided clipping)", () => {
      // A = −1, r = 4, delta 2: l1 = −A·min(4, 2) = 2, l2 = 1.2 → 2, flat (capped).
      const capped = perToken(4, -1, { flavor: 'trl', delta: 2 });
      expect(capped.tokenLoss[0]).toBeCloseTo(2, 5);
      expect(capped.gradLogp[0]).toBe(0);
      // r = 1.5 < delta: unchanged, 1.5 with slope 1.5.
      const below = perToken(1.5, -1, { flavor: 'trl', delta: 2 });
      expect(below.tokenLoss[0]).toBeCloseTo(1.5, 5);
      expect(below.gradLogp[0]).toBeCloseTo(1.5, 5);
      // A = 1, r = 4: l1 = −2, l2 = −1.2 → −1.2 (clipped); TRL high counts r1 = 2 > 1.2.
      const positive = perToken(4, 1, { flavor: 'trl', delta: 2 });
      expect(positive.tokenLoss[0]).toBeCloseTo(-1.2, 5);
      expect(positive.stats['clip_ratio/high_mean']).toBe(1);
    });

    it('verl clamps the log ratio at ±20 before exp(); TRL and OpenRLHF do not', () => {
      // Δ = −5 − (−30) = 25. verl: lr = 20, r = e^20; A = −1 → l1 = e^20 > 3 → dual cap 3, flat.
      const b = {
        logp: new Float32Array([-5]),
        oldLogp: new Float32Array([-30]),
        advantages: new Float32Array([-1]),
        mask: new Float32Array([1]),
      };
      const args = [b.logp, b.oldLogp, b.advantages, b.mask, 1, 1] as const;
      const verl = policyLoss(...args, { flavor: 'verl' });
      expect(verl.loss).toBeCloseTo(3, 6);
      expect(verl.gradLogp[0]).toBe(0);
      expect(verl.stats.ppo_kl).toBe(-20); // verl logs the clamped value
      expect(verl.stats.approx_kl_half_sq).toBe(312.5); // ½·25²
      // TRL: r = e^25, ℓ = −A·r = e^25 with slope e^25.
      const trl = policyLoss(...args, { flavor: 'trl' });
      expect(trl.loss / Math.exp(25)).toBeCloseTo(1, 6);
      expect(trl.gradLogp[0]! / Math.exp(25)).toBeCloseTo(1, 6);
      expect(trl.stats.ppo_kl).toBe(-25);
      // verl without its clamp (logRatioClamp: null) keeps the dual cap but logs −25.
      expect(policyLoss(...args, { flavor: 'verl', logRatioClamp: null }).stats.ppo_kl).toBe(-25);
    });
  });

  describe('gspo: hand-worked sequence ratio', () => {
    // One row, two tokens: Δ = ln 1.5 ± 0.3, so s = exp(mean Δ) = 1.5; A = [1, −1]; ε = 0.2.
    // token 0 (A = 1):  l1 = −1.5, l2 = −1.2 → ℓ = −1.2, ∂ℓ/∂s = 0 (clipped)
    // token 1 (A = −1): l1 = 1.5,  l2 = 1.2  → ℓ = 1.5,  ∂ℓ/∂s = −A = 1
    const oldLogp = new Float32Array([-1, -1]);
    const logp = new Float32Array([-1 + ln(1.5) + 0.3, -1 + ln(1.5) - 0.3]);
    const advantages = new Float32Array([1, -1]);
    const mask = new Float32Array([1, 1]);
    const run = (options: PolicyLossOptions) =>
      policyLoss(logp, oldLogp, advantages, mask, 1, 2, {
        lossType: 'gspo',
        aggregation: 'seq-mean-token-sum', // B = 1: weights 1
        ...options,
      });

    it("verl ('token' gradient): token-local slope ∂ℓ_t/∂s · s", () => {
      const out = run({ flavor: 'verl' });
      expect(out.tokenLoss[0]).toBeCloseTo(-1.2, 5);
      expect(out.tokenLoss[1]).toBeCloseTo(1.5, 5);
      expect(out.loss).toBeCloseTo(0.3, 5);
      expect(out.gradLogp[0]).toBeCloseTo(0, 6);
      expect(out.gradLogp[1]).toBeCloseTo(1.5, 5); // 1 · s
      expect(out.stats.pg_clipfrac).toBe(0.5); // token 0: l2 > l1
      expect(out.stats['clip_ratio/high_mean']).toBe(0.5); // token 0: s > 1.2, A > 0
      expect(out.stats['clip_ratio/low_mean']).toBe(0);
      expect(out.stats.pg_clipfrac_lower).toBe(0);
      expect(out.stats.ppo_kl).toBeCloseTo(-ln(1.5), 6); // −mean Δ
    });

    it("TRL ('sequence' gradient): every token gets s/n · Σ_u ∂ℓ_u/∂s", () => {
      const out = run({ flavor: 'trl' });
      expect(out.loss).toBeCloseTo(0.3, 5);
      // 1.5 / 2 · (0 + 1) = 0.75 on both tokens.
      expect(out.gradLogp[0]).toBeCloseTo(0.75, 5);
      expect(out.gradLogp[1]).toBeCloseTo(0.75, 5);
    });

    it('ignores the dual clip (verl default 3): s = 4 with A = −1 gives ℓ = 4', () => {
      const b = row([{ ratio: 4, a: -1 }]);
      const out = policyLoss(b.logp, b.oldLogp, b.advantages, b.mask, 1, 1, {
        flavor: 'verl',
        lossType: 'gspo',
      });
      expect(out.loss).toBeCloseTo(4, 5);
    });

    it('verl clamps the sequence log ratio at 10 (flat beyond); TRL does not', () => {
      // Δ = −1 − (−13) = 12, A = −1 (one token). verl: s = e^10, ℓ = e^10, no gradient.
      const args = [
        new Float32Array([-1]),
        new Float32Array([-13]),
        new Float32Array([-1]),
        new Float32Array([1]),
        1,
        1,
      ] as const;
      const verl = policyLoss(...args, { flavor: 'verl', lossType: 'gspo' });
      expect(verl.loss / Math.exp(10)).toBeCloseTo(1, 6);
      expect(verl.gradLogp[0]).toBe(0);
      // TRL: s = e^12, ℓ = e^12, ∂loss/∂logp = s/n · 1 = e^12.
      const trl = policyLoss(...args, { flavor: 'trl', lossType: 'gspo' });
      expect(trl.loss / Math.exp(12)).toBeCloseTo(1, 6);
      expect(trl.gradLogp[0]! / Math.exp(12)).toBeCloseTo(1, 6);
    });
  });

  it('reinforce: ℓ = −A·logp, gradient −A, no clip statistics', () => {
    // logp [−1, −2], A [3, −1] → ℓ [3, −2], grad [−3, 1] (B = 1, weights 1).
    const logp = new Float32Array([-1, -2]);
    const out = policyLoss(
      logp,
      new Float32Array([-1.5, -1.5]),
      new Float32Array([3, -1]),
      new Float32Array([1, 1]),
      1,
      2,
      { lossType: 'reinforce', aggregation: 'seq-mean-token-sum' },
    );
    expect(Array.from(out.tokenLoss)).toEqual([3, -2]);
    expect(out.loss).toBe(1);
    expect(Array.from(out.gradLogp)).toEqual([-3, 1]);
    expect(out.stats.pg_clipfrac).toBe(0);
    expect(out.stats['clip_ratio/region_mean']).toBe(0);
    // Δ = [0.5, −0.5]: ppo_kl = −mean Δ = 0; ½·mean(Δ²) = 0.125.
    expect(out.stats.ppo_kl).toBe(0);
    expect(out.stats.approx_kl_half_sq).toBe(0.125);
  });

  describe('aggregation of the policy loss, ragged mask (reinforce, worked by hand)', () => {
    // logp [[−1, −2], [−3, −4]], A [[1, 1], [2, 2]], mask [[1, 1], [1, 0]]
    // ℓ = −A·logp = [[1, 2], [6, ·]]: row sums 3 and 6, row tokens 2 and 1.
    const logp = new Float32Array([-1, -2, -3, -4]);
    const advantages = new Float32Array([1, 1, 2, 2]);
    const mask = new Float32Array([1, 1, 1, 0]);
    it.each<[LossAggMode, PolicyLossOptions, number, number[]]>([
      // 9 / 3; grad −A/3.
      ['token-mean', {}, 3, [-1 / 3, -1 / 3, -2 / 3, 0]],
      // (3/2 + 6/1) / 2 = 3.75; weights 1/(2·2) and 1/(2·1).
      ['seq-mean-token-mean', {}, 3.75, [-1 / 4, -1 / 4, -1, 0]],
      // (3 + 6) / 2 = 4.5; weights 1/2.
      ['seq-mean-token-sum', {}, 4.5, [-1 / 2, -1 / 2, -1, 0]],
      // 9 / (B · lossScaleFactor 3) = 1.5; weights 1/6 (verl since v0.7.1).
      ['seq-mean-token-sum-norm', { lossScaleFactor: 3 }, 1.5, [-1 / 6, -1 / 6, -1 / 3, 0]],
      // 9 / (B · T) = 9 / 4; weights 1/4.
      ['dr-grpo', {}, 2.25, [-1 / 4, -1 / 4, -1 / 2, 0]],
    ])('%s', (mode, extra, loss, grad) => {
      const out = policyLoss(logp, logp, advantages, mask, 2, 2, {
        lossType: 'reinforce',
        aggregation: mode,
        ...extra,
      });
      expect(out.loss).toBeCloseTo(loss, 12);
      out.gradLogp.forEach((g, i) => expect(g).toBeCloseTo(grad[i]!, 7));
      expect(out.tokens).toBe(3);
    });
  });

  it('flavors give different numbers for GSPO (aggregation default and gradient form)', () => {
    // Δ = 0 (s = 1, ℓ = −A); A = [[1, 3], [4, ·]], mask [[1, 1], [1, 0]]: ℓ = [[−1, −3], [−4]].
    const logp = new Float32Array([-1, -1, -2, -2]);
    const advantages = new Float32Array([1, 3, 4, 4]);
    const mask = new Float32Array([1, 1, 1, 0]);
    const run = (flavor: 'verl' | 'trl' | 'openrlhf') =>
      policyLoss(logp, logp, advantages, mask, 2, 2, { flavor, lossType: 'gspo' });
    // verl: seq-mean-token-mean, token-local: loss (−2 − 4)/2 = −3; grads w·(−A)·s with
    // w = 1/4 (row 0), 1/2 (row 1): [−1/4, −3/4, −2].
    const verl = run('verl');
    expect(verl.loss).toBeCloseTo(-3, 12);
    [-0.25, -0.75, -2, 0].forEach((g, i) => expect(verl.gradLogp[i]).toBeCloseTo(g, 7));
    // trl: token-mean, sequence: loss −8/3; row 0 grads 1/2 · (1/3·(−1) + 1/3·(−3)) = −2/3,
    // row 1: 1/1 · 1/3·(−4) = −4/3.
    const trl = run('trl');
    expect(trl.loss).toBeCloseTo(-8 / 3, 6);
    [-2 / 3, -2 / 3, -4 / 3, 0].forEach((g, i) => expect(trl.gradLogp[i]).toBeCloseTo(g, 6));
    // openrlhf: seq-mean-token-mean, sequence: loss −3; row 0: 1/2 · (1/4·(−1) + 1/4·(−3)) = −1/2.
    const openrlhf = run('openrlhf');
    expect(openrlhf.loss).toBeCloseTo(-3, 12);
    [-0.5, -0.5, -2, 0].forEach((g, i) => expect(openrlhf.gradLogp[i]).toBeCloseTo(g, 7));
  });

  it('resolves flavor defaults; explicit options (and null to turn off) win', () => {
    expect(resolvePolicyLossOptions({})).toMatchObject({
      flavor: 'verl',
      lossType: 'ppo',
      clipLow: 0.2,
      clipHigh: 0.2,
      dualClip: 3,
      logRatioClamp: 20,
      delta: null,
      aggregation: 'token-mean',
    });
    expect(resolvePolicyLossOptions({ flavor: 'trl', lossType: 'gspo' })).toMatchObject({
      dualClip: null,
      logRatioClamp: null,
      gspoGradient: 'sequence',
      aggregation: 'token-mean',
    });
    expect(resolvePolicyLossOptions({ flavor: 'verl', lossType: 'gspo' }).aggregation).toBe(
      'seq-mean-token-mean',
    );
    expect(
      resolvePolicyLossOptions({ flavor: 'verl', dualClip: null, aggregation: 'dr-grpo' }),
    ).toMatchObject({ dualClip: null, aggregation: 'dr-grpo' });
  });

  describe('gradient = finite differences of the aggregated loss (float64, away from kinks)', () => {
    // Ratios at least 0.1 from the clip bounds 0.8 / 1.2 and from the dual cap 3 and delta 3.
    const RATIOS = [0.5, 0.7, 0.9, 1.0, 1.1, 1.4, 2.0, 4.0];
    const ROW_RATIOS = [0.5, 0.9, 1.1, 1.5]; // GSPO sequence ratios, same margins
    const MASK = [1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 1, 0, 1, 1]; // (4, 4), row 2 empty

    function kinkFree(seed: number, gspo: boolean) {
      const next = seededRandom(seed);
      const rows = 4;
      const cols = 4;
      const mask = Float32Array.from(MASK);
      const oldLogp = Float32Array.from({ length: 16 }, () => -0.5 - 2 * next());
      const advantages = Float32Array.from(
        { length: 16 },
        () => (next() < 0.5 ? -1 : 1) * (0.5 + next()),
      );
      const logp = new Float32Array(16);
      for (let r = 0; r < rows; r++) {
        const pick = (list: number[]) => list[Math.floor(next() * list.length)]!;
        const rowLog = ln(pick(ROW_RATIOS));
        // GSPO: zero-mean jitter over the unmasked tokens keeps the row mean at ln s.
        const idx = [0, 1, 2, 3].map((c) => r * cols + c).filter((i) => mask[i] === 1);
        const jitter = idx.map(() => 0.2 * (next() - 0.5));
        const mean = jitter.reduce((s, j) => s + j, 0) / Math.max(jitter.length, 1);
        for (let c = 0; c < cols; c++) {
          const i = r * cols + c;
          const k = idx.indexOf(i);
          const d = gspo
            ? rowLog + (k >= 0 ? jitter[k]! - mean : 0.3)
            : ln(pick(RATIOS)) + 0.005 * next();
          logp[i] = oldLogp[i]! + d;
        }
      }
      return { logp, oldLogp, advantages, mask, rows, cols };
    }

    const CONFIGS: [string, PolicyLossOptions, boolean][] = [
      ['ppo verl (dual clip hits at r = 4)', { flavor: 'verl' }, false],
      ['ppo trl + clip-higher + delta 3', { flavor: 'trl', clipHigh: 0.28, delta: 3 }, false],
      ['gspo trl (sequence coupling)', { flavor: 'trl', lossType: 'gspo' }, true],
      ['gspo openrlhf (sequence coupling)', { flavor: 'openrlhf', lossType: 'gspo' }, true],
      ['reinforce', { lossType: 'reinforce' }, false],
    ];

    it.each(CONFIGS)('%s, every aggregation mode', (_name, base, gspo) => {
      for (const [seed, mode] of LOSS_AGG_MODES.entries()) {
        const b = kinkFree(seed + 1, gspo);
        const options = { ...base, aggregation: mode };
        const lossAt = (logp: Float32Array) =>
          policyLoss(logp, b.oldLogp, b.advantages, b.mask, b.rows, b.cols, options).loss;
        const { gradLogp } = policyLoss(
          b.logp,
          b.oldLogp,
          b.advantages,
          b.mask,
          b.rows,
          b.cols,
          options,
        );
        for (let i = 0; i < b.logp.length; i++) {
          const plus = b.logp.slice();
          const minus = b.logp.slice();
          plus[i] = Math.fround(b.logp[i]! + 1e-3);
          minus[i] = Math.fround(b.logp[i]! - 1e-3);
          const numeric = (lossAt(plus) - lossAt(minus)) / (plus[i]! - minus[i]!);
          const label = `${mode} index ${i}`;
          expect(Math.abs(gradLogp[i]! - numeric), label).toBeLessThan(
            1e-5 + 1e-4 * Math.abs(numeric),
          );
        }
      }
    });

    it("gspo verl (token): the gradient of verl's surrogate with the row ratio held fixed", () => {
      // verl differentiates logp − sg(logp) + sg(mean Δ): with s_b frozen, token t's ratio is
      // s_b·exp(x_t − logp_t). The finite difference is taken of that surrogate, written out here
      // (ε = 0.2, no dual clip) and weighted by the aggregation weights.
      for (const [seed, mode] of LOSS_AGG_MODES.entries()) {
        const b = kinkFree(seed + 11, true);
        const options: PolicyLossOptions = { flavor: 'verl', lossType: 'gspo', aggregation: mode };
        const out = policyLoss(b.logp, b.oldLogp, b.advantages, b.mask, 4, 4, options);
        const { weights } = aggregateLoss(new Float32Array(16), b.mask, 4, 4, { mode });
        const rowRatio = [0, 1, 2, 3].map((r) => {
          let sum = 0;
          let n = 0;
          for (let c = 0; c < 4; c++) {
            const i = r * 4 + c;
            sum += b.mask[i]! * (b.logp[i]! - b.oldLogp[i]!);
            n += b.mask[i]!;
          }
          return Math.exp(sum / Math.max(n, 1));
        });
        const surrogate = (x: Float64Array) => {
          let total = 0;
          for (let i = 0; i < 16; i++) {
            if (b.mask[i] === 0) continue;
            const a = b.advantages[i]!;
            const ratio = rowRatio[Math.floor(i / 4)]! * Math.exp(x[i]! - b.logp[i]!);
            total += weights[i]! * Math.max(-a * ratio, -a * Math.min(Math.max(ratio, 0.8), 1.2));
          }
          return total;
        };
        const x0 = Float64Array.from(b.logp);
        expect(surrogate(x0)).toBeCloseTo(out.loss, 6);
        for (let i = 0; i < 16; i++) {
          const plus = x0.slice();
          const minus = x0.slice();
          plus[i] = x0[i]! + 1e-4;
          minus[i] = x0[i]! - 1e-4;
          const numeric = (surrogate(plus) - surrogate(minus)) / 2e-4;
          expect(Math.abs(out.gradLogp[i]! - numeric), `${mode} index ${i}`).toBeLessThan(
            1e-6 + 1e-5 * Math.abs(numeric),
          );
        }
      }
    });
  });

  describe('properties', () => {
    const CASES: PolicyLossOptions[] = [
      { flavor: 'verl' },
      { flavor: 'trl' },
      { flavor: 'trl', clipHigh: 0.28, delta: 2 },
      { flavor: 'openrlhf', dualClip: 2 },
      { flavor: 'verl', lossType: 'gspo' },
      { flavor: 'trl', lossType: 'gspo' },
      { lossType: 'reinforce' },
    ];
    const arbitrary = fc.record({
      rows: fc.integer({ min: 1, max: 5 }),
      cols: fc.integer({ min: 1, max: 10 }),
      seed: fc.integer({ min: 0, max: 2 ** 31 - 1 }),
      options: fc.constantFrom(...CASES),
      mode: fc.constantFrom(...LOSS_AGG_MODES),
    });

    function randomInputs(rows: number, cols: number, seed: number) {
      const next = seededRandom(seed);
      const n = rows * cols;
      const oldLogp = Float32Array.from({ length: n }, () => -4 * next());
      const logp = oldLogp.map((v) => v + (next() * 2 - 1) * 1.5);
      const advantages = Float32Array.from({ length: n }, () => (next() * 2 - 1) * 3);
      const mask = Float32Array.from({ length: n }, () => (next() < 0.7 ? 1 : 0));
      return { logp, oldLogp, advantages, mask };
    }

    it('masked positions never change the loss, the token losses or the gradients', () => {
      fc.assert(
        fc.property(arbitrary, ({ rows, cols, seed, options, mode }) => {
          const x = randomInputs(rows, cols, seed);
          const y = randomInputs(rows, cols, seed + 1);
          const pick = (a: Float32Array, b: Float32Array) =>
            a.map((v, i) => (x.mask[i] === 1 ? v : b[i]!));
          const o = { ...options, aggregation: mode };
          const a = policyLoss(x.logp, x.oldLogp, x.advantages, x.mask, rows, cols, o);
          const b = policyLoss(
            pick(x.logp, y.logp),
            pick(x.oldLogp, y.oldLogp),
            pick(x.advantages, y.advantages),
            x.mask,
            rows,
            cols,
            o,
          );
          expect(b.loss).toBe(a.loss);
          expect(Array.from(b.tokenLoss)).toEqual(Array.from(a.tokenLoss));
          expect(Array.from(b.gradLogp)).toEqual(Array.from(a.gradLogp));
          x.mask.forEach((m, i) => {
            if (m === 0) {
              expect(a.tokenLoss[i]).toBe(0);
              expect(a.gradLogp[i]).toBe(0);
            }
          });
        }),
        { numRuns: 300 },
      );
    });

    it('pessimism: ℓ ≥ l1 without dual clip; with dual clip ℓ ≤ −A·c for A < 0', () => {
      fc.assert(
        fc.property(arbitrary, ({ rows, cols, seed }) => {
          const x = randomInputs(rows, cols, seed);
          const args = [x.logp, x.oldLogp, x.advantages, x.mask, rows, cols] as const;
          const trl = policyLoss(...args, { flavor: 'trl', delta: 2 });
          const verl = policyLoss(...args, { flavor: 'verl', logRatioClamp: null });
          for (let i = 0; i < rows * cols; i++) {
            if (x.mask[i] === 0) continue;
            const a = x.advantages[i]!;
            const ratio = Math.exp(x.logp[i]! - x.oldLogp[i]!);
            const l1 = -a * Math.min(ratio, 2);
            expect(trl.tokenLoss[i]!).toBeGreaterThanOrEqual(l1 - 1e-6 * (1 + Math.abs(l1)));
            if (a < 0) expect(verl.tokenLoss[i]!).toBeLessThanOrEqual(-a * 3 * (1 + 1e-6));
          }
        }),
        { numRuns: 300 },
      );
    });

    it('clip statistics are fractions, region = low ∨ high, and the loss is the aggregate', () => {
      fc.assert(
        fc.property(arbitrary, ({ rows, cols, seed, options, mode }) => {
          const x = randomInputs(rows, cols, seed);
          const o = { ...options, aggregation: mode };
          const out = policyLoss(x.logp, x.oldLogp, x.advantages, x.mask, rows, cols, o);
          const s = out.stats;
          for (const name of [
            'pg_clipfrac',
            'pg_clipfrac_lower',
            'clip_ratio/low_mean',
            'clip_ratio/high_mean',
            'clip_ratio/region_mean',
          ] as const) {
            expect(s[name]).toBeGreaterThanOrEqual(0);
            expect(s[name]).toBeLessThanOrEqual(1);
          }
          // low and high exclude each other (A < 0 vs A > 0), so region = low + high.
          expect(s['clip_ratio/region_mean']).toBeCloseTo(
            s['clip_ratio/low_mean'] + s['clip_ratio/high_mean'],
            12,
          );
          expect(s.approx_kl_half_sq).toBeGreaterThanOrEqual(0);
          // The loss's flavor also says which empty rows count (seq-mean-token-sum modes).
          const aggregated = aggregateLoss(out.tokenLoss, x.mask, rows, cols, {
            mode,
            flavor: options.flavor,
          });
          expect(out.loss).toBeCloseTo(aggregated.loss, 4);
        }),
        { numRuns: 300 },
      );
    });

    it.each(LOSS_AGG_MODES)('%s: an empty mask gives 0 everywhere, never NaN', (mode) => {
      const x = randomInputs(3, 4, 5);
      x.mask.fill(0);
      for (const options of CASES) {
        const out = policyLoss(x.logp, x.oldLogp, x.advantages, x.mask, 3, 4, {
          ...options,
          aggregation: mode,
        });
        expect(out).toMatchObject({ loss: 0, tokens: 0, emptyMask: true });
        for (const v of [...out.tokenLoss, ...out.gradLogp]) expect(v).toBe(0);
        for (const name of POLICY_LOSS_STATS) expect(out.stats[name]).toBe(0);
      }
    });
  });

  describe('bad input', () => {
    const ok = new Float32Array(6);
    const mask = new Float32Array(6).fill(1);
    const call =
      (
        options: PolicyLossOptions,
        patch: Partial<Record<'logp' | 'adv' | 'mask', Float32Array>> = {},
      ) =>
      () =>
        policyLoss(patch.logp ?? ok, ok, patch.adv ?? ok, patch.mask ?? mask, 2, 3, options);
    it.each<[string, () => unknown, RegExp]>([
      [
        'logp length',
        call({}, { logp: new Float32Array(5) }),
        /logp must have rows × cols = 2 × 3 = 6 elements, got 5/,
      ],
      [
        'NaN logp',
        call({}, { logp: new Float32Array([0, 0, 0, NaN, 0, 0]) }),
        /logp must be finite, but index 3 \(row 1, col 0\) is NaN/,
      ],
      [
        'infinite advantage',
        call({}, { adv: new Float32Array([0, Infinity, 0, 0, 0, 0]) }),
        /advantages must be finite, but index 1/,
      ],
      [
        'non-binary mask',
        call({}, { mask: new Float32Array([1, 1, 2, 1, 1, 1]) }),
        /mask must be 0 or 1, but index 2/,
      ],
      ['clipLow 0', call({ clipLow: 0 }), /clipLow must be in \(0, 1\), got 0/],
      ['clipLow 1', call({ clipLow: 1 }), /clipLow must be in \(0, 1\), got 1/],
      ['clipHigh 10.5', call({ clipHigh: 10.5 }), /clipHigh must be in \(0, 10\], got 10.5/],
      ['clipHigh NaN', call({ clipHigh: NaN }), /clipHigh must be in \(0, 10\], got NaN/],
      ['dualClip 1', call({ dualClip: 1 }), /dualClip must be in \(1, ∞\), got 1/],
      ['logRatioClamp 0', call({ logRatioClamp: 0 }), /logRatioClamp must be in \(0, ∞\), got 0/],
      ['delta 1', call({ flavor: 'trl', delta: 1 }), /delta must be in \(1, ∞\), got 1/],
      [
        'lossType',
        call({ lossType: 'grpo' as 'ppo' }),
        /lossType must be one of 'ppo', 'gspo', 'reinforce', got 'grpo'/,
      ],
      [
        'gspoGradient',
        call({ gspoGradient: 'seq' as 'token' }),
        /gspoGradient must be one of 'token', 'sequence', got 'seq'/,
      ],
      [
        'aggregation',
        call({ aggregation: 'bnpo' as LossAggMode }),
        /policyLoss: mode must be one of/,
      ],
      [
        'lossScaleFactor',
        call({ lossScaleFactor: -1 }),
        /lossScaleFactor must be in \(0, ∞\), got -1/,
      ],
      [
        'maxCompletionLength',
        call({ maxCompletionLength: 0 }),
        /maxCompletionLength must be an integer in \[1, /,
      ],
    ])('rejects bad %s with an OpInputError naming it', (_name, fn, pattern) => {
      expect(fn).toThrow(OpInputError);
      expect(fn).toThrow(pattern);
    });

    it('rejects an unknown flavor', () => {
      expect(call({ flavor: 'deepspeed' as 'verl' })).toThrow(
        /flavor must be one of verl, trl, openrlhf/,
      );
    });
  });
});
