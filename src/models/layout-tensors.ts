/** A flat array laid out by a ParamLayout ⇄ named checkpoint tensors (padding dropped / zero). */
import type { CheckpointTensor } from './checkpoint';
import type { ParamLayout } from './param-layout';

export function layoutToTensors(layout: ParamLayout, flat: Float32Array): CheckpointTensor[] {
  return layout.entries.map((e) => ({
    name: e.name,
    shape: [...e.shape],
    data: flat.slice(e.offset, e.offset + e.size),
  }));
}

/** Tensors must already be checked against the layout (decodeCheckpoint with an expectation). */
export function tensorsToLayout(layout: ParamLayout, tensors: CheckpointTensor[]): Float32Array {
  const flat = new Float32Array(layout.total);
  const byName = new Map(tensors.map((t) => [t.name, t]));
  for (const e of layout.entries) flat.set(byName.get(e.name)!.data, e.offset);
  return flat;
}
