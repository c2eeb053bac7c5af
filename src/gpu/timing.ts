/**
 * Times GPU work. With the `timestamp-query` feature the pass is bracketed by GPU timestamps;
 * without it, wall clock from submit to onSubmittedWorkDone (which includes submit overhead, so it
 * reads high for tiny kernels). Both are sync points: use them in benchmarks, not training loops.
 */
import type { CommandBatch } from './batch';
import type { GpuContext } from './context';

export interface GpuTiming {
  /** The time to report: GPU timestamps when available and sane, else wall clock. */
  ms: number;
  method: 'timestamp-query' | 'wall-clock';
  wallMs: number;
}

/** Runs `encode` in one timed compute pass, submits it, waits, and returns the elapsed time. */
export async function timeBatch(
  gpu: GpuContext,
  label: string,
  encode: (batch: CommandBatch) => void,
): Promise<GpuTiming> {
  if (!gpu.has('timestamp-query')) {
    const batch = gpu.beginBatch(label);
    encode(batch);
    const start = performance.now();
    batch.submit();
    await gpu.device.queue.onSubmittedWorkDone();
    const wallMs = performance.now() - start;
    return { ms: wallMs, method: 'wall-clock', wallMs };
  }

  const querySet = gpu.device.createQuerySet({ type: 'timestamp', count: 2, label });
  const resolve = gpu.pool.acquire(16, GPUBufferUsage.QUERY_RESOLVE | GPUBufferUsage.COPY_SRC);
  try {
    const batch = gpu.beginBatch(label, {
      querySet,
      beginningOfPassWriteIndex: 0,
      endOfPassWriteIndex: 1,
    });
    encode(batch);
    batch.endPass();
    batch.encoder.resolveQuerySet(querySet, 0, 2, resolve, 0);
    const start = performance.now();
    batch.submit();
    await gpu.device.queue.onSubmittedWorkDone();
    const wallMs = performance.now() - start;
    const [begin, end] = new BigUint64Array(await gpu.read(resolve, 16));
    const gpuMs = Number((end ?? 0n) - (begin ?? 0n)) / 1e6;
    // Some implementations quantize or zero timestamps; fall back rather than report 0 ms.
    if (!(gpuMs > 0)) return { ms: wallMs, method: 'wall-clock', wallMs };
    return { ms: gpuMs, method: 'timestamp-query', wallMs };
  } finally {
    gpu.pool.release(resolve);
    querySet.destroy();
  }
}
