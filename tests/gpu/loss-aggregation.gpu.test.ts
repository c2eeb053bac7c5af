/** Parity of the loss-aggregation kernels with their CPU twin; runs in Node (Dawn) and Chromium. */
import { describe, expect, it } from 'vitest';
import { InputStatus } from '../../src/gpu/input-status';
import {
  AGGREGATE_LOSS_STATUS_TENSORS,
  aggregateLossGpu,
  encodeAggregateLoss,
} from '../../src/gpu/kernels/loss-aggregation';
import { OpInputError } from '../../src/ops/errors';
import { LOSS_AGG_MODES, type LossAggOptions, aggregateLoss } from '../../src/ops/loss-aggregation';
import { testGpu } from '../support/gpu';
import { maxAbsDiff, randomLogits, seededRandom } from '../support/random';

const gpu = await testGpu();

/** Ragged 0/1 mask: row r keeps a random prefix; about one row in eight is empty. */
function raggedMask(rows: number, cols: number, seed: number): Float32Array {
  const next = seededRandom(seed);
  const mask = new Float32Array(rows * cols);
  for (let r = 0; r < rows; r++) {
    const length = next() < 0.125 ? 0 : 1 + Math.floor(next() * cols);
    for (let c = 0; c < length; c++) mask[r * cols + c] = 1;
  }
  return mask;
}

describe.skipIf(!gpu)('loss aggregation kernels vs CPU reference', () => {
  const device = gpu!;

  it('matches a hand-worked ragged case in every mode', async () => {
    // Same case as the CPU test: rows [1, 2, 3] (3 tokens) and [4, ·, ·] (1 token).
    const tokenLoss = new Float32Array([1, 2, 3, 4, 100, 100]);
    const mask = new Float32Array([1, 1, 1, 1, 0, 0]);
    const expected: Record<string, number> = {
      'token-mean': 10 / 4,
      'seq-mean-token-mean': (2 + 4) / 2,
      'seq-mean-token-sum': (6 + 4) / 2,
      'seq-mean-token-sum-norm': 10 / (2 * 3),
      'dr-grpo': 10 / (2 * 3),
    };
    for (const mode of LOSS_AGG_MODES) {
      const out = await aggregateLossGpu(device, tokenLoss, mask, 2, 3, { mode });
      expect(out.loss, mode).toBeCloseTo(expected[mode]!, 5);
      const cpu = aggregateLoss(tokenLoss, mask, 2, 3, { mode });
      expect(maxAbsDiff(out.weights, cpu.weights), mode).toBeLessThan(1e-7);
    }
  });

  it('matches every mode on seeded random shapes', async () => {
    const next = seededRandom(31);
    for (let trial = 0; trial < 20; trial++) {
      const mode = LOSS_AGG_MODES[trial % LOSS_AGG_MODES.length]!;
      const rows = 1 + Math.floor(next() * 50);
      const cols = 1 + Math.floor(next() * 400);
      const options: LossAggOptions = {
        mode,
        lossScaleFactor: trial % 2 ? 37.5 : undefined,
        maxCompletionLength: trial % 3 ? cols + 7 : undefined,
        // Both row counts of the seq-mean-token-sum modes (kernel modes 3 and 2).
        emptyRows: trial % 4 < 2 ? 'exclude' : 'count',
      };
      const tokenLoss = randomLogits(rows * cols, 3, trial);
      const mask = raggedMask(rows, cols, trial + 100);
      const cpu = aggregateLoss(tokenLoss, mask, rows, cols, options);
      const out = await aggregateLossGpu(device, tokenLoss, mask, rows, cols, options);
      const label = `${mode} on ${rows} × ${cols}`;
      expect(Math.abs(out.loss - cpu.loss), label).toBeLessThan(1e-5 * (1 + Math.abs(cpu.loss)));
      let scale = 0;
      for (const w of cpu.weights) scale = Math.max(scale, w);
      expect(maxAbsDiff(out.weights, cpu.weights), label).toBeLessThanOrEqual(1e-6 * scale);
      expect(out.tokens, label).toBe(cpu.tokens);
      expect(out.emptyMask, label).toBe(cpu.emptyMask);
    }
  });

  it('leaves empty rows out of R for verl and counts them for the other flavors, as the CPU does', async () => {
    // Rows [1, 2, 3], [4, ·, ·], [·, ·, ·]: row sums 6, 4, 0; R = 2 (exclude) or 3 (count).
    const tokenLoss = new Float32Array([1, 2, 3, 4, 100, 100, 7, 7, 7]);
    const mask = new Float32Array([1, 1, 1, 1, 0, 0, 0, 0, 0]);
    const cases: [LossAggOptions, number][] = [
      [{ mode: 'seq-mean-token-sum' }, 10 / 2],
      [{ mode: 'seq-mean-token-sum', flavor: 'trl' }, 10 / 3],
      [{ mode: 'seq-mean-token-sum-norm' }, 10 / (2 * 3)],
      [{ mode: 'seq-mean-token-sum-norm', emptyRows: 'count', lossScaleFactor: 5 }, 10 / (3 * 5)],
    ];
    for (const [options, loss] of cases) {
      const out = await aggregateLossGpu(device, tokenLoss, mask, 3, 3, options);
      const cpu = aggregateLoss(tokenLoss, mask, 3, 3, options);
      expect(out.loss, JSON.stringify(options)).toBeCloseTo(loss, 5);
      expect(cpu.loss, JSON.stringify(options)).toBeCloseTo(loss, 12);
      expect(maxAbsDiff(out.weights, cpu.weights), JSON.stringify(options)).toBeLessThan(1e-7);
    }
  });

  it('matches with hardware workgroup sizes (64, 256) for the rows and the reduction', async () => {
    // SwiftShader defaults to 32 threads; pipeline compiles cost ~1–3 s each, so two sizes.
    // 300 rows: the 256-thread reduction strides over the rows more than once.
    const tokenLoss = randomLogits(300 * 5, 2, 3);
    const mask = raggedMask(300, 5, 4);
    const options: LossAggOptions = { mode: 'seq-mean-token-mean' };
    const cpu = aggregateLoss(tokenLoss, mask, 300, 5, options);
    for (const workgroupSize of [64, 256] as const) {
      const out = await aggregateLossGpu(device, tokenLoss, mask, 300, 5, {
        ...options,
        workgroupSize,
      });
      expect(Math.abs(out.loss - cpu.loss), `${workgroupSize}`).toBeLessThan(1e-5);
      expect(maxAbsDiff(out.weights, cpu.weights), `${workgroupSize}`).toBeLessThan(1e-8);
    }
  });

  it('gives loss 0, weights 0 and emptyMask for an all-zero mask in every mode', async () => {
    const tokenLoss = randomLogits(12, 2, 5);
    for (const mode of LOSS_AGG_MODES) {
      const out = await aggregateLossGpu(device, tokenLoss, new Float32Array(12), 3, 4, { mode });
      expect(out.loss).toBe(0);
      expect(out.emptyMask).toBe(true);
      for (const w of out.weights) expect(w).toBe(0);
    }
  });

  it('covers more rows than one grid dimension holds (2D dispatch)', async () => {
    const rows = 65_600; // > 65,535 workgroups per dimension
    const cols = 1;
    const tokenLoss = randomLogits(rows * cols, 1, 8);
    const mask = raggedMask(rows, cols, 9);
    const options: LossAggOptions = { mode: 'seq-mean-token-mean' };
    const cpu = aggregateLoss(tokenLoss, mask, rows, cols, options);
    const out = await aggregateLossGpu(device, tokenLoss, mask, rows, cols, options);
    expect(Math.abs(out.loss - cpu.loss)).toBeLessThan(1e-5);
    expect(maxAbsDiff(out.weights, cpu.weights)).toBeLessThan(1e-9);
  });

  it('records into a caller batch on resident buffers', async () => {
    const tokenLoss = randomLogits(4 * 9, 2, 6);
    const mask = raggedMask(4, 9, 7);
    const status = new InputStatus(device, 'aggregateLoss', AGGREGATE_LOSS_STATUS_TENSORS);
    const inputs = { tokenLoss: device.upload(tokenLoss), mask: device.upload(mask) };
    const loss = device.storage(4);
    const weights = device.storage(tokenLoss.byteLength);
    const batch = device.beginBatch('aggregate twice');
    const buffers = { ...inputs, loss, weights, status: status.buffer };
    await encodeAggregateLoss(device, batch, buffers, 4, 9, { mode: 'dr-grpo' });
    await encodeAggregateLoss(device, batch, buffers, 4, 9, { mode: 'token-mean' });
    batch.submit();
    await status.check();
    const cpu = aggregateLoss(tokenLoss, mask, 4, 9, { mode: 'token-mean' });
    expect((await device.readF32(loss, 1))[0]).toBeCloseTo(cpu.loss, 5);
    expect(maxAbsDiff(await device.readF32(weights, 36), cpu.weights)).toBeLessThan(1e-7);
    status.release();
    for (const buffer of [inputs.tokenLoss, inputs.mask, loss, weights]) {
      device.pool.release(buffer);
    }
  });

  it('rejects NaN / Inf token losses on the GPU with the CPU error class and index', async () => {
    const mask = new Float32Array(6).fill(1);
    for (const [index, value] of [
      [4, NaN],
      [0, Infinity],
    ] as const) {
      const tokenLoss = new Float32Array(6);
      tokenLoss[index] = value;
      const options: LossAggOptions = { mode: 'token-mean' };
      expect(() => aggregateLoss(tokenLoss, mask, 2, 3, options)).toThrow(OpInputError);
      await expect(aggregateLossGpu(device, tokenLoss, mask, 2, 3, options)).rejects.toThrow(
        new RegExp(`aggregateLoss: tokenLoss must be finite, but index ${index}`),
      );
    }
  });

  it('rejects bad shapes, masks and options before any dispatch', async () => {
    const created = device.pool.stats().created;
    const ok = new Float32Array(6);
    const mode = 'token-mean';
    await expect(aggregateLossGpu(device, ok, ok.slice(1), 2, 3, { mode })).rejects.toThrow(
      /mask must have rows × cols = 2 × 3 = 6 elements, got 5/,
    );
    await expect(
      aggregateLossGpu(device, ok, new Float32Array([1, 0, 2, 0, 0, 0]), 2, 3, { mode }),
    ).rejects.toThrow(/mask must be 0 or 1, but index 2/);
    await expect(
      aggregateLossGpu(device, ok, ok, 2, 3, {
        mode: 'seq-mean-token-sum-norm',
        lossScaleFactor: 0,
      }),
    ).rejects.toThrow(OpInputError);
    expect(device.pool.stats().created).toBe(created);
  });
});
