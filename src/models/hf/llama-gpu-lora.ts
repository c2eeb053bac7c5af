/**
 * LoRA adapters of a Llama-family model on the GPU (the twin of llama-lora.ts's LlamaLora): the
 * 'lora' group uploaded as ONE flat f32 buffer in the group's layout, each A (r, in) and B (out, r)
 * bound as a slice of it (the layout starts every tensor on a 256-byte boundary). One buffer, not
 * one per tensor, because the group is one vector for everything after the forward — AdamW, the
 * gradient norm, a checkpoint, an update after a step — which then stays one write or one
 * dispatch, and the gradient buffer of the backward has the same layout.
 *
 * The forward applies an adapter where a block's projection has one (llama-gpu-ops.ts
 * recordLinear); a pass given no adapters is the base model, the KL reference, with no second
 * copy of the weights.
 */
import type { GpuContext } from '../../gpu/context';
import { OpInputError } from '../../ops/errors';
import type { Floats } from '../../ops/nn/floats';
import type { ModelSpec } from '../model-spec';
import type { ParamLayout } from '../param-layout';
import {
  type LlamaLora,
  type LoraModule,
  type LoraSettings,
  loraModuleDims,
  loraTensorName,
} from './llama-lora';

/** One adapter's tensors as slices of the group's buffer. */
export interface GpuLoraAdapter {
  a: GPUBufferBinding;
  b: GPUBufferBinding;
  inDim: number;
  outDim: number;
}

export type GpuLoraLayer = Partial<Record<LoraModule, GpuLoraAdapter>>;

export interface LlamaGpuLora {
  settings: LoraSettings;
  /** alpha / r. */
  scale: number;
  /** The 'lora' group: (group.layout.total) f32. */
  params: GPUBuffer;
  /** The group's layout: where each tensor of params (and of a gradient buffer) lies. */
  layout: ParamLayout;
  /** layers[l][module]: the adapter, undefined where the module is not targeted. */
  layers: GpuLoraLayer[];
  /** Writes new values of the whole group (the layout's total f32), e.g. after a CPU step. */
  write(params: Floats): void;
  release(): void;
}

const OP = 'llamaGpuLora';

/** Uploads `lora` (made for `spec`: same layers and projection sizes) as one f32 buffer. */
export function uploadLlamaLora(
  gpu: GpuContext,
  spec: ModelSpec,
  lora: LlamaLora<Floats>,
): LlamaGpuLora {
  if (lora.layers.length !== spec.layers) {
    throw new OpInputError(
      OP,
      'lora',
      `has adapters for ${lora.layers.length} layers, the model has ${spec.layers}`,
    );
  }
  const { layout } = lora.group;
  for (const module of lora.settings.targets) {
    const want = loraModuleDims(spec, module);
    const got = lora.layers[0]?.[module];
    if (got && (got.inDim !== want.inDim || got.outDim !== want.outDim)) {
      throw new OpInputError(
        OP,
        'lora',
        `${module} is ${got.outDim}×${got.inDim}; this model's is ${want.outDim}×${want.inDim}`,
      );
    }
  }
  const total = layout.total;
  const params = gpu.storage(Math.max(1, total) * 4, 'lora params');
  const write = (values: Floats) => {
    if (values.length !== total) {
      throw new OpInputError(OP, 'params', `must have ${total} elements, got ${values.length}`);
    }
    gpu.device.queue.writeBuffer(params, 0, Float32Array.from(values));
  };
  if (total > 0) write(lora.params);
  const layers: GpuLoraLayer[] = [];
  for (let l = 0; l < spec.layers; l++) {
    const layer: GpuLoraLayer = {};
    for (const module of lora.settings.targets) {
      layer[module] = {
        a: layout.slice(params, loraTensorName(l, module, 'A')),
        b: layout.slice(params, loraTensorName(l, module, 'B')),
        ...loraModuleDims(spec, module),
      };
    }
    layers.push(layer);
  }
  return {
    settings: { ...lora.settings, targets: [...lora.settings.targets] },
    scale: lora.scale,
    params,
    layout,
    layers,
    write,
    release: () => gpu.pool.release(params),
  };
}

/** The (rows, r) buffers an adapted pass needs: u (the scaled down-projection) and a scratch. */
export class LoraScratch {
  readonly u: GPUBuffer;
  readonly t: GPUBuffer;

  constructor(
    private readonly gpu: GpuContext,
    rows: number,
    rank: number,
  ) {
    this.u = gpu.storage(rows * rank * 4, 'lora u');
    this.t = gpu.storage(rows * rank * 4, 'lora scratch');
  }

  release(): void {
    this.gpu.pool.release(this.u);
    this.gpu.pool.release(this.t);
  }
}

/** What recordBlock needs to apply one block's adapters. */
export interface BlockLoraGpu {
  layer: GpuLoraLayer;
  rank: number;
  scale: number;
  scratch: LoraScratch;
}

/** Block `l`'s adapters of `lora` with `scratch`, or undefined without adapters. */
export function blockLoraGpu(
  lora: LlamaGpuLora | undefined,
  scratch: LoraScratch | undefined,
  l: number,
): BlockLoraGpu | undefined {
  if (!lora || !scratch) return undefined;
  return { layer: lora.layers[l]!, rank: lora.settings.rank, scale: lora.scale, scratch };
}
