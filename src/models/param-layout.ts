/**
 * Where each parameter tensor of a model lives in ONE flat array (CPU) or ONE buffer (GPU).
 *
 * A flat layout lets the optimizer, the gradient norm and checkpoints treat a model as one vector,
 * and lets the GPU bind each tensor as a slice of one buffer. Tensors start on 256-byte boundaries,
 * the default minStorageBufferOffsetAlignment: every 64 floats for an f32 group, every 128 halves
 * for a 16-bit one (f16, bf16: two values per u32 word on the GPU), so that each tensor of a
 * packed group binds at its own offset. Offsets and sizes count elements, whatever the storage;
 * slice() turns them into bytes. Tensors with weight decay (matrices and
 * embeddings) come first and those without (biases, LayerNorm gains and shifts) after, so AdamW
 * runs as two contiguous ranges, each with its own decay (PyTorch param groups, nanoGPT's split).
 */
import type { Floats } from '../ops/nn/floats';
import { gaussian, seededRandom } from '../util/random';
import type { StorageDtype } from './model-spec';

/** Where every tensor starts, in bytes: WebGPU's default minStorageBufferOffsetAlignment. */
export const PARAM_ALIGNMENT_BYTES = 256;
/** Floats per alignment unit of an f32 layout: 256 bytes. */
export const PARAM_ALIGNMENT = 64;

/** Bytes per stored element. */
export const STORAGE_BYTES: Readonly<Record<StorageDtype, number>> = { f32: 4, f16: 2, bf16: 2 };

/** Elements per alignment unit of a layout stored as `storage`: 64 f32, 128 halves. */
export function paramAlignment(storage: StorageDtype): number {
  return PARAM_ALIGNMENT_BYTES / STORAGE_BYTES[storage];
}

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
  /** How the group is stored on the device; sets the alignment and the bytes of slice(). */
  readonly storage: StorageDtype;
  private readonly byName: ReadonlyMap<string, ParamEntry>;

  constructor(specs: readonly ParamSpec[], storage: StorageDtype = 'f32') {
    if (!(storage in STORAGE_BYTES)) {
      throw new Error(`ParamLayout: storage must be f32, f16 or bf16, got ${String(storage)}`);
    }
    this.storage = storage;
    const unit = paramAlignment(storage);
    const ordered = [...specs.filter((s) => s.decay), ...specs.filter((s) => !s.decay)];
    const entries: ParamEntry[] = [];
    let offset = 0;
    let decayEnd = 0;
    for (const spec of ordered) {
      const size = spec.shape.reduce((a, b) => a * b, 1);
      entries.push({ ...spec, offset, size });
      offset = Math.ceil((offset + size) / unit) * unit;
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

  /**
   * The tensor `name` as a binding slice of the model's parameter (or gradient, moment) buffer.
   * A 16-bit tensor of odd size binds its last word whole (a storage binding is whole u32s); the
   * half past its end is alignment padding.
   */
  slice(buffer: GPUBuffer, name: string): GPUBufferBinding {
    const { offset, size } = this.entry(name);
    return this.bytes(buffer, offset, size);
  }

  /** A binding slice of a range (e.g. decayRange for AdamW). */
  rangeSlice(buffer: GPUBuffer, range: ParamRange): GPUBufferBinding {
    return this.bytes(buffer, range.offset, Math.max(range.count, 1));
  }

  /** Bytes of the whole flat buffer at this storage (alignment padding included). */
  get byteLength(): number {
    return this.total * STORAGE_BYTES[this.storage];
  }

  private bytes(buffer: GPUBuffer, offset: number, count: number): GPUBufferBinding {
    const per = STORAGE_BYTES[this.storage];
    return { buffer, offset: offset * per, size: Math.ceil((count * per) / 4) * 4 };
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
