/**
 * Reads f32 outputs back in the same submission as the work that wrote them: one staging buffer,
 * one submit, one mapAsync. Timed runs use it so that every GPU implementation of ours (and the
 * copy ceiling) pays one round trip, however many outputs it has.
 */
import type { CommandBatch } from '../../src/gpu/batch';
import type { GpuContext } from '../../src/gpu/context';

/** Records the copies of `sources` ([buffer, f32 length]) into `batch`, submits it, reads them. */
export async function submitAndReadF32(
  gpu: GpuContext,
  batch: CommandBatch,
  sources: readonly (readonly [GPUBuffer, number])[],
): Promise<Float32Array[]> {
  const total = sources.reduce((sum, [, length]) => sum + length, 0) * 4;
  const staging = gpu.pool.acquire(
    total,
    GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST,
    'bench readback',
  );
  try {
    let offset = 0;
    for (const [buffer, length] of sources) {
      batch.copy(buffer, staging, length * 4, offset);
      offset += length * 4;
    }
    batch.submit();
    await staging.mapAsync(GPUMapMode.READ, 0, total);
    const data = staging.getMappedRange(0, total).slice(0);
    staging.unmap();
    let start = 0;
    return sources.map(([, length]) => {
      const out = new Float32Array(data, start * 4, length);
      start += length;
      return out;
    });
  } finally {
    gpu.pool.release(staging);
  }
}
