/**
 * The device's bandwidth ceiling for a suite: kernels/copy.wgsl copying a buffer of the same
 * size as the suite's main input. Bytes counted: read + write = 2 · buffer bytes.
 */
import type { GpuContext } from '../../src/gpu/context';
import { copyByteLength, encodeCopy } from '../../src/gpu/kernels/copy';
import { maxAbsDiff } from '../../src/util/max-abs-diff';
import { gpuTimeOf } from '../core/gpu-time';
import { measure, type RepPolicy } from '../core/measure';
import { submitAndReadF32 } from '../core/read-with-batch';
import type { Measurement } from '../core/types';

export const COPY_IMPL = 'copy (ceiling)';

export const COPY_TIMING =
  'copy (ceiling): kernels/copy.wgsl on a buffer the size of the logits; wall clock from submit until a 16-byte readback of the copy, recorded in the same submission, arrives; GB/s counts read + write (2·N·V·4 bytes)';

/** Measures a copy of `input` (resident, `length` f32 elements) and validates it against `data`. */
export function measureCopy(
  gpu: GpuContext,
  input: GPUBuffer,
  data: Float32Array,
  shape: Record<string, number>,
  reps: RepPolicy,
  log: (line: string) => void,
): Promise<Measurement> {
  const length = data.length;
  return measure({
    impl: COPY_IMPL,
    shape,
    bytes: 2 * length * 4,
    reps,
    tolerance: 0,
    log,
    error: (copied: Float32Array) => maxAbsDiff(copied, data),
    prepare: async () => {
      const output = gpu.storage(copyByteLength(length), 'bench copy output');
      let validated = false;
      const encode = (batch: ReturnType<GpuContext['beginBatch']>) =>
        encodeCopy(gpu, batch, { input, output }, length);
      return {
        run: async () => {
          const batch = gpu.beginBatch('bench copy');
          await encode(batch);
          // The first launch reads everything back for validation; timed ones read 16 bytes, in
          // the same submission as the copy (as the kernels' runs read their outputs).
          const readLength = validated ? 4 : length;
          validated = true;
          const [copied] = await submitAndReadF32(gpu, batch, [[output, readLength]]);
          return copied as Float32Array;
        },
        gpuTime: () => gpuTimeOf(gpu, 'bench copy', encode),
        dispose: () => gpu.pool.release(output),
      };
    },
  });
}
