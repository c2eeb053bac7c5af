/**
 * GPU wrappers for kernels/nn/add.wgsl (out = a + b) and kernels/nn/add_into.wgsl (acc += x);
 * CPU twins: src/ops/nn/add.ts. Dispatch: one element per invocation, ceil(count / 256)
 * workgroups over (x, y). One read of each input and one write per element (add_into: acc read
 * and written).
 *
 * Bindings: WebGPU rejects a dispatch that binds one buffer writable and also in any other way,
 * even at disjoint ranges (checked on Dawn: "includes writable usage and another usage in the
 * same synchronization scope"). So outputs live in another buffer than inputs; several outputs
 * may share one buffer.
 */
import addSource from '../../../../kernels/nn/add.wgsl?raw';
import addIntoSource from '../../../../kernels/nn/add_into.wgsl?raw';
import { OpInputError } from '../../../ops/errors';
import { checkAddInput, checkAddIntoInput } from '../../../ops/nn/add';
import { checkInt } from '../../../ops/validate';
import type { BufferRef, CommandBatch } from '../../batch';
import type { GpuContext } from '../../context';
import { defineKernel } from '../../kernel';
import { checkBindingSize, invocationGrid } from '../advantage-dispatch';
import { PooledBuffers } from '../run-convenience';

/** Threads per workgroup of the elementwise kernels (add, add_into, activations). */
export const ELEMENTWISE_WORKGROUP_SIZE = 256;

export const addKernel = defineKernel({
  name: 'add',
  source: addSource,
  uniforms: [{ name: 'count', type: 'u32' }],
  storage: [
    { name: 'a', access: 'read' },
    { name: 'b', access: 'read' },
    { name: 'out', access: 'read_write' },
  ],
});

export const addIntoKernel = defineKernel({
  name: 'add_into',
  source: addIntoSource,
  uniforms: [{ name: 'count', type: 'u32' }],
  storage: [
    { name: 'acc', access: 'read_write' },
    { name: 'x', access: 'read' },
  ],
});

/**
 * Throws when a binding (a whole buffer, or a slice { buffer, offset, size }) holds fewer than
 * `elements` f32. Reads only sizes, never GPU data. Shared by the nn layer wrappers of this folder.
 */
export function checkRefElements(op: string, name: string, ref: BufferRef, elements: number): void {
  const bytes = 'buffer' in ref ? (ref.size ?? ref.buffer.size - (ref.offset ?? 0)) : ref.size;
  if (bytes < elements * 4) {
    throw new OpInputError(
      op,
      name,
      `binding must hold ${elements} f32 (${elements * 4} bytes), has ${bytes} bytes`,
    );
  }
}

/** Shape checks of an elementwise encode: count in [1, 2^31 − 1], every binding large enough. */
export function checkElementwise(
  gpu: GpuContext,
  op: string,
  buffers: Record<string, BufferRef>,
  count: number,
): void {
  checkInt(op, 'count', count, 1, 2 ** 31 - 1);
  checkBindingSize(gpu, count, `${op} tensors`);
  for (const [name, ref] of Object.entries(buffers)) checkRefElements(op, name, ref, count);
}

/** Records out = a + b over `count` f32. a, b, out: (count); out in another buffer than a, b. */
export async function encodeAdd(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { a: BufferRef; b: BufferRef; out: BufferRef },
  count: number,
): Promise<void> {
  checkElementwise(gpu, 'add', buffers, count);
  const pipeline = await gpu.pipelines.get(addKernel, {
    WORKGROUP_SIZE: ELEMENTWISE_WORKGROUP_SIZE,
  });
  batch.dispatch(addKernel, {
    pipeline,
    buffers,
    uniforms: { count },
    workgroups: invocationGrid(gpu, count, ELEMENTWISE_WORKGROUP_SIZE),
  });
}

/** Records acc += x over `count` f32. acc, x: (count); x in another buffer than acc. */
export async function encodeAddInto(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { acc: BufferRef; x: BufferRef },
  count: number,
): Promise<void> {
  checkElementwise(gpu, 'addInto', buffers, count);
  const pipeline = await gpu.pipelines.get(addIntoKernel, {
    WORKGROUP_SIZE: ELEMENTWISE_WORKGROUP_SIZE,
  });
  batch.dispatch(addIntoKernel, {
    pipeline,
    buffers,
    uniforms: { count },
    workgroups: invocationGrid(gpu, count, ELEMENTWISE_WORKGROUP_SIZE),
  });
}

/** Convenience path of add(): same checks, upload, run, read back (one sync point). */
export async function addGpu(
  gpu: GpuContext,
  a: Float32Array,
  b: Float32Array,
): Promise<Float32Array> {
  checkAddInput(a, b);
  checkBindingSize(gpu, a.length, 'add tensors');
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      a: pooled.upload(a, 'add a'),
      b: pooled.upload(b, 'add b'),
      out: pooled.storage(a.length, 'add out'),
    };
    const batch = gpu.beginBatch('add');
    await encodeAdd(gpu, batch, buffers, a.length);
    batch.submit();
    return await gpu.readF32(buffers.out, a.length);
  } finally {
    pooled.release();
  }
}

/** Convenience path of addInto(): acc += x computed on the GPU, written back into `acc`. */
export async function addIntoGpu(
  gpu: GpuContext,
  acc: Float32Array,
  x: Float32Array,
): Promise<void> {
  checkAddIntoInput(acc, x);
  checkBindingSize(gpu, acc.length, 'addInto tensors');
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = { acc: pooled.upload(acc, 'addInto acc'), x: pooled.upload(x, 'addInto x') };
    const batch = gpu.beginBatch('addInto');
    await encodeAddInto(gpu, batch, buffers, acc.length);
    batch.submit();
    acc.set(await gpu.readF32(buffers.acc, acc.length));
  } finally {
    pooled.release();
  }
}
