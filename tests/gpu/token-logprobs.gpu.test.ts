/**
 * Parity of kernels/token_logprobs.wgsl (and its entropy-only variant) and
 * kernels/token_logprobs_backward.wgsl with their CPU twins; runs in Node (Dawn) and in Chromium.
 */
import { describe, expect, it } from 'vitest';
import type { GpuContext } from '../../src/gpu';
import {
  encodeEntropyFromLogits,
  encodeTokenLogprobs,
  entropyFromLogitsGpu,
  entropyStatus,
  tokenLogprobsGpu,
  tokenLogprobsStatus,
  type TokenLogprobsGpuOptions,
} from '../../src/gpu/kernels/token-logprobs';
import {
  encodeTokenLogprobsBackward,
  tokenLogprobsBackwardGpu,
  tokenLogprobsBackwardStatus,
} from '../../src/gpu/kernels/token-logprobs-backward';
import { OpInputError } from '../../src/ops';
import { entropyFromLogits } from '../../src/ops/entropy';
import { tokenLogprobs, tokenLogprobsBackward } from '../../src/ops/token-logprobs';
import { testGpu } from '../support/gpu';
import { maxAbsDiff, randomLogits, seededRandom } from '../support/random';

const gpu = await testGpu();

function randomTargets(rows: number, cols: number, seed: number): Int32Array {
  const next = seededRandom(seed);
  return Int32Array.from({ length: rows }, () => Math.floor(next() * cols));
}

/** Largest |a − b| / (1 + |b|): log-probs grow with the logits, so compare relative to size. */
function maxScaledDiff(a: Float32Array, b: Float32Array): number {
  let max = 0;
  for (let i = 0; i < b.length; i++) {
    max = Math.max(max, Math.abs(a[i]! - b[i]!) / (1 + Math.abs(b[i]!)));
  }
  return max;
}

/** Runs the forward kernel on resident buffers with a status buffer; returns logp after check(). */
async function runResidentForward(
  device: GpuContext,
  logits: Float32Array,
  targets: Int32Array,
  rows: number,
  cols: number,
  options: TokenLogprobsGpuOptions = {},
): Promise<Float32Array> {
  const status = tokenLogprobsStatus(device, cols);
  const input = device.upload(logits);
  const ids = device.upload(targets);
  const logp = device.storage(rows * 4);
  const entropy = device.storage(rows * 4);
  try {
    const batch = device.beginBatch('test');
    const buffers = { logits: input, targets: ids, logp, entropy, status: status.buffer };
    await encodeTokenLogprobs(device, batch, buffers, rows, cols, options);
    batch.submit();
    await status.check();
    return await device.readF32(logp, rows);
  } finally {
    for (const b of [input, ids, logp, entropy]) device.pool.release(b);
    status.release();
  }
}

/** Runs the backward kernel on resident buffers with a status buffer, then checks the status. */
async function runResidentBackward(
  device: GpuContext,
  logitsData: Float32Array,
  targetsData: number[],
  dLogpData: number[],
  dEntropyData: number[],
  cols: number,
): Promise<void> {
  const rows = targetsData.length;
  const status = tokenLogprobsBackwardStatus(device, cols);
  const logits = device.upload(logitsData);
  const targets = device.upload(Int32Array.from(targetsData));
  const dLogp = device.upload(Float32Array.from(dLogpData));
  const dEntropy = device.upload(Float32Array.from(dEntropyData));
  const dLogits = device.storage(rows * cols * 4);
  try {
    const batch = device.beginBatch('test');
    const buffers = { logits, targets, dLogp, dEntropy, dLogits, status: status.buffer };
    await encodeTokenLogprobsBackward(device, batch, buffers, rows, cols);
    batch.submit();
    await status.check();
  } finally {
    for (const b of [logits, targets, dLogp, dEntropy, dLogits]) device.pool.release(b);
    status.release();
  }
}

describe.skipIf(!gpu)('token_logprobs kernel vs CPU reference', () => {
  const device = gpu!;

  it.each([
    [1, 1, 1],
    [1, 3, 1],
    [3, 255, 1],
    [5, 256, 0.7],
    [7, 257, 1],
    [64, 1000, 1.3],
    [4, 65536, 1],
  ])('matches on %i × %i at temperature %f', async (rows, cols, temperature) => {
    const logits = randomLogits(rows * cols, 8, rows * 1000 + cols);
    const targets = randomTargets(rows, cols, rows + cols);
    const expected = tokenLogprobs(logits, targets, rows, cols, { temperature });
    const actual = await tokenLogprobsGpu(device, logits, targets, rows, cols, { temperature });
    expect(maxScaledDiff(actual.logp, expected.logp)).toBeLessThan(2e-5);
    expect(maxAbsDiff(actual.entropy!, expected.entropy!)).toBeLessThan(5e-5);
  });

  it('covers more rows than one grid dimension holds (2D dispatch)', async () => {
    const rows = 70_000; // > 65,535 workgroups per dimension
    const cols = 3;
    const logits = randomLogits(rows * cols, 4, 3);
    const targets = randomTargets(rows, cols, 4);
    const expected = tokenLogprobs(logits, targets, rows, cols);
    const actual = await tokenLogprobsGpu(device, logits, targets, rows, cols, {
      workgroupSize: 32,
    });
    expect(maxScaledDiff(actual.logp, expected.logp)).toBeLessThan(2e-6);
    expect(maxAbsDiff(actual.entropy!, expected.entropy!)).toBeLessThan(2e-6);
  });

  it('matches on 10 random shapes and temperatures (seeded)', async () => {
    const next = seededRandom(2025);
    for (let trial = 0; trial < 10; trial++) {
      const rows = 1 + Math.floor(next() * 40);
      const cols = 1 + Math.floor(next() * 3000);
      const temperature = 0.3 + next() * 3;
      const logits = randomLogits(rows * cols, 1 + next() * 30, trial);
      const targets = randomTargets(rows, cols, trial + 100);
      const options = { temperature };
      const expected = tokenLogprobs(logits, targets, rows, cols, options);
      const actual = await tokenLogprobsGpu(device, logits, targets, rows, cols, options);
      const shape = `${rows} × ${cols}, T = ${temperature}`;
      expect(maxScaledDiff(actual.logp, expected.logp), shape).toBeLessThan(5e-5);
      expect(maxAbsDiff(actual.entropy!, expected.entropy!), shape).toBeLessThan(1e-4);
    }
  });

  it('is accurate for logits of magnitude 1e4', async () => {
    const rows = 4;
    const cols = 4096;
    const logits = randomLogits(rows * cols, 1e4, 99);
    logits[17] = 1e4;
    logits[cols + 5] = -1e4;
    const targets = new Int32Array([17, 5, 0, 4095]);
    for (const temperature of [1, 2.5]) {
      const expected = tokenLogprobs(logits, targets, rows, cols, { temperature });
      const actual = await tokenLogprobsGpu(device, logits, targets, rows, cols, { temperature });
      // log-probs reach −2e4 here; f32 spacing at 2e4 is ~2e-3, so compare relative to magnitude.
      for (let n = 0; n < rows; n++) {
        expect(Math.abs(actual.logp[n]! - expected.logp[n]!)).toBeLessThanOrEqual(
          4e-3 + Math.abs(expected.logp[n]!) * 2e-7,
        );
        expect(Number.isFinite(actual.entropy![n]!)).toBe(true);
        expect(Math.abs(actual.entropy![n]! - expected.entropy![n]!)).toBeLessThan(1e-4);
      }
    }
  });

  // 777 columns take the scalar reads, 776 the vec4 reads (kernels/lib/row_reads_*.wgsl).
  it.each([777, 776])(
    'gives the same log-probs without the entropy, and for every workgroup size (%i columns)',
    async (cols) => {
      const rows = 9;
      const logits = randomLogits(rows * cols, 6, 5);
      const targets = randomTargets(rows, cols, 6);
      const reference = await tokenLogprobsGpu(device, logits, targets, rows, cols, {
        workgroupSize: 256,
      });
      const bare = await tokenLogprobsGpu(device, logits, targets, rows, cols, {
        withEntropy: false,
      });
      expect(bare.entropy).toBeUndefined();
      expect(maxAbsDiff(bare.logp, reference.logp)).toBeLessThan(2e-6);
      for (const workgroupSize of [32, 64, 128] as const) {
        const out = await tokenLogprobsGpu(device, logits, targets, rows, cols, { workgroupSize });
        expect(maxAbsDiff(out.logp, reference.logp)).toBeLessThan(2e-6);
        expect(maxAbsDiff(out.entropy!, reference.entropy!)).toBeLessThan(2e-6);
      }
    },
  );

  it('computes the entropy alone with the same kernel', async () => {
    for (const [rows, cols, temperature] of [
      [1, 1, 1],
      [7, 257, 0.8],
      [3, 4096, 1.5],
    ] as const) {
      const logits = randomLogits(rows * cols, 8, cols);
      const expected = entropyFromLogits(logits, rows, cols, { temperature });
      const actual = await entropyFromLogitsGpu(device, logits, rows, cols, { temperature });
      expect(maxAbsDiff(actual, expected), `${rows} × ${cols}`).toBeLessThan(5e-5);
    }
  });
});

describe.skipIf(!gpu)('token_logprobs_backward kernel vs CPU reference', () => {
  const device = gpu!;

  it.each([
    [1, 1, 1, true],
    [3, 255, 1, true],
    [7, 257, 0.6, false],
    [64, 1000, 1.4, true],
    [4, 65536, 1, true],
    [70_000, 3, 2, true],
  ])(
    'matches on %i × %i at temperature %f (dEntropy: %s)',
    async (rows, cols, temperature, withEntropy) => {
      const logits = randomLogits(rows * cols, 8, rows + 7 * cols);
      const targets = randomTargets(rows, cols, rows * 3 + cols);
      const dLogp = randomLogits(rows, 2, 11);
      const dEntropy = withEntropy ? randomLogits(rows, 2, 12) : undefined;
      const options = { temperature };
      const expected = tokenLogprobsBackward(logits, targets, dLogp, dEntropy, rows, cols, options);
      const actual = await tokenLogprobsBackwardGpu(
        device,
        logits,
        targets,
        dLogp,
        dEntropy,
        rows,
        cols,
        options,
      );
      expect(maxAbsDiff(actual, expected)).toBeLessThan(2e-5);
    },
  );

  it('matches for logits of magnitude 1e4', async () => {
    const rows = 3;
    const cols = 2048;
    const logits = randomLogits(rows * cols, 1e4, 41);
    logits[3] = 1e4;
    logits[cols + 3] = 1e4 - 0.5; // a near tie keeps both gradient terms non-trivial
    logits[cols + 9] = 1e4;
    const targets = new Int32Array([3, 9, 100]);
    const dLogp = new Float32Array([1, -0.5, 2]);
    const dEntropy = new Float32Array([0.3, 1, -1]);
    const expected = tokenLogprobsBackward(logits, targets, dLogp, dEntropy, rows, cols);
    const actual = await tokenLogprobsBackwardGpu(
      device,
      logits,
      targets,
      dLogp,
      dEntropy,
      rows,
      cols,
    );
    expect(maxAbsDiff(actual, expected)).toBeLessThan(2e-5);
  });
});

describe.skipIf(!gpu)('token log-probs reject bad input on the GPU', () => {
  const device = gpu!;

  it('convenience paths reject what the CPU reference rejects, before any dispatch', async () => {
    const created = device.pool.stats().created;
    const logits = new Float32Array([1, NaN, 0, 2]);
    const targets = new Int32Array([0, 1]);
    const call = tokenLogprobsGpu(device, logits, targets, 2, 2);
    await expect(call).rejects.toThrow(OpInputError);
    await expect(tokenLogprobsGpu(device, logits, targets, 2, 2)).rejects.toThrow(
      /logits must be finite, but index 1 \(row 0, col 1\) is NaN/,
    );
    await expect(
      tokenLogprobsGpu(device, new Float32Array(4), new Int32Array([0, 2]), 2, 2),
    ).rejects.toThrow(/targets must be token ids in \[0, 2\).*row 1 has 2/);
    await expect(
      entropyFromLogitsGpu(device, new Float32Array(4), 2, 2, { temperature: 0 }),
    ).rejects.toThrow(/temperature must be in \(0, ∞\)/);
    await expect(
      tokenLogprobsBackwardGpu(
        device,
        new Float32Array(4),
        targets,
        new Float32Array([0, Infinity]),
        undefined,
        2,
        2,
      ),
    ).rejects.toThrow(/dLogp must be finite, but index 1 is Infinity/);
    expect(device.pool.stats().created).toBe(created);
  });

  it('rejects a bad workgroup size and resident buffers too small for the shape', async () => {
    const input = device.upload(new Float32Array(8));
    const ids = device.upload(new Int32Array(2));
    const small = device.storage(4);
    try {
      const batch = device.beginBatch('test');
      const buffers = { logits: input, targets: ids, logp: small, entropy: small };
      await expect(
        encodeTokenLogprobs(device, batch, buffers, 2, 4, {
          workgroupSize: 48 as unknown as 32,
        }),
      ).rejects.toThrow(/workgroupSize must be one of 32, 64, 128, 256, got 48/);
      // 2 × 4 fits, 3 × 400 logits do not fit the 256-byte pooled logits buffer.
      await expect(encodeTokenLogprobs(device, batch, buffers, 3, 400)).rejects.toThrow(
        /tokenLogprobs: logits buffer must hold 4800 bytes, has 256/,
      );
      await expect(
        encodeTokenLogprobs(device, batch, { ...buffers, entropy: undefined }, 2, 4),
      ).rejects.toThrow(/entropy buffer is required unless withEntropy is false/);
    } finally {
      for (const b of [input, ids, small]) device.pool.release(b);
    }
  });

  it('flags non-finite resident logits, naming the first bad index', async () => {
    const rows = 6;
    const cols = 500;
    const logits = randomLogits(rows * cols, 5, 8);
    logits[2 * cols + 7] = NaN;
    logits[4 * cols + 1] = -Infinity;
    const run = runResidentForward(device, logits, randomTargets(rows, cols, 9), rows, cols);
    await expect(run).rejects.toThrow(OpInputError);
    await expect(
      runResidentForward(device, logits, randomTargets(rows, cols, 9), rows, cols),
    ).rejects.toThrow(/tokenLogprobs: logits must be finite, but index 1007 is not \(2 non-finite/);
  });

  // 64 threads × 4 quads: a full trip covers 1024 columns, so columns 2048.. go one per thread.
  // 2061 columns take the scalar reads, 2060 the vec4 reads (kernels/lib/row_reads_*.wgsl).
  it.each([2061, 2060])(
    'flags non-finite logits in full trips and in the columns left over (%i columns)',
    async (cols) => {
      const rows = 3;
      const logits = randomLogits(rows * cols, 5, 14);
      logits[cols + 2055] = Infinity; // a leftover column
      logits[2 * cols + 3] = NaN; // in a full trip
      // The same lane of a later quad of the same thread, in both read layouts: a negative there
      // must not mask the NaN's exponent bits.
      logits[2 * cols + 3 + 4 * 64] = -2;
      await expect(
        runResidentForward(device, logits, randomTargets(rows, cols, 15), rows, cols, {
          workgroupSize: 64,
        }),
      ).rejects.toThrow(
        new RegExp(`logits must be finite, but index ${cols + 2055} is not \\(2 non-finite`),
      );
    },
  );

  it('writes NaN log-prob and entropy for a row with a non-finite logit when trusted', async () => {
    // A training step passes no status buffer and learns of a bad row from these outputs; WGSL
    // does not promise that NaN propagates through max() and exp(), so the kernel writes it.
    const rows = 4;
    const cols = 2061;
    const logits = randomLogits(rows * cols, 3, 16);
    logits[cols + 3] = NaN; // row 1, in a full trip (64 threads: trips of 1024 columns)
    logits[2 * cols + 2050] = -Infinity; // row 2, a leftover column
    logits.fill(NaN, 3 * cols, 4 * cols); // row 3, every logit
    const input = device.upload(logits);
    const ids = device.upload(randomTargets(rows, cols, 17));
    const logp = device.storage(rows * 4);
    const entropy = device.storage(rows * 4);
    try {
      const batch = device.beginBatch('test');
      await encodeTokenLogprobs(
        device,
        batch,
        { logits: input, targets: ids, logp, entropy },
        rows,
        cols,
        { workgroupSize: 64 },
      );
      batch.submit();
      const [lp, ent] = [await device.readF32(logp, rows), await device.readF32(entropy, rows)];
      expect(Number.isFinite(lp[0]) && Number.isFinite(ent[0])).toBe(true);
      for (let r = 1; r < rows; r++) {
        expect(lp[r], `logp of row ${r}`).toBeNaN();
        expect(ent[r], `entropy of row ${r}`).toBeNaN();
      }
    } finally {
      for (const b of [input, ids, logp, entropy]) device.pool.release(b);
    }
  });

  it('flags resident targets outside [0, cols), naming the first bad row', async () => {
    const logits = randomLogits(5 * 4, 3, 10);
    const targets = new Int32Array([0, 3, 4, 1, -2]);
    const run = runResidentForward(device, logits, targets, 5, 4);
    await expect(run).rejects.toThrow(OpInputError);
    await expect(runResidentForward(device, logits, targets, 5, 4)).rejects.toThrow(
      /tokenLogprobs: targets must be token ids in \[0, 4\).*row 2 is not \(found on the GPU\)/,
    );
  });

  it('writes NaN for a bad target when the inputs are trusted (no status)', async () => {
    const input = device.upload(new Float32Array([0, 1, 2, 3]));
    const ids = device.upload(new Int32Array([1, 7]));
    const logp = device.storage(8);
    try {
      const batch = device.beginBatch('test');
      await encodeTokenLogprobs(device, batch, { logits: input, targets: ids, logp }, 2, 2, {
        withEntropy: false,
      });
      batch.submit();
      const out = await device.readF32(logp, 2);
      expect(out[0]).toBeCloseTo(-Math.log(1 + Math.exp(-1)), 5);
      expect(out[1]).toBeNaN();
    } finally {
      for (const b of [input, ids, logp]) device.pool.release(b);
    }
  });

  it('flags bad resident targets, dLogp and dEntropy in the backward pass', async () => {
    const rows = 4;
    const cols = 16;
    const logits = randomLogits(rows * cols, 3, 12);
    // Slots are reported in order (logits, targets, dLogp, dEntropy): the first flagged one wins.
    await expect(
      runResidentBackward(device, logits, [0, 1, 16, 3], [1, 1, NaN, 1], [0, 0, 0, 0], cols),
    ).rejects.toThrow(
      /tokenLogprobsBackward: targets must be token ids in \[0, 16\).*row 2 is not/,
    );
    await expect(
      runResidentBackward(device, logits, [0, 1, 2, 3], [1, 1, NaN, 1], [0, Infinity, 0, 0], cols),
    ).rejects.toThrow(/tokenLogprobsBackward: dLogp must be finite, but index 2 is not/);
    await expect(
      runResidentBackward(device, logits, [0, 1, 2, 3], [1, 1, 1, 1], [0, 0, 0, -Infinity], cols),
    ).rejects.toThrow(/tokenLogprobsBackward: dEntropy must be finite, but index 3 is not/);
  });

  it('flags non-finite resident logits in the entropy-only variant', async () => {
    const status = entropyStatus(device);
    const values = randomLogits(3 * 10, 3, 13);
    values[25] = Infinity;
    const logits = device.upload(values);
    const entropy = device.storage(3 * 4);
    try {
      const batch = device.beginBatch('test');
      await encodeEntropyFromLogits(
        device,
        batch,
        { logits, entropy, status: status.buffer },
        3,
        10,
      );
      batch.submit();
      await expect(status.check()).rejects.toThrow(
        /entropyFromLogits: logits must be finite, but index 25 is not/,
      );
    } finally {
      device.pool.release(logits);
      device.pool.release(entropy);
      status.release();
    }
  });
});
