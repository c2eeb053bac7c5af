/**
 * Where each parameter tensor of a model lives in ONE flat array (CPU) or ONE buffer (GPU).
 *
 * A flat layout lets the optimizer, the gradient norm and checkpoints treat a model as one vector,
 * and lets the GPU bind each tensor as a slice of one buffer. Tensors start on 64-float (256-byte)
 * boundaries, the default minStorageBufferOffsetAlignment. Tensors with weight decay (matrices and
 * embeddings) come first and those without (biases, LayerNorm gains and shifts) after, so AdamW
 * runs as two contiguous ranges, each with its own decay (PyTorch param groups, nanoGPT's split).
 */
import type { Floats } from '../ops/nn/floats';
import { gaussian, seededRandom } from '../util/random';

/** Floats per alignment unit: 256 bytes. */
export const PARAM_ALIGNMENT = 64;

export type ParamInit =
  | { kind: 'normal'; std: number }
  /** U(−bound, bound): LoRA's A (Kaiming-uniform with a = √5 is bound = 1/√fan_in). */
  | { kind: 'uniform'; bound: number }
  | { kind: 'zeros' }
  | { kind: 'ones' };

export interface ParamSpec {
  name: string;
  shape: readonly number[];
  /** AdamW weight decay applies (2-D weights and embeddings), or not (biases, LayerNorm). */
  decay: boolean;
  init: ParamInit;
}

export interface ParamEntry extends ParamSpec {
  /** First element in the flat array. */
  offset: number;
  /** Elements: the product of shape. */
  size: number;
}

/** A contiguous run of the flat array (elements), padding included. */
export interface ParamRange {
  offset: number;
  count: number;
}

export class ParamLayout {
  readonly entries: readonly ParamEntry[];
  /** Length of the flat array, padding included. */
  readonly total: number;
  /** The weight-decayed tensors, then the rest; padding between tensors is zero and stays zero. */
  readonly decayRange: ParamRange;
  readonly noDecayRange: ParamRange;
  private readonly byName: ReadonlyMap<string, ParamEntry>;

  constructor(specs: readonly ParamSpec[]) {
    const ordered = [...specs.filter((s) => s.decay), ...specs.filter((s) => !s.decay)];
    const entries: ParamEntry[] = [];
    let offset = 0;
    let decayEnd = 0;
    for (const spec of ordered) {
      const size = spec.shape.reduce((a, b) => a * b, 1);
      entries.push({ ...spec, offset, size });
      offset = align(offset + size);
      if (spec.decay) decayEnd = offset;
    }
    this.entries = entries;
    this.total = offset;
    this.decayRange = { offset: 0, count: decayEnd };
    this.noDecayRange = { offset: decayEnd, count: offset - decayEnd };
    this.byName = new Map(entries.map((e) => [e.name, e]));
    if (this.byName.size !== entries.length) throw new Error('ParamLayout: duplicate names');
  }

  /** Real parameters, padding excluded. */
  get parameterCount(): number {
    return this.entries.reduce((sum, e) => sum + e.size, 0);
  }

  entry(name: string): ParamEntry {
    const found = this.byName.get(name);
    if (!found) throw new Error(`ParamLayout: no parameter "${name}"`);
    return found;
  }

  has(name: string): boolean {
    return this.byName.has(name);
  }

  /** The tensor `name` as a view into `flat` (shares memory). */
  view<T extends Floats>(flat: T, name: string): T {
    const { offset, size } = this.entry(name);
    return flat.subarray(offset, offset + size) as T;
  }

  /** The tensor `name` as a binding slice of the model's parameter (or gradient, moment) buffer. */
  slice(buffer: GPUBuffer, name: string): GPUBufferBinding {
    const { offset, size } = this.entry(name);
    return { buffer, offset: offset * 4, size: size * 4 };
  }

  /** A binding slice of a range (e.g. decayRange for AdamW). */
  rangeSlice(buffer: GPUBuffer, range: ParamRange): GPUBufferBinding {
    return { buffer, offset: range.offset * 4, size: Math.max(range.count, 1) * 4 };
  }

  /** Fresh parameters from `seed`: N(0, std²) by Box–Muller, U(±bound), zeros or ones; padding zero. */
  initialize<T extends Floats>(seed: number, precision: 'f32' | 'f64' = 'f32'): T {
    const flat = (
      precision === 'f64' ? new Float64Array(this.total) : new Float32Array(this.total)
    ) as T;
    const next = seededRandom(seed);
    for (const e of this.entries) {
      const view = flat.subarray(e.offset, e.offset + e.size);
      if (e.init.kind === 'ones') view.fill(1);
      else if (e.init.kind === 'normal') {
        for (let i = 0; i < e.size; i++) view[i] = gaussian(next) * e.init.std;
      } else if (e.init.kind === 'uniform') {
        for (let i = 0; i < e.size; i++) view[i] = (next() * 2 - 1) * e.init.bound;
      }
    }
    return flat;
  }
}

function align(n: number): number {
  return Math.ceil(n / PARAM_ALIGNMENT) * PARAM_ALIGNMENT;
}
