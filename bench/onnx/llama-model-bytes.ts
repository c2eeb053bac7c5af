/**
 * The bytes of a Llama-family ONNX model (llama-graph.ts) with its weights as initializers, in one
 * allocation: the sizes of every field are known from the tensors' shapes, so the file is sized
 * first and each weight is then fetched from `weights`, converted (f32 or f16, transposed where the
 * graph wants (in, out)) straight into its place and dropped. Peak memory is the file plus the one
 * tensor being written, not the nested copies a message-by-message writer makes — Qwen2.5-0.5B in
 * f16 is a 1 GB file.
 *
 * A protobuf message (and so an ONNX file without external data) is limited to 2 GiB − 1 bytes:
 * a model past that is refused with its size (Qwen2.5-0.5B in f32 is 1.98 GB, just under; Qwen3-0.6B in f32, 2.4 GB, is past it).
 */
import type { ModelSpec } from '../../src/models/model-spec';
import { DataType, encodeGraph, encodeModelHead, IR_VERSION } from '../../src/onnx/onnx-proto';
import { ProtoWriter, WIRE_BYTES } from '../../src/onnx/protobuf';
import { f32ToF16 } from '../../src/util/half-float';
import { llamaGraph, type LlamaGraphOptions, type LlamaInitializer } from './llama-graph';

/** ai.onnx opset 17 (ReduceMean's axes an attribute); IR 8 goes with it. */
export const LLAMA_OPSET = 17;
/** The largest protobuf message: 2^31 − 1 bytes. */
export const PROTOBUF_MAX_BYTES = 2 ** 31 - 1;

/** A Hugging Face tensor by name, in its HF layout ((out, in) for a linear), as f32. */
export type WeightSource = (hfName: string) => Float32Array;

export function weightSourceOf(weights: ReadonlyMap<string, Float32Array>): WeightSource {
  return (name) => {
    const w = weights.get(name);
    if (!w) throw new Error(`llama ONNX model: weights are missing the tensor '${name}'`);
    return w;
  };
}

/** The ONNX file of `spec` with `weights` (a Map of HF names → f32, or a source per tensor). */
export function llamaModelBytes(
  spec: ModelSpec,
  options: LlamaGraphOptions,
  weights: ReadonlyMap<string, Float32Array> | WeightSource,
): Uint8Array {
  const source = typeof weights === 'function' ? weights : weightSourceOf(weights);
  const { graph, weights: inits, elemType } = llamaGraph(spec, options);
  const bytesPer = elemType === DataType.FLOAT16 ? 2 : 4;
  const head = encodeModelHead({
    irVersion: IR_VERSION,
    opsetImports: [{ domain: '', version: LLAMA_OPSET }],
    producerName: 'agent-rl-lab bench',
    metadataProps: [],
  });
  const body = encodeGraph(graph);
  // Each initializer: field 5 of the graph = [tag, length][dims, data_type, name, raw_data tag+length][raw].
  const parts = inits.map((init) => {
    const rawLength = init.dims.reduce((a, b) => a * b, 1) * bytesPer;
    const tensor = new ProtoWriter();
    for (const d of init.dims) tensor.varint(1, d);
    tensor.varint(2, elemType).string(8, init.name).tag(9, WIRE_BYTES);
    tensor.rawVarint(rawLength);
    const tensorHead = tensor.finish();
    const field = new ProtoWriter().tag(5, WIRE_BYTES);
    field.rawVarint(tensorHead.length + rawLength);
    return { init, fieldHead: field.finish(), tensorHead, rawLength };
  });
  const graphLength = parts.reduce(
    (sum, p) => sum + p.fieldHead.length + p.tensorHead.length + p.rawLength,
    body.length,
  );
  const graphField = new ProtoWriter().tag(7, WIRE_BYTES);
  graphField.rawVarint(graphLength);
  const graphHead = graphField.finish();
  const total = head.length + graphHead.length + graphLength;
  if (total > PROTOBUF_MAX_BYTES) {
    throw new Error(
      `llama ONNX model: ${(total / 2 ** 30).toFixed(2)} GiB is past protobuf's 2 GiB limit ` +
        `(dtype ${options.dtype}; f16 halves it, or the weights would need ONNX external data)`,
    );
  }
  const out = new Uint8Array(total);
  let at = 0;
  const put = (bytes: Uint8Array) => {
    out.set(bytes, at);
    at += bytes.length;
  };
  put(head);
  put(graphHead);
  put(body);
  for (const p of parts) {
    put(p.fieldHead);
    put(p.tensorHead);
    writeWeight(out.subarray(at, at + p.rawLength), p.init, source(p.init.hfName), bytesPer);
    at += p.rawLength;
  }
  return out;
}

/** Writes `data` (HF layout) into `dst` as little-endian f32 or f16, transposed if the init says. */
function writeWeight(
  dst: Uint8Array,
  init: LlamaInitializer,
  data: Float32Array,
  bytesPer: number,
): void {
  const size = init.dims.reduce((a, b) => a * b, 1);
  if (data.length !== size) {
    throw new Error(
      `llama ONNX model: weights['${init.hfName}'] must have ${size} elements, got ${data.length}`,
    );
  }
  // Destination element i comes from source element at(i): (in, out)[r, c] = (out, in)[c, r].
  const transposed = init.layout === 'transposed';
  const rows = init.dims[0]!;
  const cols = init.dims[1] ?? 1;
  const view = new DataView(dst.buffer, dst.byteOffset, dst.byteLength);
  for (let r = 0, i = 0; r < rows; r++) {
    for (let c = 0; c < cols; c++, i++) {
      const value = transposed ? data[c * rows + r]! : data[i]!;
      if (bytesPer === 4) view.setFloat32(i * 4, value, true);
      else view.setUint16(i * 2, f32ToF16(value), true);
    }
  }
}
