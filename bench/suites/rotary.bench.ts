/**
 * Rotary position embeddings (kernels/nn/rotary.wgsl through encodeRotary) against
 * rotaryForward / rotaryBackward (src/ops/nn/rotary.ts), forward and inverse (the backward), on
 * the lab's tiny rotary models and on a SmolLM2-135M-like attention input.
 */
import { encodeRotary, rotaryTableF32 } from '../../src/gpu/kernels/nn/rotary';
import { PooledBuffers } from '../../src/gpu/kernels/run-convenience';
import { rotaryBackward, rotaryForward, rotaryTable } from '../../src/ops/nn/rotary';
import { uniformF32 } from '../../src/util/random';
import type { BenchSuite } from '../core/types';
import { type OpCase, runOpSuite } from './gpu-vs-cpu';

const GPU = 'rotary.wgsl';
const CPU = 'CPU reference (JS, f64)';

interface RotaryBenchShape {
  B: number;
  T: number;
  NH: number;
  hs: number;
  /** rope_theta: 10,000 for the lab's models, 100,000 for SmolLM2. */
  base: number;
}

/**
 * Tiny: C 64 = 4 heads × 16, context 32 (the transformer-step suite's first config), at 64 rows
 * (B 2) and at its training batch (B 64). SmolLM2-135M: C 576 = 9 heads × 64, T 256, B 1 and 8.
 */
function shapes(quick: boolean): RotaryBenchShape[] {
  const tiny = { T: 32, NH: 4, hs: 16, base: 10_000 };
  const smol = { T: 256, NH: 9, hs: 64, base: 100_000 };
  if (quick) return [{ B: 2, ...tiny }];
  return [
    { B: 2, ...tiny },
    { B: 64, ...tiny },
    { B: 1, ...smol },
    { B: 8, ...smol },
  ];
}

/** One shape, one direction: dir 1 the forward, −1 the inverse (rotaryBackward on dqkv). */
function rotaryCase(s: RotaryBenchShape, dir: 1 | -1): OpCase {
  const { B, T, NH, hs, base } = s;
  const C = NH * hs;
  const half = hs / 2;
  const shape = { batch: B, seq: T, heads: NH, channels: C };
  const table = rotaryTable(T, hs, base); // cos, sin: (T, half) f64
  const qkv = uniformF32(B * T * 3 * C, 1, 7 * C + B + (dir > 0 ? 0 : 1)); // (B, T, 3C)
  const cpuOp = dir > 0 ? rotaryForward : rotaryBackward;
  return {
    shape: { B, T, NH, hs, dir },
    // Per (row, head, frequency): two q and two k elements read and written, one cos and one sin
    // read: 10 f32 over B·T·NH·half invocations (v is not touched).
    bytes: 10 * B * T * NH * half * 4,
    cpu: () => [cpuOp(qkv, table, shape)],
    gpu: (gpu) => {
      const pooled = new PooledBuffers(gpu);
      const f32 = rotaryTableF32(table);
      const buffers = {
        qkv: pooled.upload(qkv, 'bench rotary qkv'),
        cos: pooled.upload(f32.cos, 'bench rotary cos'),
        sin: pooled.upload(f32.sin, 'bench rotary sin'),
      };
      const kernelShape = { ...shape, half, positions: T };
      return {
        // In place, as the model runs it: the first launch is validated; later ones rotate the
        // already rotated qkv again (orthogonal, so values stay in range; the work is the same).
        encode: (batch) => encodeRotary(gpu, batch, buffers, kernelShape, { inverse: dir < 0 }),
        readAll: async () => [await gpu.readF32(buffers.qkv, qkv.length)],
        probe: buffers.qkv,
        dispose: () => pooled.release(),
      };
    },
  };
}

export const rotarySuite: BenchSuite = {
  name: 'rotary',
  run: (ctx) =>
    runOpSuite(ctx, {
      name: 'rotary',
      title:
        'rotary: qkv (B·T, 3·NH·hs) f32 → q, k rotated to their positions (dir 1) or back (dir −1)',
      gpuImpl: GPU,
      cpuImpl: CPU,
      notes: [
        `${GPU}: encodeRotary (kernels/nn/rotary.wgsl), in place on the resident qkv; one invocation per (row, head, frequency), f32 cos/sin tables (T, hs/2) uploaded once.`,
        `${CPU}: rotaryForward (dir 1) / rotaryBackward (dir −1) from src/ops/nn/rotary.ts on the same qkv and f64 table; it returns a new array (v copied too).`,
        "Shapes: the lab's tiny rotary model (C 64 = 4 heads × 16, T 32) at B 2 (64 rows) and B 64 (its training batch); SmolLM2-135M-like (C 576 = 9 heads × 64, T 256, rope_theta 100,000) at B 1 and B 8.",
        'Bytes: q and k read and written, one cos and one sin per (row, head, frequency): 10·B·T·NH·(hs/2)·4.',
      ],
      cases: (quick) => shapes(quick).flatMap((s) => [rotaryCase(s, 1), rotaryCase(s, -1)]),
      // The bound of tests/gpu/nn/rotary.gpu.test.ts for values in [−1, 1): f32 table rounding,
      // two products and a sum against the f64 result rounded once, ≤ 4√2·2^-24 ≈ 3.4e-7.
      tolerance: 4e-7,
      reps: { max: 9, budgetMs: 3000 },
    }),
};
