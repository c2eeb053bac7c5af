/** Errors thrown by the GPU runtime. Each carries enough context to act on without a debugger. */

/** A kernel's WGSL failed to compile, or its declared layout disagrees with the WGSL. */
export class KernelError extends Error {
  override readonly name = 'KernelError';
  constructor(
    readonly kernel: string,
    message: string,
  ) {
    super(`kernel "${kernel}": ${message}`);
  }
}

/** A request exceeds what this device allows (binding size, workgroup count, ...). */
export class GpuLimitError extends Error {
  override readonly name = 'GpuLimitError';
  constructor(
    readonly limit: string,
    readonly requested: number,
    readonly allowed: number,
    context: string,
  ) {
    super(`${context}: needs ${limit} = ${requested}, but this device allows at most ${allowed}`);
  }
}
