/** Parity of kernels/kl.wgsl (+ kl_grad.wgsl) with its CPU twin; runs in Node (Dawn) and Chromium. */
import { describe, expect, it } from 'vitest';
import {
  encodeKlRewardPenalty,
  encodePerTokenKl,
  klLossGpu,
  klRewardPenaltyGpu,
  perTokenKlGpu,
} from '../../src/gpu/kernels/kl';
import { OpInputError } from '../../src/ops/errors';
import {
  KL_CLAMPS,
  KL_ESTIMATORS,
  type KlClamp,
  type KlEstimator,
  klLoss,
  klRewardPenalty,
  perTokenKl,
} from '../../src/ops/kl';
import { LOSS_AGG_MODES } from '../../src/ops/loss-aggregation';
import { testGpu } from '../support/gpu';
import { randomLogits, seededRandom } from '../support/random';

const gpu = await testGpu();

/** Inputs with Δ = logp − refLogp spread over ±`spread`, and a random 0/1 mask (~70 % ones). */
function inputs(rows: number, cols: number, seed: number, spread = 15) {
  const n = rows * cols;
  const logp = randomLogits(n, spread / 2, seed).map((v) => v - spread / 2);
  const refLogp = randomLogits(n, spread / 2, seed + 1).map((v) => v - spread / 2);
  const next = seededRandom(seed + 2);
  const mask = new Float32Array(n).map(() => (next() < 0.7 ? 1 : 0));
  return { logp, refLogp, mask };
}

/**
 * GPU (f32) vs CPU (float64, stored as f32): |a − b| ≤ atol + rtol·|b|. Tokens whose CPU value
 * sits within 1e-3 of the ±10 clamp bound are skipped: there f32 and float64 may take different
 * sides of the clamp (the value agrees, the gradient legitimately does not).
 */
function expectClose(
  actual: Float32Array,
  expected: Float32Array,
  reference: Float32Array,
  what: string,
  atol = 2e-6,
  rtol = 2e-5,
): void {
  expect(actual.length).toBe(expected.length);
  let worst = 0;
  let at = -1;
  for (let i = 0; i < actual.length; i++) {
    if (Math.abs(Math.abs(reference[i]!) - 10) < 1e-3) continue;
    const excess = Math.abs(actual[i]! - expected[i]!) - (atol + rtol * Math.abs(expected[i]!));
    if (excess > worst) {
      worst = excess;
      at = i;
    }
  }
  expect(at, `${what}: index ${at}: ${actual[at]} vs ${expected[at]}`).toBe(-1);
}

describe.skipIf(!gpu)('kl kernel vs CPU reference', () => {
  const device = gpu!;

  const combos = KL_ESTIMATORS.flatMap((e) => KL_CLAMPS.map((c) => [e, c] as const));

  it.each(combos)('perTokenKl matches for %s with %s clamp on 33 × 1000', async (est, clamp) => {
    const { logp, refLogp, mask } = inputs(33, 1000, 11);
    const options = { estimator: est as KlEstimator, clamp: clamp as KlClamp };
    const cpu = perTokenKl(logp, refLogp, mask, 33, 1000, options);
    const out = await perTokenKlGpu(device, logp, refLogp, mask, 33, 1000, options);
    expectClose(out.kl, cpu.kl, cpu.kl, 'kl');
    expectClose(out.gradLogp, cpu.gradLogp, cpu.kl, 'grad');
  });

  it('perTokenKl matches on golden edge cases (Δ = −100, −30, −3, 0, 1e-3, 12)', async () => {
    const deltas = [-100, -30, -3, 0, 1e-3, -1e-3, 0.02, 12];
    const refLogp = new Float32Array(deltas.length).fill(-1);
    const logp = refLogp.map((r, i) => r + deltas[i]!);
    const mask = new Float32Array(deltas.length).fill(1);
    for (const clamp of ['verl', 'openrlhf'] as const) {
      for (const estimator of KL_ESTIMATORS) {
        const options = { estimator, clamp };
        const cpu = perTokenKl(logp, refLogp, mask, 1, deltas.length, options);
        const out = await perTokenKlGpu(device, logp, refLogp, mask, 1, deltas.length, options);
        expect(Array.from(out.kl).every(Number.isFinite), `${estimator} ${clamp}`).toBe(true);
        // No skipping here: none of these deltas sits near a clamp bound.
        expectClose(out.kl, cpu.kl, new Float32Array(deltas.length), `${estimator} ${clamp} kl`);
        expectClose(out.gradLogp, cpu.gradLogp, new Float32Array(deltas.length), 'grad');
      }
    }
  });

  it('k3 stays ≥ 0 on the GPU, also for tiny Δ', async () => {
    const n = 4096;
    const logp = randomLogits(n, 1e-3, 5).map((v) => v - 1);
    const refLogp = new Float32Array(n).fill(-1);
    const mask = new Float32Array(n).fill(1);
    const out = await perTokenKlGpu(device, logp, refLogp, mask, 1, n, { clamp: 'none' });
    expect(Math.min(...out.kl)).toBeGreaterThanOrEqual(0);
    const cpu = perTokenKl(logp, refLogp, mask, 1, n, { clamp: 'none' });
    expectClose(out.kl, cpu.kl, cpu.kl, 'kl', 1e-12, 1e-5);
  });

  it.each(LOSS_AGG_MODES)('klLoss matches with %s aggregation', async (mode) => {
    const rows = 12;
    const cols = 257;
    const { logp, refLogp, mask } = inputs(rows, cols, 40, 4);
    for (const row of [3, 7]) mask.fill(0, row * cols, (row + 1) * cols); // empty rows
    for (const [estimator, clamp] of [
      ['k3', 'verl'],
      ['k2', 'openrlhf'],
      ['k1', 'none'],
    ] as const) {
      const options = {
        estimator,
        clamp,
        aggregation: { mode, lossScaleFactor: 100, maxCompletionLength: 300 },
      };
      const cpu = klLoss(logp, refLogp, mask, rows, cols, options);
      const out = await klLossGpu(device, logp, refLogp, mask, rows, cols, options);
      expect(Math.abs(out.loss - cpu.loss), `${mode} ${estimator}`).toBeLessThan(
        1e-6 + 1e-5 * Math.abs(cpu.loss),
      );
      expectClose(out.kl, cpu.kl, cpu.kl, 'kl');
      expectClose(out.gradLogp, cpu.gradLogp, cpu.kl, 'grad', 1e-9);
      expect(out.tokens).toBe(cpu.tokens);
    }
  });

  it('klLoss matches on 8 random shapes (seeded)', async () => {
    const next = seededRandom(99);
    for (let trial = 0; trial < 8; trial++) {
      const rows = 1 + Math.floor(next() * 20);
      const cols = 1 + Math.floor(next() * 500);
      const { logp, refLogp, mask } = inputs(rows, cols, 100 + trial, 6);
      const mode = LOSS_AGG_MODES[trial % LOSS_AGG_MODES.length]!;
      const options = { aggregation: { mode } };
      const cpu = klLoss(logp, refLogp, mask, rows, cols, options);
      const out = await klLossGpu(device, logp, refLogp, mask, rows, cols, options);
      expect(Math.abs(out.loss - cpu.loss), `${rows} × ${cols} ${mode}`).toBeLessThan(
        1e-6 + 1e-5 * Math.abs(cpu.loss),
      );
      expectClose(out.gradLogp, cpu.gradLogp, cpu.kl, `${rows} × ${cols} grad`, 1e-9);
    }
  });

  it('an all-zero mask gives loss 0 and zero gradients on the GPU, not NaN', async () => {
    const { logp, refLogp } = inputs(4, 9, 3);
    const out = await klLossGpu(device, logp, refLogp, new Float32Array(36), 4, 9, {
      aggregation: { mode: 'seq-mean-token-mean' },
    });
    expect(out.loss).toBe(0);
    expect(out.emptyMask).toBe(true);
    expect(Array.from(out.gradLogp).every((g) => g === 0)).toBe(true);
    expect(Array.from(out.kl).every((v) => v === 0)).toBe(true);
  });

  it('rejects non-finite inputs on the GPU like the CPU reference', async () => {
    const { logp, refLogp, mask } = inputs(2, 8, 1);
    refLogp[5] = NaN;
    logp[9] = -Infinity;
    expect(() => perTokenKl(logp, refLogp, mask, 2, 8)).toThrow(OpInputError);
    // The GPU reports the first tensor (slot order logp, refLogp) with a bad value.
    await expect(perTokenKlGpu(device, logp, refLogp, mask, 2, 8)).rejects.toThrow(
      /perTokenKl: logp must be finite, but index 9 is not/,
    );
    logp[9] = -1;
    await expect(klLossGpu(device, logp, refLogp, mask, 2, 8)).rejects.toThrow(
      /klLoss: refLogp must be finite, but index 5 is not .*found on the GPU/,
    );
    // A masked position is checked too, as on the CPU.
    refLogp[5] = -1;
    mask[3] = 0;
    logp[3] = NaN;
    expect(() => klLoss(logp, refLogp, mask, 2, 8)).toThrow(/index 3/);
    await expect(klLossGpu(device, logp, refLogp, mask, 2, 8)).rejects.toThrow(OpInputError);
  });

  it('rejects bad shapes, masks and options before any dispatch', async () => {
    const created = device.pool.stats().created;
    const x = new Float32Array(4);
    await expect(
      perTokenKlGpu(device, x, x, new Float32Array([1, 0, 0.5, 1]), 2, 2),
    ).rejects.toThrow(/perTokenKl: mask must be 0 or 1, but index 2/);
    await expect(perTokenKlGpu(device, x, new Float32Array(3), x, 2, 2)).rejects.toThrow(
      /refLogp must have rows × cols/,
    );
    await expect(
      klLossGpu(device, x, x, x, 2, 2, { estimator: 'k5' as KlEstimator }),
    ).rejects.toThrow(/klLoss: estimator must be one of/);
    await expect(
      klLossGpu(device, x, x, x, 2, 2, { aggregation: { mode: 'x' as 'token-mean' } }),
    ).rejects.toThrow(/klLoss: mode must be one of/);
    expect(device.pool.stats().created).toBe(created);
  });
});

describe.skipIf(!gpu)('kl reward penalty kernel vs CPU reference', () => {
  const device = gpu!;

  /** Token rewards (sparse score on each row's last token plus noise) and k1 KL of `inputs`. */
  function penaltyInputs(rows: number, cols: number, seed: number) {
    const { logp, refLogp, mask } = inputs(rows, cols, seed, 4);
    const tokenRewards = randomLogits(rows * cols, 0.1, seed + 3);
    for (let r = 0; r < rows; r++) tokenRewards[r * cols + cols - 1] = r % 2 === 0 ? 1 : -1;
    const { kl } = perTokenKl(logp, refLogp, mask, rows, cols, { estimator: 'k1' });
    return { logp, refLogp, mask, tokenRewards, kl };
  }

  function expectPenaltyClose(
    out: { rewards: Float32Array; klMean: number },
    cpu: { rewards: Float32Array; klMean: number },
    what: string,
  ): void {
    expectClose(out.rewards, cpu.rewards, new Float32Array(cpu.rewards.length), `${what} rewards`);
    expect(Math.abs(out.klMean - cpu.klMean), `${what} klMean`).toBeLessThan(
      1e-6 + 1e-5 * Math.abs(cpu.klMean),
    );
  }

  it.each([0, 0.001, 0.05, 2])(
    'matches with β = %s on 33 × 300 (with empty rows)',
    async (beta) => {
      const rows = 33;
      const cols = 300;
      const { tokenRewards, kl, mask } = penaltyInputs(rows, cols, 70);
      for (const row of [4, 20]) mask.fill(0, row * cols, (row + 1) * cols);
      const cpu = klRewardPenalty(tokenRewards, kl, mask, rows, cols, beta);
      const out = await klRewardPenaltyGpu(device, tokenRewards, kl, mask, rows, cols, beta);
      expectPenaltyClose(out, cpu, `β ${beta}`);
      // β = 0 leaves the rewards bit-identical.
      if (beta === 0) expect(Array.from(out.rewards)).toEqual(Array.from(tokenRewards));
    },
  );

  it('matches on 8 random shapes (seeded)', async () => {
    const next = seededRandom(123);
    for (let trial = 0; trial < 8; trial++) {
      const rows = 1 + Math.floor(next() * 40);
      const cols = 1 + Math.floor(next() * 700);
      const beta = next() * 0.2;
      const { tokenRewards, kl, mask } = penaltyInputs(rows, cols, 200 + trial);
      const cpu = klRewardPenalty(tokenRewards, kl, mask, rows, cols, beta);
      const out = await klRewardPenaltyGpu(device, tokenRewards, kl, mask, rows, cols, beta);
      expectPenaltyClose(out, cpu, `${rows} × ${cols}`);
    }
  });

  it('gives klMean 0 for an all-zero mask, and rewards unchanged', async () => {
    const { tokenRewards, kl } = penaltyInputs(3, 17, 5);
    const out = await klRewardPenaltyGpu(device, tokenRewards, kl, new Float32Array(51), 3, 17, 1);
    expect(out.klMean).toBe(0);
    expect(Array.from(out.rewards)).toEqual(Array.from(tokenRewards));
  });

  it('chains on the resident kl of encodePerTokenKl in one batch', async () => {
    const rows = 16;
    const cols = 129;
    const n = rows * cols;
    const beta = 0.01;
    const { logp, refLogp, mask, tokenRewards } = penaltyInputs(rows, cols, 90);
    const options = { estimator: 'k3', clamp: 'verl' } as const;
    const { kl } = perTokenKl(logp, refLogp, mask, rows, cols, options);
    const cpu = klRewardPenalty(tokenRewards, kl, mask, rows, cols, beta);
    const buffers = {
      logp: device.upload(logp, 'logp'),
      refLogp: device.upload(refLogp, 'refLogp'),
      mask: device.upload(mask, 'mask'),
      tokenRewards: device.upload(tokenRewards, 'tokenRewards'),
      kl: device.storage(n * 4, 'kl'),
      grad: device.storage(n * 4, 'grad'),
      rewards: device.storage(n * 4, 'rewards'),
      klMean: device.storage(4, 'klMean'),
    };
    try {
      const batch = device.beginBatch('kl then reward penalty');
      await encodePerTokenKl(device, batch, buffers, rows, cols, options);
      await encodeKlRewardPenalty(device, batch, buffers, rows, cols, beta);
      batch.submit();
      const [rewards, klMean] = await Promise.all([
        device.readF32(buffers.rewards, n),
        device.readF32(buffers.klMean, 1),
      ]);
      expectPenaltyClose({ rewards, klMean: klMean[0]! }, cpu, 'chained');
    } finally {
      for (const buffer of Object.values(buffers)) device.pool.release(buffer);
    }
  });

  it('rejects non-finite inputs on the GPU like the CPU reference', async () => {
    const { tokenRewards, kl, mask } = penaltyInputs(2, 8, 1);
    kl[6] = NaN;
    tokenRewards[11] = Infinity;
    expect(() => klRewardPenalty(tokenRewards, kl, mask, 2, 8, 0.1)).toThrow(OpInputError);
    // Slot order tokenRewards, kl: the first tensor with a bad value is reported.
    await expect(klRewardPenaltyGpu(device, tokenRewards, kl, mask, 2, 8, 0.1)).rejects.toThrow(
      /klRewardPenalty: tokenRewards must be finite, but index 11 is not/,
    );
    tokenRewards[11] = 0;
    // A masked position is checked too, as on the CPU.
    mask[6] = 0;
    expect(() => klRewardPenalty(tokenRewards, kl, mask, 2, 8, 0.1)).toThrow(/kl .*index 6/);
    await expect(klRewardPenaltyGpu(device, tokenRewards, kl, mask, 2, 8, 0.1)).rejects.toThrow(
      /klRewardPenalty: kl must be finite, but index 6 is not .*found on the GPU/,
    );
  });

  it('rejects bad shapes, masks and β before any dispatch', async () => {
    const created = device.pool.stats().created;
    const x = new Float32Array(4);
    const ones = new Float32Array(4).fill(1);
    await expect(
      klRewardPenaltyGpu(device, x, x, new Float32Array([1, 0, 0.5, 1]), 2, 2, 0.1),
    ).rejects.toThrow(/klRewardPenalty: mask must be 0 or 1, but index 2/);
    await expect(
      klRewardPenaltyGpu(device, x, new Float32Array(3), ones, 2, 2, 0.1),
    ).rejects.toThrow(/kl must have rows × cols/);
    for (const beta of [-0.1, NaN, Infinity]) {
      await expect(klRewardPenaltyGpu(device, x, x, ones, 2, 2, beta)).rejects.toThrow(
        /klRewardPenalty: beta must be a finite number ≥ 0/,
      );
    }
    expect(device.pool.stats().created).toBe(created);
  });
});
