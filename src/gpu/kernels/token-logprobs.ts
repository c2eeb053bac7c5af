/**
 * GPU wrappers for kernels/token_logprobs.wgsl: log-probs + entropy, or the entropy alone (the same
 * kernel with HAS_TARGETS = false). CPU twins: src/ops/token-logprobs.ts, src/ops/entropy.ts.
 * The backward pass is in token-logprobs-backward.ts and shares the helpers exported here.
 * Dispatch: one workgroup of WORKGROUP_SIZE threads per row, rows spread over (x, y).
 *
 * Resident inputs are validated on the GPU: non-finite logits (and dLogp / dEntropy in the backward
 * pass) and targets outside [0, cols) are counted in an input-status buffer (tokenLogprobsStatus()
 * and friends); pass its `.buffer` as `status` and `await status.check()` after submitting.
 * Without `status` the inputs are trusted: bad values then give NaN outputs, and no error.
 */
import forwardSource from '../../../kernels/token_logprobs.wgsl?raw';
import { checkEntropyInput, type EntropyOptions } from '../../ops/entropy';
import { OpInputError } from '../../ops/errors';
import {
  checkTokenLogprobsInput,
  resolveTemperature,
  type TokenLogprobs,
  type TokenLogprobsOptions,
} from '../../ops/token-logprobs';
import { checkInt } from '../../ops/validate';
import { type CommandBatch, workgroupGrid } from '../batch';
import type { GpuContext } from '../context';
import { INPUT_STATUS_WGSL, InputStatus, statusSlotsOf, type StatusSlot } from '../input-status';
import { defineKernel } from '../kernel';
import { ROW_READS_WGSL, type RowReads, rowReadsFor, WORKGROUP_REDUCE_WGSL } from '../wgsl-lib';
import { checkBindingSize } from './advantage-dispatch';
import { resolveRowWorkgroupSize, type RowWorkgroupSize } from './row-workgroup-size';
import { PooledBuffers, readChecked } from './run-convenience';

/** Params of both token log-prob kernels. */
export const ROW_UNIFORMS = [
  { name: 'rows', type: 'u32' },
  { name: 'cols', type: 'u32' },
  { name: 'temperature', type: 'f32' },
] as const;

function forwardKernel(reads: RowReads) {
  return defineKernel({
    name: `token_logprobs (${reads} reads)`,
    source: INPUT_STATUS_WGSL + WORKGROUP_REDUCE_WGSL + ROW_READS_WGSL[reads] + forwardSource,
    uniforms: ROW_UNIFORMS,
    storage: [
      { name: 'logits', access: 'read' },
      { name: 'targets', access: 'read' },
      { name: 'logp', access: 'read_write' },
      { name: 'entropy', access: 'read_write' },
      { name: 'status', access: 'read_write' },
    ],
  });
}

/** The forward kernel per row-read width; encodeForward picks by rowReadsFor(cols). */
export const tokenLogprobsKernels: Record<RowReads, ReturnType<typeof forwardKernel>> = {
  scalar: forwardKernel('scalar'),
  vec4: forwardKernel('vec4'),
};

/** GPU options: the CPU op's options plus the threads per row. */
export interface GpuRowOptions {
  /** Threads per row, a power of two. Default: chosen by defaultRowWorkgroupSize(). */
  workgroupSize?: RowWorkgroupSize;
}
export type TokenLogprobsGpuOptions = TokenLogprobsOptions & GpuRowOptions;
export type EntropyGpuOptions = EntropyOptions & GpuRowOptions;

const OP = 'tokenLogprobs';
const OP_ENTROPY = 'entropyFromLogits';

/** The kernels count out-of-range token ids in this slot and keep the first bad row as its index. */
export function targetsSlot(cols: number): StatusSlot {
  return {
    tensor: 'targets',
    problem: (row) =>
      `must be token ids in [0, ${cols}) (cols = vocabulary size), but row ${row} is not (found on the GPU)`,
  };
}

/** Status for encodeTokenLogprobs: slots logits (flat index), targets (row). */
export function tokenLogprobsStatus(gpu: GpuContext, cols: number): InputStatus {
  const slots = statusSlotsOf(forwardSource, { logits: 'logits', targets: targetsSlot(cols) });
  return new InputStatus(gpu, OP, slots);
}

/** Status for encodeEntropyFromLogits: slot logits (flat index). */
export function entropyStatus(gpu: GpuContext): InputStatus {
  return new InputStatus(gpu, OP_ENTROPY, ['logits']);
}

/**
 * Buffers bound where a variant of a kernel neither reads nor writes a binding (no targets for
 * entropy alone, no entropy output, no status, no dEntropy). One per role and device, so two of
 * them never alias within a dispatch; created once, freed with the device.
 */
const unusedBindings = new WeakMap<GpuContext, Map<string, GPUBuffer>>();

export function unusedBinding(gpu: GpuContext, role: string): GPUBuffer {
  let byRole = unusedBindings.get(gpu);
  if (!byRole) {
    byRole = new Map();
    unusedBindings.set(gpu, byRole);
  }
  let buffer = byRole.get(role);
  if (!buffer) {
    // 256 bytes: room for every status slot a kernel could touch.
    buffer = gpu.device.createBuffer({
      size: 256,
      usage: GPUBufferUsage.STORAGE,
      label: `unused ${role}`,
    });
    byRole.set(role, buffer);
  }
  return buffer;
}

/** Shape and buffer-size checks of a resident dispatch. */
export function checkRowShape(
  gpu: GpuContext,
  op: string,
  rows: number,
  cols: number,
  sizes: Record<string, [GPUBuffer | undefined, number]>,
): void {
  checkInt(op, 'rows', rows, 1, 2 ** 31 - 1);
  checkInt(op, 'cols', cols, 1, 2 ** 31 - 1);
  checkBindingSize(gpu, rows * cols, `${op} logits`);
  for (const [name, [buffer, needed]] of Object.entries(sizes)) {
    if (buffer && buffer.size < needed) {
      throw new OpInputError(op, name, `buffer must hold ${needed} bytes, has ${buffer.size}`);
    }
  }
}

interface ForwardVariant {
  logits: GPUBuffer;
  targets: GPUBuffer | undefined;
  logp: GPUBuffer | undefined;
  entropy: GPUBuffer | undefined;
  status: GPUBuffer | undefined;
}

async function encodeForward(
  gpu: GpuContext,
  batch: CommandBatch,
  op: string,
  buffers: ForwardVariant,
  rows: number,
  cols: number,
  options: { temperature?: number; workgroupSize?: RowWorkgroupSize },
): Promise<void> {
  const temperature = resolveTemperature(op, options);
  const workgroupSize = resolveRowWorkgroupSize(op, gpu.summary, cols, options.workgroupSize);
  checkRowShape(gpu, op, rows, cols, {
    logits: [buffers.logits, rows * cols * 4],
    targets: [buffers.targets, rows * 4],
    logp: [buffers.logp, rows * 4],
    entropy: [buffers.entropy, rows * 4],
  });
  const kernel = tokenLogprobsKernels[rowReadsFor(cols)];
  const pipeline = await gpu.pipelines.get(kernel, {
    WORKGROUP_SIZE: workgroupSize,
    HAS_TARGETS: buffers.targets ? 1 : 0,
    WITH_ENTROPY: buffers.entropy ? 1 : 0,
  });
  batch.dispatch(kernel, {
    pipeline,
    buffers: {
      logits: buffers.logits,
      targets: buffers.targets ?? unusedBinding(gpu, 'targets'),
      logp: buffers.logp ?? unusedBinding(gpu, 'logp'),
      entropy: buffers.entropy ?? unusedBinding(gpu, 'entropy'),
      status: buffers.status ?? unusedBinding(gpu, 'status'),
    },
    uniforms: { rows, cols, temperature },
    workgroups: workgroupGrid(rows, gpu.summary.limits.maxComputeWorkgroupsPerDimension),
  });
}

/**
 * Records token log-probs (and entropy unless `withEntropy` is false) of resident buffers.
 * logits: (rows, cols) f32; targets: (rows) i32; logp, entropy: (rows) f32;
 * status: from tokenLogprobsStatus(), or omitted for trusted inputs.
 */
export async function encodeTokenLogprobs(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: {
    logits: GPUBuffer;
    targets: GPUBuffer;
    logp: GPUBuffer;
    entropy?: GPUBuffer;
    status?: GPUBuffer;
  },
  rows: number,
  cols: number,
  options: TokenLogprobsGpuOptions = {},
): Promise<void> {
  const withEntropy = options.withEntropy ?? true;
  if (withEntropy && !buffers.entropy) {
    throw new OpInputError(OP, 'entropy', 'buffer is required unless withEntropy is false');
  }
  await encodeForward(
    gpu,
    batch,
    OP,
    { ...buffers, entropy: withEntropy ? buffers.entropy : undefined, status: buffers.status },
    rows,
    cols,
    options,
  );
}

/**
 * Records the entropy alone (the same kernel, HAS_TARGETS = false). logits: (rows, cols) f32;
 * entropy: (rows) f32; status: from entropyStatus(), or omitted for trusted inputs.
 */
export async function encodeEntropyFromLogits(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { logits: GPUBuffer; entropy: GPUBuffer; status?: GPUBuffer },
  rows: number,
  cols: number,
  options: EntropyGpuOptions = {},
): Promise<void> {
  await encodeForward(
    gpu,
    batch,
    OP_ENTROPY,
    { ...buffers, targets: undefined, logp: undefined, status: buffers.status },
    rows,
    cols,
    options,
  );
}

/**
 * Convenience path: check (same checks as the CPU reference), upload, run, read back. The results
 * and the input status are read back together: one sync point.
 */
export async function tokenLogprobsGpu(
  gpu: GpuContext,
  logits: Float32Array,
  targets: Int32Array,
  rows: number,
  cols: number,
  options: TokenLogprobsGpuOptions = {},
): Promise<TokenLogprobs> {
  checkTokenLogprobsInput(logits, targets, rows, cols, options);
  const withEntropy = options.withEntropy ?? true;
  const status = tokenLogprobsStatus(gpu, cols);
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      logits: pooled.upload(logits, 'logits'),
      targets: pooled.upload(targets, 'targets'),
      logp: pooled.storage(rows, 'logp'),
      entropy: withEntropy ? pooled.storage(rows, 'entropy') : undefined,
      status: status.buffer,
    };
    const batch = gpu.beginBatch(OP);
    await encodeTokenLogprobs(gpu, batch, buffers, rows, cols, options);
    batch.submit();
    const [logp, entropy] = await readChecked(gpu, status, [
      [buffers.logp, rows],
      buffers.entropy && [buffers.entropy, rows],
    ]);
    return { logp, entropy };
  } finally {
    pooled.release();
    status.release();
  }
}

/** Convenience path for the entropy alone: check, upload, run, read back (one sync point). */
export async function entropyFromLogitsGpu(
  gpu: GpuContext,
  logits: Float32Array,
  rows: number,
  cols: number,
  options: EntropyGpuOptions = {},
): Promise<Float32Array> {
  checkEntropyInput(logits, rows, cols, options);
  const status = entropyStatus(gpu);
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      logits: pooled.upload(logits, 'logits'),
      entropy: pooled.storage(rows, 'entropy'),
      status: status.buffer,
    };
    const batch = gpu.beginBatch(OP_ENTROPY);
    await encodeEntropyFromLogits(gpu, batch, buffers, rows, cols, options);
    batch.submit();
    const [entropy] = await readChecked(gpu, status, [[buffers.entropy, rows]]);
    return entropy;
  } finally {
    pooled.release();
    status.release();
  }
}
