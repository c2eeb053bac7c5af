/** Parity of kernels/value_loss.wgsl (+ the aggregation passes) with its CPU twin; Node and Chromium. */
import { describe, expect, it } from 'vitest';
import { valueLossGpu } from '../../src/gpu/kernels/value-loss';
import { OpInputError } from '../../src/ops/errors';
import { LOSS_AGG_MODES } from '../../src/ops/loss-aggregation';
import { valueLoss, type ValueLoss } from '../../src/ops/value-loss';
import { testGpu } from '../support/gpu';
import { randomLogits, seededRandom } from '../support/random';

const gpu = await testGpu();

/** Values near their old values (steps up to ±1) and returns around them; mask ~75 % ones. */
function inputs(rows: number, cols: number, seed: number) {
  const n = rows * cols;
  const oldValues = randomLogits(n, 3, seed);
  const step = randomLogits(n, 1, seed + 1);
  const vpreds = oldValues.map((v, i) => v + step[i]!);
  const returns = randomLogits(n, 4, seed + 2);
  const next = seededRandom(seed + 3);
  const mask = new Float32Array(n).map(() => (next() < 0.75 ? 1 : 0));
  return { vpreds, oldValues, returns, mask };
}

function maxExcess(a: Float32Array, b: Float32Array, atol: number, rtol: number): number {
  let worst = 0;
  for (let i = 0; i < a.length; i++) {
    worst = Math.max(worst, Math.abs(a[i]! - b[i]!) - (atol + rtol * Math.abs(b[i]!)));
  }
  return worst;
}

function expectParity(out: ValueLoss, cpu: ValueLoss, what: string): void {
  expect(Math.abs(out.loss - cpu.loss), `${what} loss`).toBeLessThan(1e-6 + 1e-5 * cpu.loss);
  expect(Math.abs(out.clipfrac - cpu.clipfrac), `${what} clipfrac`).toBeLessThan(1e-6);
  expect(maxExcess(out.tokenLoss, cpu.tokenLoss, 1e-6, 1e-5), `${what} tokenLoss`).toBe(0);
  expect(maxExcess(out.gradVpreds, cpu.gradVpreds, 1e-9, 1e-5), `${what} grad`).toBe(0);
  expect(out.tokens).toBe(cpu.tokens);
  expect(out.emptyMask).toBe(cpu.emptyMask);
}

describe.skipIf(!gpu)('value_loss kernel vs CPU reference', () => {
  const device = gpu!;

  it('matches the hand-worked batch of the CPU tests', async () => {
    const vpreds = new Float32Array([1.125, 1.5, 1.5, 0.5, -1, -0.5, 100, 100]);
    const oldValues = new Float32Array([1, 1, 1, 1, 0, 0, -100, -100]);
    const returns = new Float32Array([2, 2, 0, 2, 1, -2, 7, 7]);
    const mask = new Float32Array([1, 1, 1, 1, 1, 1, 0, 0]);
    const out = await valueLossGpu(device, vpreds, oldValues, returns, mask, 2, 4, {
      cliprangeValue: 0.25,
    });
    expect(out.loss).toBeCloseTo(1.07421875, 6);
    expect(out.clipfrac).toBeCloseTo(1 / 3, 6);
    expect(Array.from(out.tokenLoss)).toEqual([0.765625, 0.5625, 2.25, 2.25, 4, 3.0625, 0, 0]);
    const grad = [-1.75 / 12, 0, 0.25, -0.25, -4 / 12, 0, 0, 0];
    grad.forEach((g, i) => expect(out.gradVpreds[i]!).toBeCloseTo(g, 6));
  });

  it.each(LOSS_AGG_MODES)('matches with %s aggregation, clipped and unclipped', async (mode) => {
    const rows = 10;
    const cols = 300;
    const { vpreds, oldValues, returns, mask } = inputs(rows, cols, 8);
    mask.fill(0, 2 * cols, 3 * cols); // one empty row
    for (const cliprangeValue of [0.2, 0.5, null]) {
      const options = {
        cliprangeValue,
        aggregation: { mode, lossScaleFactor: 64, maxCompletionLength: 512 },
      };
      const cpu = valueLoss(vpreds, oldValues, returns, mask, rows, cols, options);
      const out = await valueLossGpu(device, vpreds, oldValues, returns, mask, rows, cols, options);
      expectParity(out, cpu, `${mode} clip ${cliprangeValue}`);
      if (cliprangeValue !== null) expect(cpu.clipfrac).toBeGreaterThan(0.05);
    }
  });

  it('matches on 10 random shapes and flavors (seeded)', async () => {
    const next = seededRandom(2025);
    const flavors = ['verl', 'trl', 'openrlhf'] as const;
    for (let trial = 0; trial < 10; trial++) {
      const rows = 1 + Math.floor(next() * 30);
      const cols = 1 + Math.floor(next() * 700);
      const { vpreds, oldValues, returns, mask } = inputs(rows, cols, 50 + trial);
      const options = { flavor: flavors[trial % 3]! };
      const cpu = valueLoss(vpreds, oldValues, returns, mask, rows, cols, options);
      const out = await valueLossGpu(device, vpreds, oldValues, returns, mask, rows, cols, options);
      expectParity(out, cpu, `${rows} × ${cols} ${options.flavor}`);
    }
  });

  it('gives identical results for every workgroup size', async () => {
    const { vpreds, oldValues, returns, mask } = inputs(3, 555, 4);
    const reference = await valueLossGpu(device, vpreds, oldValues, returns, mask, 3, 555, {
      workgroupSize: 256,
    });
    for (const workgroupSize of [32, 64, 128] as const) {
      const out = await valueLossGpu(device, vpreds, oldValues, returns, mask, 3, 555, {
        workgroupSize,
      });
      expect(Math.abs(out.loss - reference.loss)).toBeLessThan(1e-6 * reference.loss);
      expect(out.clipfrac).toBe(reference.clipfrac);
      expect(Array.from(out.tokenLoss)).toEqual(Array.from(reference.tokenLoss));
    }
  });

  it('covers more rows than one grid dimension holds (2D dispatch)', async () => {
    const rows = 66_000; // > 65,535 workgroups per dimension
    const cols = 2;
    const { vpreds, oldValues, returns, mask } = inputs(rows, cols, 12);
    const options = { aggregation: { mode: 'seq-mean-token-mean' as const } };
    const cpu = valueLoss(vpreds, oldValues, returns, mask, rows, cols, options);
    const out = await valueLossGpu(device, vpreds, oldValues, returns, mask, rows, cols, options);
    // f32 sums over 1.3e5 tokens: allow a little more than the small-shape tolerance.
    expect(Math.abs(out.loss - cpu.loss)).toBeLessThan(1e-4 * cpu.loss);
    expect(Math.abs(out.clipfrac - cpu.clipfrac)).toBeLessThan(1e-5);
    expect(maxExcess(out.gradVpreds, cpu.gradVpreds, 1e-9, 1e-4)).toBe(0);
  });

  it('an all-zero mask gives loss 0, clipfrac 0 and zero gradients on the GPU, not NaN', async () => {
    const { vpreds, oldValues, returns } = inputs(3, 5, 1);
    for (const mode of LOSS_AGG_MODES) {
      const out = await valueLossGpu(
        device,
        vpreds,
        oldValues,
        returns,
        new Float32Array(15),
        3,
        5,
        {
          aggregation: { mode },
        },
      );
      expect(out.loss, mode).toBe(0);
      expect(out.clipfrac).toBe(0);
      expect(out.emptyMask).toBe(true);
      expect(Array.from(out.gradVpreds).every((g) => g === 0)).toBe(true);
    }
  });

  it('rejects non-finite inputs on the GPU like the CPU reference', async () => {
    const { vpreds, oldValues, returns, mask } = inputs(3, 4, 2);
    oldValues[7] = Infinity;
    mask[7] = 0; // masked tokens are checked too
    expect(() => valueLoss(vpreds, oldValues, returns, mask, 3, 4)).toThrow(
      /valueLoss: oldValues must be finite, but index 7/,
    );
    await expect(valueLossGpu(device, vpreds, oldValues, returns, mask, 3, 4)).rejects.toThrow(
      /valueLoss: oldValues must be finite, but index 7 is not .*found on the GPU/,
    );
    oldValues[7] = 0;
    returns[0] = NaN;
    await expect(valueLossGpu(device, vpreds, oldValues, returns, mask, 3, 4)).rejects.toThrow(
      OpInputError,
    );
  });

  it('rejects bad shapes, masks and options before any dispatch', async () => {
    const created = device.pool.stats().created;
    const x = new Float32Array(4);
    const ones = new Float32Array(4).fill(1);
    await expect(
      valueLossGpu(device, x, x, x, new Float32Array([1, 2, 0, 0]), 2, 2),
    ).rejects.toThrow(/valueLoss: mask must be 0 or 1/);
    await expect(valueLossGpu(device, x, new Float32Array(5), x, ones, 2, 2)).rejects.toThrow(
      /valueLoss: oldValues must have rows × cols/,
    );
    await expect(
      valueLossGpu(device, x, x, x, ones, 2, 2, { cliprangeValue: -0.2 }),
    ).rejects.toThrow(/valueLoss: cliprangeValue must be in \(0, ∞\) or null/);
    expect(device.pool.stats().created).toBe(created);
  });
});
