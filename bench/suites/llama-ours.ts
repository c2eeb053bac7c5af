/**
 * Our engine's rows of the real-shape Llama bench (llama-peer.bench.ts times the ORT peer beside
 * them on the same shapes and seeded weights): the Llama GPU model (src/models/hf/llama-gpu*.ts)
 * with f16 weights, timed as the peer is — prefill (B, T) → logits on the GPU, and one decode step
 * (B, 1) after a KV cache of P positions → logits, no readback and no sampling in the timed run.
 */
import type { GpuContext } from '../../src/gpu/context';
import { llamaForward } from '../../src/models/hf/llama-cpu';
import { llamaModelFromWeights, llamaTensorEntries } from '../../src/models/hf/llama-cpu-weights';
import { LlamaWorkspace, recordHead, recordTrunk } from '../../src/models/hf/llama-gpu';
import { uploadRotaryTable } from '../../src/models/hf/llama-gpu-ops';
import { GpuLimitError } from '../../src/gpu/errors';
import { MemoryPlanError } from '../../src/models/hf/memory-plan';
import {
  type LlamaGpuWeights,
  llamaGpuWeightsFromTensors,
} from '../../src/models/hf/llama-gpu-weights';
import type { ModelSpec } from '../../src/models/model-spec';
import { rotaryTable } from '../../src/ops/nn/rotary';
import { roundToF16 } from '../../src/util/half-float';
import { seededRandom } from '../../src/util/random';
import { measure } from '../core/measure';
import { formatMs } from '../core/stats';
import type { BenchContext, Measurement } from '../core/types';
import { randomLlamaTensor } from '../onnx/random-llama-weights';

export const OURS_IMPL = 'ours (WGSL, f16 weights)';

/** The CPU twin checks the prefill logits (row 0, last position) up to this many parameters. */
const REFERENCE_MAX_PARAMS = 60e6;

interface Plan {
  prompt: number;
  past: number;
  reps: { max: number; budgetMs: number };
}

/** Records one pass of `ws` (B × T new rows after `past` cached ones) up to the logits. */
async function recordPass(
  gpu: GpuContext,
  weights: LlamaGpuWeights,
  ws: LlamaWorkspace,
  table: ReturnType<typeof uploadRotaryTable>,
  caches: { k: GPUBuffer[]; v: GPUBuffer[]; capacity: number; past: number } | undefined,
): Promise<void> {
  const batch = gpu.beginBatch('llama bench pass');
  await recordTrunk(gpu, batch, weights, ws, table, caches ? { caches } : {});
  await recordHead(gpu, batch, weights, ws);
  batch.submit();
  await gpu.device.queue.onSubmittedWorkDone();
}

export async function benchOurs(
  ctx: BenchContext,
  spec: ModelSpec,
  seed: number,
  batches: readonly number[],
  plan: Plan,
  shapeOf: (batch: number, seq: number, past: number) => Record<string, number>,
): Promise<{ rows: Measurement[]; note: string }> {
  const { gpu } = ctx;
  const started = performance.now();
  let weights: LlamaGpuWeights;
  try {
    weights = llamaGpuWeightsFromTensors(gpu, spec, (e) => randomLlamaTensor(seed, e), 'f16');
  } catch (error) {
    // Matrices over the device's binding are split by rows (Qwen2.5-0.5B's 272 MB embedding on
    // an adapter that binds 128 MiB); what still cannot load (a vector, or one row, over a
    // binding) makes every row of this model say why instead of the suite failing.
    if (!(error instanceof GpuLimitError) && !(error instanceof MemoryPlanError)) throw error;
    const reason = `not loaded: ${error.message}`;
    const rows = [false, true].flatMap((decode) =>
      batches.map((B): Measurement => ({
        impl: OURS_IMPL,
        shape: shapeOf(B, decode ? 1 : plan.prompt, decode ? plan.past : 0),
        status: 'skipped',
        reason,
        bytes: 0,
      })),
    );
    return { rows, note: `ours: ${reason}` };
  }
  const loadMs = performance.now() - started;
  const table = uploadRotaryTable(
    gpu,
    rotaryTable(plan.prompt + plan.past + 1, spec.headDim, spec.rotaryBase),
  );
  const random = seededRandom(spec.layers * 1000 + spec.width + 7);
  const params = weights.bytes / 2;
  const rows: Measurement[] = [];
  try {
    for (const decode of [false, true]) {
      for (const B of batches) {
        const T = decode ? 1 : plan.prompt;
        const P = decode ? plan.past : 0;
        const ws = new LlamaWorkspace(gpu, spec, B, T);
        const capacity = P + 1;
        const kvBytes = B * capacity * spec.kvHeads * spec.headDim * 4;
        const k = decode ? Array.from({ length: spec.layers }, () => gpu.storage(kvBytes)) : [];
        const v = decode ? Array.from({ length: spec.layers }, () => gpu.storage(kvBytes)) : [];
        const caches = decode ? { k, v, capacity, past: P } : undefined;
        const tokens = Int32Array.from({ length: B * T }, () => Math.floor(random() * spec.vocab));
        gpu.device.queue.writeBuffer(ws.tokens, 0, tokens);
        gpu.device.queue.writeBuffer(
          ws.positions,
          0,
          Uint32Array.from({ length: B * T }, (_, r) => P + (r % T)),
        );
        let error = 0;
        try {
          rows.push(
            await measure({
              impl: OURS_IMPL,
              shape: shapeOf(B, T, P),
              bytes: 0,
              tolerance: 3e-2,
              reps: plan.reps,
              log: ctx.log,
              error: () => error,
              prepare: async () => {
                await recordPass(gpu, weights, ws, table, caches);
                error = await lastLogitsError(
                  gpu,
                  spec,
                  seed,
                  ws,
                  decode ? undefined : tokens.subarray(0, T),
                  params,
                );
                return {
                  run: () => recordPass(gpu, weights, ws, table, caches),
                  dispose: () => {},
                };
              },
            }),
          );
        } finally {
          ws.release();
          for (const buffer of [...k, ...v]) gpu.pool.release(buffer);
        }
      }
    }
  } finally {
    table.release();
    weights.release();
  }
  const note = `ours: weights made and uploaded as f16 in ${formatMs(loadMs)} (${(weights.bytes / 2 ** 20).toFixed(0)} MiB on the GPU)`;
  return { rows, note };
}

/**
 * Row 0's last-position logits against the CPU twin where a CPU reference is affordable (a
 * prefill of a model up to REFERENCE_MAX_PARAMS, weights rounded to f16 as stored), else 0 if
 * they are finite and Infinity if not. Reads V logits back, never the whole (B·T, V).
 */
async function lastLogitsError(
  gpu: GpuContext,
  spec: ModelSpec,
  seed: number,
  ws: LlamaWorkspace,
  row0: Int32Array | undefined,
  params: number,
): Promise<number> {
  const V = spec.vocab;
  const staging = gpu.storage(V * 4, 'bench logits row');
  try {
    const batch = gpu.beginBatch('bench logits row');
    batch.copyRange(ws.logits, (ws.seq - 1) * V * 4, staging, 0, V * 4);
    batch.submit();
    const logits = await gpu.readF32(staging, V);
    if (!logits.every(Number.isFinite)) return Infinity;
    if (!row0 || params > REFERENCE_MAX_PARAMS) return 0;
    const model = llamaModelFromWeights(
      spec,
      new Map(
        llamaTensorEntries(spec).map((e) => [e.name, roundToF16(randomLlamaTensor(seed, e))]),
      ),
    );
    const cpu = llamaForward(model, row0, 1, row0.length).logits.subarray((row0.length - 1) * V);
    let worst = 0;
    for (let i = 0; i < V; i++) worst = Math.max(worst, Math.abs(cpu[i]! - logits[i]!));
    return worst;
  } finally {
    gpu.pool.release(staging);
  }
}
