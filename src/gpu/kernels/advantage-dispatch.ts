/**
 * Dispatch helpers first written for the advantage-estimator wrappers (gae, whiten, group
 * advantages, REINFORCE++, broadcast) and shared with the others: grids of one invocation per item,
 * and binding-size checks.
 */
import { workgroupGrid } from '../batch';
import type { GpuContext } from '../context';
import { GpuLimitError } from '../errors';

/** Workgroups for `count` invocations of `workgroupSize` each, over (x, y) past the limit. */
export function invocationGrid(
  gpu: GpuContext,
  count: number,
  workgroupSize: number,
): [number, number] {
  return workgroupGrid(
    Math.ceil(count / workgroupSize),
    gpu.summary.limits.maxComputeWorkgroupsPerDimension,
  );
}

/** Throws a GpuLimitError when an f32 tensor of `elements` exceeds one storage binding. */
export function checkBindingSize(gpu: GpuContext, elements: number, what: string): void {
  const bytes = elements * 4;
  const max = gpu.summary.limits.maxStorageBufferBindingSize;
  if (bytes > max) {
    throw new GpuLimitError('maxStorageBufferBindingSize (bytes)', bytes, max, what);
  }
}
