/** The GPU runtime and the GPU versions of the ops (same options as src/ops). */
export * from './adapter-summary';
export { acquireGpu, GpuContext, type GpuAcquisition, type GpuEvent } from './context';
export { CommandBatch, workgroupGrid } from './batch';
export { defineKernel, Kernel } from './kernel';
export { GpuLimitError, KernelError } from './errors';
export { timeBatch, type GpuTiming } from './timing';
export { logSoftmaxGpu, encodeLogSoftmax, logSoftmaxKernel } from './kernels/log-softmax';
