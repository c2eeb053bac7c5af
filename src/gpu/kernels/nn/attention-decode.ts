/**
 * GPU wrapper for kernels/nn/attention_decode.wgsl, one KV-cache decoding step of causal
 * multi-head attention. CPU twin: src/ops/nn/attention-decode.ts.
 *
 * Shapes: B = batch, C = channels, NH = heads, hs = C / NH, S = maxSeq.
 * Dispatch: one invocation per (b, h), B·NH invocations in workgroups of 64 spread over (x, y).
 */
import source from '../../../../kernels/nn/attention_decode.wgsl?raw';
import {
  type DecodeShape,
  checkAttentionDecodeInput,
  checkDecodeShape,
} from '../../../ops/nn/attention-decode';
import type { BufferRef, CommandBatch } from '../../batch';
import type { GpuContext } from '../../context';
import { defineKernel } from '../../kernel';
import { reflectConstant } from '../../wgsl-reflect';
import { invocationGrid } from '../advantage-dispatch';
import { PooledBuffers } from '../run-convenience';
import { type AttentionGpuOptions, checkRef, resolveAttentionWorkgroupSize } from './attention';
import { ATTENTION_LIMITS } from '../../../ops/nn/attention';

/**
 * The kernel keeps a row of scores in a private array of MAX_SEQ floats (a WGSL array that must
 * have a constant size); the op accepts sequences up to ATTENTION_LIMITS.maxSeq. Checked at load.
 */
const KERNEL_MAX_SEQ = reflectConstant(source, 'MAX_SEQ');
if (KERNEL_MAX_SEQ < ATTENTION_LIMITS.maxSeq) {
  throw new Error(
    `attention_decode.wgsl: MAX_SEQ = ${KERNEL_MAX_SEQ} is below ATTENTION_LIMITS.maxSeq = ` +
      `${ATTENTION_LIMITS.maxSeq}`,
  );
}

export const attentionDecodeKernel = defineKernel({
  name: 'attention_decode',
  source,
  uniforms: [
    { name: 'groups', type: 'u32' },
    { name: 'heads', type: 'u32' },
    { name: 'channels', type: 'u32' },
    { name: 'max_seq', type: 'u32' },
    { name: 'pos', type: 'u32' },
    { name: 'scale', type: 'f32' },
  ],
  storage: [
    { name: 'qkv_step', access: 'read' },
    { name: 'k_cache', access: 'read_write' },
    { name: 'v_cache', access: 'read_write' },
    { name: 'out', access: 'read_write' },
  ],
});

/**
 * Records one decoding step: writes k, v of `pos` from qkvStep (B, 3C) into kCache and vCache
 * (B, NH, maxSeq, hs), then out (B, C) = attention of q at `pos` over cached positions 0 … pos.
 * kCache and vCache must not overlap (both are written).
 */
export async function encodeAttentionDecode(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { qkvStep: BufferRef; kCache: BufferRef; vCache: BufferRef; out: BufferRef },
  pos: number,
  shape: DecodeShape,
  options: AttentionGpuOptions = {},
): Promise<void> {
  const op = 'attentionDecode';
  const hs = checkDecodeShape(shape, pos);
  const { batch: B, heads: NH, channels: C, maxSeq: S } = shape;
  checkRef(gpu, op, 'qkvStep', buffers.qkvStep, B * 3 * C);
  checkRef(gpu, op, 'kCache', buffers.kCache, B * NH * S * hs);
  checkRef(gpu, op, 'vCache', buffers.vCache, B * NH * S * hs);
  checkRef(gpu, op, 'out', buffers.out, B * C);
  const WORKGROUP_SIZE = resolveAttentionWorkgroupSize(op, options);
  const pipeline = await gpu.pipelines.get(attentionDecodeKernel, { WORKGROUP_SIZE });
  const groups = B * NH;
  batch.dispatch(attentionDecodeKernel, {
    pipeline,
    buffers: {
      qkv_step: buffers.qkvStep,
      k_cache: buffers.kCache,
      v_cache: buffers.vCache,
      out: buffers.out,
    },
    uniforms: { groups, heads: NH, channels: C, max_seq: S, pos, scale: 1 / Math.sqrt(hs) },
    workgroups: invocationGrid(gpu, groups, WORKGROUP_SIZE),
  });
}

/**
 * Convenience path with the CPU op's semantics: kCache and vCache are updated in place (read back
 * from the GPU), out (B, C) is returned. One sync point.
 */
export async function attentionDecodeGpu(
  gpu: GpuContext,
  qkvStep: Float32Array,
  kCache: Float32Array,
  vCache: Float32Array,
  pos: number,
  shape: DecodeShape,
  options: AttentionGpuOptions = {},
): Promise<Float32Array> {
  checkAttentionDecodeInput(qkvStep, kCache, vCache, pos, shape);
  const { batch: B, channels: C } = shape;
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      qkvStep: pooled.upload(qkvStep, 'qkvStep'),
      kCache: pooled.upload(kCache, 'kCache'),
      vCache: pooled.upload(vCache, 'vCache'),
      out: pooled.storage(B * C, 'attention out'),
    };
    const batch = gpu.beginBatch('attentionDecode');
    await encodeAttentionDecode(gpu, batch, buffers, pos, shape, options);
    batch.submit();
    const [out, k, v] = await Promise.all([
      gpu.readF32(buffers.out, B * C),
      gpu.readF32(buffers.kCache, kCache.length),
      gpu.readF32(buffers.vCache, vCache.length),
    ]);
    kCache.set(k);
    vCache.set(v);
    return out;
  } finally {
    pooled.release();
  }
}
