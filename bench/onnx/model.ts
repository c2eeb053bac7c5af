/**
 * Builds ONNX models in code (ModelProto bytes), so the benchmark's ONNX Runtime peer needs no
 * model files and no converter. Covers only what the peer graphs use: nodes with int / ints
 * attributes, raw-data initializers and tensor-typed graph inputs/outputs with fixed dims.
 * Field numbers follow onnx.proto (ModelProto, GraphProto, NodeProto, AttributeProto,
 * TensorProto, ValueInfoProto, TypeProto, TensorShapeProto).
 */
import { ProtoWriter } from './protobuf';

/** TensorProto.DataType values. */
export const OnnxType = { float: 1, int32: 6, int64: 7 } as const;
export type OnnxElemType = keyof typeof OnnxType;

/** AttributeProto.AttributeType values. */
const ATTR_INT = 2;
const ATTR_INTS = 7;

export interface OnnxNode {
  op: string;
  inputs: string[];
  outputs: string[];
  /** Integer attributes (e.g. axis, keepdims); arrays become INTS attributes. */
  attributes?: Record<string, number | number[]>;
}

export interface OnnxValue {
  name: string;
  type: OnnxElemType;
  dims: number[];
}

export interface OnnxInitializer extends OnnxValue {
  data: Float32Array | Int32Array | BigInt64Array;
}

export interface OnnxGraph {
  name: string;
  nodes: OnnxNode[];
  inputs: OnnxValue[];
  outputs: OnnxValue[];
  initializers?: OnnxInitializer[];
  /** Default-domain opset the nodes are written against. */
  opset: number;
}

/** ONNX IR version 8 goes with opsets up to 18. */
const IR_VERSION = 8;

export function encodeModel(graph: OnnxGraph): Uint8Array {
  const g = new ProtoWriter();
  graph.nodes.forEach((node, i) => g.message(1, encodeNode(node, i)));
  g.string(2, graph.name);
  for (const init of graph.initializers ?? []) g.message(5, encodeInitializer(init));
  for (const input of graph.inputs) g.message(11, encodeValueInfo(input));
  for (const output of graph.outputs) g.message(12, encodeValueInfo(output));

  const opset = new ProtoWriter().string(1, '').varint(2, graph.opset);
  return new ProtoWriter()
    .varint(1, IR_VERSION)
    .string(2, 'agent-rl-lab bench')
    .message(7, g)
    .message(8, opset)
    .finish();
}

function encodeNode(node: OnnxNode, index: number): ProtoWriter {
  const w = new ProtoWriter();
  for (const input of node.inputs) w.string(1, input);
  for (const output of node.outputs) w.string(2, output);
  w.string(3, `${node.op.toLowerCase()}_${index}`);
  w.string(4, node.op);
  for (const [name, value] of Object.entries(node.attributes ?? {})) {
    const attr = new ProtoWriter().string(1, name);
    if (Array.isArray(value)) {
      for (const v of value) attr.varint(8, v);
      attr.varint(20, ATTR_INTS);
    } else {
      attr.varint(3, value);
      attr.varint(20, ATTR_INT);
    }
    w.message(5, attr);
  }
  return w;
}

function encodeInitializer(init: OnnxInitializer): ProtoWriter {
  const w = new ProtoWriter();
  for (const d of init.dims) w.varint(1, d);
  w.varint(2, OnnxType[init.type]);
  w.string(8, init.name);
  // raw_data is little-endian, which typed arrays are on every platform the lab runs on.
  w.bytes(9, new Uint8Array(init.data.buffer, init.data.byteOffset, init.data.byteLength));
  return w;
}

function encodeValueInfo(value: OnnxValue): ProtoWriter {
  const shape = new ProtoWriter();
  for (const d of value.dims) shape.message(1, new ProtoWriter().varint(1, d));
  const tensorType = new ProtoWriter().varint(1, OnnxType[value.type]).message(2, shape);
  const type = new ProtoWriter().message(1, tensorType);
  return new ProtoWriter().string(1, value.name).message(2, type);
}
