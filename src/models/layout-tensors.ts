/**
 * A flat array laid out by a ParamLayout ⇄ named checkpoint tensors (padding dropped / zero).
 * `prefix` goes before every tensor name: a parameter group's tensors are stored as
 * `${group}/${name}` (e.g. 'base/wte'); checkpoints from before groups have no prefix.
 */
import type { CheckpointTensor } from './checkpoint';
import type { ParamLayout } from './param-layout';

export function layoutToTensors(
  layout: ParamLayout,
  flat: Float32Array,
  prefix = '',
): CheckpointTensor[] {
  return layout.entries.map((e) => ({
    name: prefix + e.name,
    shape: [...e.shape],
    data: flat.slice(e.offset, e.offset + e.size),
  }));
}

/** Tensors must already be checked against the layout (decodeCheckpoint with an expectation). */
export function tensorsToLayout(
  layout: ParamLayout,
  tensors: CheckpointTensor[],
  prefix = '',
): Float32Array {
  const flat = new Float32Array(layout.total);
  const byName = new Map(tensors.map((t) => [t.name, t]));
  for (const e of layout.entries) flat.set(byName.get(prefix + e.name)!.data, e.offset);
  return flat;
}
