/** Parity of the policy-loss kernels with their CPU twin; runs in Node (Dawn) and in Chromium. */
import { describe, expect, it } from 'vitest';
import { InputStatus } from '../../src/gpu/input-status';
import {
  POLICY_LOSS_STATS_LENGTH,
  POLICY_LOSS_STATUS_TENSORS,
  encodePolicyLoss,
  policyLossGpu,
  readPolicyLossStats,
} from '../../src/gpu/kernels/policy-loss';
import { OpInputError } from '../../src/ops/errors';
import { LOSS_AGG_MODES } from '../../src/ops/loss-aggregation';
import {
  POLICY_LOSS_STATS,
  type PolicyLossOptions,
  type PolicyLossResult,
  policyLoss,
} from '../../src/ops/policy-loss';
import { testGpu } from '../support/gpu';
import { maxAbsDiff, seededRandom } from '../support/random';

const gpu = await testGpu();

interface Batch {
  rows: number;
  cols: number;
  logp: Float32Array;
  oldLogp: Float32Array;
  advantages: Float32Array;
  mask: Float32Array;
}

/** Seeded (rows, cols) inputs with ragged masks (some rows empty) and ratios around the clip. */
function randomBatch(rows: number, cols: number, seed: number): Batch {
  const next = seededRandom(seed);
  const n = rows * cols;
  const logp = new Float32Array(n);
  const oldLogp = new Float32Array(n);
  const advantages = new Float32Array(n);
  const mask = new Float32Array(n);
  for (let r = 0; r < rows; r++) {
    const length = next() < 0.1 ? 0 : 1 + Math.floor(next() * cols);
    const rowAdvantage = (next() * 2 - 1) * 2;
    for (let c = 0; c < cols; c++) {
      const i = r * cols + c;
      logp[i] = -5 * next();
      oldLogp[i] = logp[i]! + (next() * 2 - 1) * 0.4;
      advantages[i] = next() < 0.5 ? rowAdvantage : (next() * 2 - 1) * 2;
      mask[i] = c < length ? 1 : 0;
    }
  }
  return { rows, cols, logp, oldLogp, advantages, mask };
}

function expectParity(gpuResult: PolicyLossResult, cpu: PolicyLossResult, label: string): void {
  const tokens = Math.max(cpu.tokens, 1);
  let scale = 1e-6;
  for (const g of cpu.gradLogp) scale = Math.max(scale, Math.abs(g));
  expect(Math.abs(gpuResult.loss - cpu.loss), `${label} loss`).toBeLessThan(
    1e-4 * (1 + Math.abs(cpu.loss)),
  );
  expect(maxAbsDiff(gpuResult.tokenLoss, cpu.tokenLoss), `${label} tokenLoss`).toBeLessThan(1e-4);
  expect(maxAbsDiff(gpuResult.gradLogp, cpu.gradLogp), `${label} gradLogp`).toBeLessThan(
    1e-4 * scale,
  );
  for (const name of POLICY_LOSS_STATS) {
    // A token within f32 rounding of a clip bound may count differently: allow one token.
    expect(Math.abs(gpuResult.stats[name] - cpu.stats[name]), `${label} ${name}`).toBeLessThan(
      1.01 / tokens + 1e-4,
    );
  }
  expect(gpuResult.tokens).toBe(cpu.tokens);
  expect(gpuResult.emptyMask).toBe(cpu.emptyMask);
}

const LOSS_CASES: [string, PolicyLossOptions][] = [
  ['ppo verl (dual clip, ±20 clamp)', { flavor: 'verl' }],
  ['ppo trl clip-higher + delta', { flavor: 'trl', clipHigh: 0.28, delta: 1.4 }],
  ['ppo openrlhf', { flavor: 'openrlhf' }],
  ['gspo token (verl)', { flavor: 'verl', lossType: 'gspo', clipLow: 0.05, clipHigh: 0.08 }],
  ['gspo sequence (trl)', { flavor: 'trl', lossType: 'gspo', clipLow: 0.05, clipHigh: 0.08 }],
  ['reinforce', { lossType: 'reinforce' }],
];

describe.skipIf(!gpu)('policy loss kernels vs CPU reference', () => {
  const device = gpu!;

  it.each(LOSS_CASES)('%s matches on fixed shapes', async (_name, options) => {
    for (const [rows, cols] of [
      [1, 1],
      [3, 7],
      [5, 64],
      [4, 300],
    ] as const) {
      const b = randomBatch(rows, cols, rows * 100 + cols);
      const args = [b.logp, b.oldLogp, b.advantages, b.mask, rows, cols, options] as const;
      expectParity(await policyLossGpu(device, ...args), policyLoss(...args), `${rows}×${cols}`);
    }
  });

  it('matches for every loss type × aggregation mode on seeded random shapes', async () => {
    const next = seededRandom(77);
    let trial = 0;
    for (const [name, base] of LOSS_CASES) {
      for (const mode of LOSS_AGG_MODES) {
        const rows = 1 + Math.floor(next() * 24);
        const cols = 1 + Math.floor(next() * 200);
        const b = randomBatch(rows, cols, 1000 + trial++);
        const options: PolicyLossOptions = {
          ...base,
          aggregation: mode,
          lossScaleFactor: mode === 'seq-mean-token-sum-norm' ? 50 : undefined,
          maxCompletionLength: mode === 'dr-grpo' ? cols + 3 : undefined,
        };
        const args = [b.logp, b.oldLogp, b.advantages, b.mask, rows, cols, options] as const;
        expectParity(
          await policyLossGpu(device, ...args),
          policyLoss(...args),
          `${name} / ${mode} on ${rows}×${cols}`,
        );
      }
    }
  });

  it('matches with hardware workgroup sizes (64, 256) for the rows and the reduction', async () => {
    // SwiftShader defaults to 32 threads; pipeline compiles cost ~1–3 s each, so two sizes.
    // GSPO 'sequence' runs every reduction of the rows kernel, then the coupling pass.
    const b = randomBatch(6, 300, 21);
    const options: PolicyLossOptions = { flavor: 'trl', lossType: 'gspo', clipLow: 0.05 };
    const args = [b.logp, b.oldLogp, b.advantages, b.mask, 6, 300] as const;
    const cpu = policyLoss(...args, options);
    for (const workgroupSize of [64, 256] as const) {
      const out = await policyLossGpu(device, ...args, { ...options, workgroupSize });
      expectParity(out, cpu, `${workgroupSize} threads`);
    }
    await expect(
      policyLossGpu(device, b.logp, b.oldLogp, b.advantages, b.mask, 6, 300, {
        workgroupSize: 48 as 32,
      }),
    ).rejects.toThrow(/workgroupSize must be one of 32, 64, 128, 256, got 48/);
  });

  it('gives 0 (not NaN) for an all-zero mask', async () => {
    const b = randomBatch(3, 5, 4);
    b.mask.fill(0);
    for (const [, options] of LOSS_CASES) {
      const out = await policyLossGpu(device, b.logp, b.oldLogp, b.advantages, b.mask, 3, 5, {
        ...options,
        aggregation: 'seq-mean-token-mean',
      });
      expect(out.loss).toBe(0);
      expect(out.emptyMask).toBe(true);
      for (const v of out.gradLogp) expect(v).toBe(0);
      for (const name of POLICY_LOSS_STATS) expect(out.stats[name]).toBe(0);
    }
  });

  it('covers more rows than one grid dimension holds (2D dispatch)', async () => {
    const rows = 65_600; // > 65,535 workgroups per dimension
    const cols = 1;
    const b = randomBatch(rows, cols, 9);
    const args = [b.logp, b.oldLogp, b.advantages, b.mask, rows, cols, {}] as const;
    expectParity(await policyLossGpu(device, ...args), policyLoss(...args), '65600×1');
  });

  it('records into a caller batch on resident buffers and reads stats from one buffer', async () => {
    const b = randomBatch(6, 40, 12);
    const status = new InputStatus(device, 'policyLoss', POLICY_LOSS_STATUS_TENSORS);
    const inputs = {
      logp: device.upload(b.logp),
      oldLogp: device.upload(b.oldLogp),
      advantages: device.upload(b.advantages),
      mask: device.upload(b.mask),
    };
    const outputs = {
      tokenLoss: device.storage(b.logp.byteLength),
      gradLogp: device.storage(b.logp.byteLength),
      stats: device.storage(POLICY_LOSS_STATS_LENGTH * 4),
    };
    const batch = device.beginBatch('two policy losses');
    // Twice in one batch: the scratch buffers are reused in order.
    await encodePolicyLoss(device, batch, { ...inputs, ...outputs }, 6, 40, { flavor: 'trl' });
    await encodePolicyLoss(device, batch, { ...inputs, ...outputs, status: status.buffer }, 6, 40);
    batch.submit();
    await status.check();
    const { loss, stats } = readPolicyLossStats(
      await device.readF32(outputs.stats, POLICY_LOSS_STATS_LENGTH),
    );
    const cpu = policyLoss(b.logp, b.oldLogp, b.advantages, b.mask, 6, 40);
    expect(Math.abs(loss - cpu.loss)).toBeLessThan(1e-5);
    expect(Math.abs(stats.ppo_kl - cpu.stats.ppo_kl)).toBeLessThan(1e-5);
    status.release();
    for (const buffer of [...Object.values(inputs), ...Object.values(outputs)]) {
      device.pool.release(buffer);
    }
  });

  it('rejects NaN / Inf inputs on the GPU with the CPU error class, naming tensor and index', async () => {
    const b = randomBatch(2, 4, 3);
    const cases: [keyof Batch, number, number, RegExp][] = [
      ['logp', 5, NaN, /policyLoss: logp must be finite, but index 5/],
      ['oldLogp', 0, Infinity, /policyLoss: oldLogp must be finite, but index 0/],
      ['advantages', 7, -Infinity, /policyLoss: advantages must be finite, but index 7/],
    ];
    for (const [tensor, index, value, pattern] of cases) {
      const bad = { ...b, [tensor]: (b[tensor] as Float32Array).slice() } as Batch;
      (bad[tensor] as Float32Array)[index] = value;
      const args = [bad.logp, bad.oldLogp, bad.advantages, bad.mask, 2, 4, {}] as const;
      expect(() => policyLoss(...args)).toThrow(OpInputError);
      await expect(policyLossGpu(device, ...args)).rejects.toThrow(OpInputError);
      await expect(policyLossGpu(device, ...args)).rejects.toThrow(pattern);
    }
  });

  it('rejects bad shapes, masks and options before any dispatch', async () => {
    const b = randomBatch(2, 4, 3);
    const created = device.pool.stats().created;
    await expect(
      policyLossGpu(device, b.logp, b.oldLogp, b.advantages.slice(1), b.mask, 2, 4),
    ).rejects.toThrow(/advantages must have rows × cols = 2 × 4 = 8 elements, got 7/);
    const halfMask = b.mask.slice();
    halfMask[3] = 0.5;
    await expect(
      policyLossGpu(device, b.logp, b.oldLogp, b.advantages, halfMask, 2, 4),
    ).rejects.toThrow(/mask must be 0 or 1, but index 3/);
    await expect(
      policyLossGpu(device, b.logp, b.oldLogp, b.advantages, b.mask, 2, 4, { dualClip: 1 }),
    ).rejects.toThrow(OpInputError);
    expect(device.pool.stats().created).toBe(created);
  });
});
