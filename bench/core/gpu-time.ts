/**
 * GPU time of work recorded by an async encoder (the kernel wrappers' encodeX functions await
 * their pipeline), bracketed by timestamp queries in one compute pass. Undefined without the
 * timestamp-query feature or when the implementation returns no usable timestamps.
 */
import type { CommandBatch } from '../../src/gpu/batch';
import type { GpuContext } from '../../src/gpu/context';

export async function gpuTimeOf(
  gpu: GpuContext,
  label: string,
  encode: (batch: CommandBatch) => Promise<void>,
): Promise<number | undefined> {
  if (!gpu.has('timestamp-query')) return undefined;
  const querySet = gpu.device.createQuerySet({ type: 'timestamp', count: 2, label });
  const resolve = gpu.pool.acquire(16, GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC);
  try {
    const batch = gpu.beginBatch(label, {
      querySet,
      beginningOfPassWriteIndex: 0,
      endOfPassWriteIndex: 1,
    });
    await encode(batch);
    batch.endPass();
    batch.encoder.resolveQuerySet(querySet, 0, 2, resolve, 0);
    batch.submit();
    // A CPU-GPU sync point; benchmarks only.
    const [begin, end] = new BigUint64Array(await gpu.read(resolve, 16));
    const ms = Number((end ?? 0n) - (begin ?? 0n)) / 1e6;
    return ms > 0 ? ms : undefined;
  } finally {
    gpu.pool.release(resolve);
    querySet.destroy();
  }
}
