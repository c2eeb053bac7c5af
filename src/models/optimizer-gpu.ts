/**
 * The GPU optimizer step: encodeGradNorm then encodeAdamW on the decayed range and on the rest,
 * recorded into the training step's command encoder (no readback). CPU twin: optimizerStepCpu in
 * optimizer.ts.
 */
import type { CommandBatch } from '../gpu/batch';
import type { GpuContext } from '../gpu/context';
import { encodeAdamW } from '../gpu/kernels/nn/adamw';
import { encodeGradNorm, gradNormPartialsLength } from '../gpu/kernels/nn/grad-norm';
import { checkOptimizerConfig, STATS_LENGTH, type OptimizerConfig } from './optimizer';
import type { ParamLayout } from './param-layout';

/** AdamW moments (same layout as the parameters), stats [norm, scale, applied, step], scratch. */
export class GpuOptimizerState {
  readonly m: GPUBuffer;
  readonly v: GPUBuffer;
  readonly stats: GPUBuffer;
  readonly partials: GPUBuffer;

  constructor(
    private readonly gpu: GpuContext,
    readonly layout: ParamLayout,
  ) {
    this.m = gpu.storage(layout.total * 4, 'adamw m');
    this.v = gpu.storage(layout.total * 4, 'adamw v');
    this.stats = gpu.storage(STATS_LENGTH * 4, 'optimizer stats');
    this.partials = gpu.storage(gradNormPartialsLength(layout.total) * 4, 'grad-norm partials');
    const batch = gpu.beginBatch('optimizer state: zero');
    for (const buffer of [this.m, this.v, this.stats]) batch.encoder.clearBuffer(buffer);
    batch.submit();
  }

  /** Loads moments and stats (e.g. from a checkpoint). m, v: (layout.total); stats: (4). */
  write(m: Float32Array, v: Float32Array, stats: Float32Array): void {
    const queue = this.gpu.device.queue;
    queue.writeBuffer(this.m, 0, m.buffer, m.byteOffset, m.byteLength);
    queue.writeBuffer(this.v, 0, v.buffer, v.byteOffset, v.byteLength);
    queue.writeBuffer(this.stats, 0, stats.buffer, stats.byteOffset, stats.byteLength);
  }

  release(): void {
    for (const buffer of [this.m, this.v, this.stats, this.partials]) this.gpu.pool.release(buffer);
  }
}

/** Records grad norm + clipping + AdamW over `params` given `grads` (both laid out by `layout`). */
export async function encodeOptimizerStep(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { params: GPUBuffer; grads: GPUBuffer },
  state: GpuOptimizerState,
  config: OptimizerConfig,
): Promise<void> {
  checkOptimizerConfig(config);
  const { layout } = state;
  await encodeGradNorm(
    gpu,
    batch,
    { grads: buffers.grads, partials: state.partials, stats: state.stats },
    layout.total,
    config.maxGradNorm,
  );
  for (const [range, weightDecay] of [
    [layout.decayRange, config.weightDecay],
    [layout.noDecayRange, 0],
  ] as const) {
    if (range.count === 0) continue;
    const slice = (buffer: GPUBuffer) => layout.rangeSlice(buffer, range);
    await encodeAdamW(
      gpu,
      batch,
      {
        params: slice(buffers.params),
        grads: slice(buffers.grads),
        m: slice(state.m),
        v: slice(state.v),
        stats: state.stats,
      },
      range.count,
      { ...config, weightDecay },
    );
  }
}
