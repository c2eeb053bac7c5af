/** Checks and weight writing shared by the transformer and MLP exporters. */
import type { ParamLayout } from '../models/param-layout';
import type { GraphBuilder } from './graph-builder';
import { OnnxError } from './onnx-error';

/** `params` must be a Float32Array of layout.total finite floats (padding included). */
export function checkParams(layout: ParamLayout, params: Float32Array): void {
  if (!(params instanceof Float32Array) || params.length !== layout.total) {
    const got = params instanceof Float32Array ? `${params.length} floats` : typeof params;
    throw new OnnxError(
      'input',
      'params',
      `must be a Float32Array of ${layout.total} floats (the layout), got ${got}`,
    );
  }
  for (const e of layout.entries) {
    for (let i = 0; i < e.size; i++) {
      const v = params[e.offset + i]!;
      if (!Number.isFinite(v)) {
        throw new OnnxError('input', `params[${JSON.stringify(e.name)}]`, `index ${i} is ${v}`);
      }
    }
  }
}

/** One float initializer per layout tensor, in layout order, named and shaped as the layout. */
export function addWeights(g: GraphBuilder, layout: ParamLayout, params: Float32Array): void {
  for (const e of layout.entries) {
    g.initializer(e.name, [...e.shape], params.subarray(e.offset, e.offset + e.size));
  }
}
