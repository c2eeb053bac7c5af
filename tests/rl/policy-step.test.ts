/**
 * The policy step's specification (src/rl/policy-step.ts, policyStepOnHost): the gradient it
 * hands the model is each loss term's own, times its coefficient, on the rows the term owns; the
 * behaviour policy defaults to this pass; a non-finite log-prob, value or loss stops the step
 * before its backward; a malformed request is refused with the field named. The GPU twin is held
 * to this in tests/gpu/models/policy-step.gpu.test.ts.
 */
import { describe, expect, it, vi } from 'vitest';
import { crossEntropyLogpGrad } from '../../src/models/language-model';
import { CpuLanguageModel } from '../../src/models/lm-cpu';
import { klLoss } from '../../src/ops/kl';
import { aggregateLoss } from '../../src/ops/loss-aggregation';
import { policyLoss } from '../../src/ops/policy-loss';
import { valueLoss } from '../../src/ops/value-loss';
import { policyStep, type PolicyStepRequest } from '../../src/rl/policy-step';
import { fullStep, STEP_SEQ, stepConfig, stepParams } from '../support/policy-step-fixture';

const T = STEP_SEQ;

/** A CPU model whose backwardFromLogp is watched (and still runs). */
function watchedModel(seed: number) {
  const model = new CpuLanguageModel(stepConfig, stepParams(seed));
  const backward = vi.spyOn(model, 'backwardFromLogp');
  return { model, backward };
}

function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let worst = 0;
  for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
  return worst;
}

describe('policyStep on the host (the specification)', () => {
  it('hands back each term’s gradient times its coefficient, on the rows the term owns', async () => {
    const { model, backward } = watchedModel(3);
    const B = 3;
    const { request, demos } = await fullStep(model, B, 2);
    const n = B * T;
    // Each op alone, on the log-probs, entropies and values of this same model.
    const scored = await model.scoreTokens(request.tokens, request.targets, B + 2, T, 0.9);
    const logp = scored.logp.subarray(0, n);
    const { mask, aggregation } = request;
    const pg = policyLoss(logp, request.oldLogp!, request.advantages, mask, B, T, {
      ...request.policyLoss,
    });
    const kl = klLoss(logp, request.kl!.refLogp, mask, B, T, { estimator: 'k3', aggregation });
    const ent = aggregateLoss(scored.entropy.subarray(0, n), mask, B, T, aggregation);
    const value = request.value!;
    const vl = valueLoss(
      scored.values!.subarray(0, n),
      value.oldValues,
      value.returns,
      mask,
      B,
      T,
      {
        cliprangeValue: 0.2,
        aggregation,
      },
    );

    const result = await policyStep(model, request);
    expect(result.skipped).toBeUndefined();
    expect(backward).toHaveBeenCalledTimes(1);
    const [dLogp, dEntropy, , dValues] = backward.mock.calls[0]!;
    expect(dLogp.length).toBe((B + 2) * T);
    // RL rows: ∂L_pg/∂logp + β·∂L_KL/∂logp.
    const expectedRl = pg.gradLogp.map((g, i) => g + 0.1 * kl.gradLogp[i]!);
    expect(maxDiff(dLogp.subarray(0, n), expectedRl)).toBeLessThan(1e-7);
    // Demonstration rows: c_ptx times the supervised gradient −m/Σm, nothing from the RL terms.
    const sft = crossEntropyLogpGrad(demos);
    expect(
      maxDiff(
        dLogp.subarray(n),
        sft.map((g) => 0.7 * g),
      ),
    ).toBeLessThan(1e-8);
    expect(
      maxDiff(
        dEntropy!.subarray(0, n),
        ent.weights.map((w) => -0.01 * w),
      ),
    ).toBeLessThan(1e-9);
    expect([...new Set(dEntropy!.subarray(n))]).toEqual([0]);
    expect(
      maxDiff(
        dValues!.subarray(0, n),
        vl.gradVpreds.map((g) => 0.5 * g),
      ),
    ).toBeLessThan(1e-8);
    expect([...new Set(dValues!.subarray(n))]).toEqual([0]);

    const losses = result.losses!;
    expect(losses.pgLoss).toBeCloseTo(pg.loss, 6);
    expect(losses.pgStats.pg_clipfrac).toBe(pg.stats.pg_clipfrac);
    expect(pg.stats.pg_clipfrac).toBeGreaterThan(0); // the ±0.3 behaviour noise does clip
    expect(losses.klLoss).toBeCloseTo(kl.loss, 6);
    expect(losses.entropy).toBeCloseTo(ent.loss, 6);
    expect(losses.vfLoss).toBeCloseTo(vl.loss, 6);
    expect(losses.vfClipfrac).toBe(vl.clipfrac);
    // L_ptx = −Σ m·logp / Σ m over the demonstrations.
    let sum = 0;
    let count = 0;
    demos.mask.forEach((m, i) => {
      sum += m * scored.logp[n + i]!;
      count += m;
    });
    expect(losses.ptxLoss).toBeCloseTo(-sum / count, 5);
    expect(result.logp).toBeUndefined(); // not asked for, and oldLogp was given
  });

  it('without oldLogp the behaviour policy is this pass: ratio 1, nothing clipped, logp returned', async () => {
    const { model } = watchedModel(4);
    const { request } = await fullStep(model, 2, 1);
    const rest = { ...request };
    delete rest.oldLogp;
    const scored = await model.scoreTokens(request.tokens, request.targets, 3, T, 0.9);
    const result = await policyStep(model, rest);
    expect(result.losses!.pgStats.pg_clipfrac).toBe(0);
    expect(result.losses!.pgStats.ppo_kl).toBe(0);
    expect(Array.from(result.logp!)).toEqual(Array.from(scored.logp.subarray(0, 2 * T)));
  });

  it('stops before the backward when a log-prob is not finite, and leaves the weights alone', async () => {
    const { model, backward } = watchedModel(5);
    const { request } = await fullStep(model, 2, 1);
    const params = await model.readParams();
    params[0] = NaN; // the first embedding row: every logit turns NaN
    model.writeParams(params);
    const result = await policyStep(model, request);
    expect(result.skipped).toBe('non-finite log-probs');
    expect(result.losses).toBeUndefined();
    expect(backward).not.toHaveBeenCalled();
    expect(Object.is((await model.readParams())[0], NaN)).toBe(true);
    expect(await model.takeMetrics()).toEqual([]);
  });

  it('stops before the backward when the total loss overflows', async () => {
    const { model, backward } = watchedModel(6);
    const { request } = await fullStep(model, 2, 1);
    const before = await model.readParams();
    // Finite returns whose squared error overflows f32: L_V = +∞.
    const returns = new Float32Array(2 * T).fill(1e30);
    const result = await policyStep(model, { ...request, value: { ...request.value!, returns } });
    expect(result.skipped).toBe('non-finite loss');
    expect(result.losses!.vfLoss).toBe(Infinity);
    expect(backward).not.toHaveBeenCalled();
    expect(maxDiff(await model.readParams(), before)).toBe(0);
  });

  it('refuses a malformed request, naming the field', async () => {
    const { model } = watchedModel(7);
    const { request } = await fullStep(model, 2, 1);
    const bad = (patch: Partial<PolicyStepRequest>) => policyStep(model, { ...request, ...patch });
    await expect(bad({ mask: new Float32Array(5) })).rejects.toThrow(
      /policyStep: mask must hold 20 values/,
    );
    await expect(bad({ ptx: { mask: new Float32Array(3), coef: 1 } })).rejects.toThrow(
      /ptx\.mask must hold 10/,
    );
    const withoutPtx = { ...request };
    delete withoutPtx.ptx;
    await expect(policyStep(model, withoutPtx)).rejects.toThrow(
      /tokens holds 1 row\(s\) after the 2 RL rows, but there is no ptx term/,
    );
    await expect(bad({ entropyCoef: -1 })).rejects.toThrow(/entropyCoef must be ≥ 0/);
    await expect(bad({ rows: 0 })).rejects.toThrow(/rows must be an integer ≥ 1/);
  });
});
