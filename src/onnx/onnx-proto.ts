/**
 * The part of onnx.proto (github.com/onnx/onnx, onnx/onnx.proto, proto2 syntax) that this lab
 * writes and reads, as plain TS objects with an encoder and a decoder over protobuf.ts.
 *
 * Field numbers (from onnx.proto; a wrong one makes onnxruntime refuse the file, which the ORT
 * tests would show at once):
 *
 *   ModelProto            ir_version 1 (int64), producer_name 2, producer_version 3, domain 4,
 *                         model_version 5 (int64), doc_string 6, graph 7, opset_import 8,
 *                         metadata_props 14
 *   OperatorSetIdProto    domain 1, version 2 (int64)
 *   StringStringEntryProto key 1, value 2
 *   GraphProto            node 1, name 2, initializer 5, doc_string 10, input 11, output 12,
 *                         value_info 13
 *   NodeProto             input 1, output 2, name 3, op_type 4, attribute 5, doc_string 6, domain 7
 *   AttributeProto        name 1, f 2 (float), i 3 (int64), s 4 (bytes), t 5 (TensorProto),
 *                         g 6 (GraphProto), floats 7, ints 8, strings 9, tensors 10, graphs 11,
 *                         doc_string 13, type 20 (AttributeType)
 *   TensorProto           dims 1 (int64), data_type 2 (int32), float_data 4, int32_data 5,
 *                         string_data 6, int64_data 7, name 8, raw_data 9, double_data 10,
 *                         uint64_data 11, doc_string 12, external_data 13, data_location 14
 *   ValueInfoProto        name 1, type 2, doc_string 3
 *   TypeProto             tensor_type 1 (TypeProto.Tensor), denotation 6
 *   TypeProto.Tensor      elem_type 1 (int32), shape 2 (TensorShapeProto)
 *   TensorShapeProto      dim 1 (Dimension)
 *   Dimension             dim_value 1 (int64), dim_param 2 (string), denotation 3
 *
 * onnx.proto is proto2 without [packed = true], so repeated scalars are written unpacked, as the
 * reference serializer does; the decoder accepts packed and unpacked alike (protobuf requires it).
 * Unknown fields are skipped when decoding, as protobuf parsers do.
 */
import { OnnxError } from './onnx-error';
import {
  ProtoReader,
  ProtoWriter,
  expectBytes,
  expectVarint,
  protoInt,
  readRepeatedFloats,
  readRepeatedInts,
  readString,
  subReader,
  type ProtoField,
} from './protobuf';

/** TensorProto.DataType values used here. */
export const DataType = {
  UNDEFINED: 0,
  FLOAT: 1,
  UINT8: 2,
  INT8: 3,
  INT32: 6,
  INT64: 7,
  STRING: 8,
  BOOL: 9,
  FLOAT16: 10,
  DOUBLE: 11,
} as const;

/** AttributeProto.AttributeType values. */
export const AttributeType = {
  UNDEFINED: 0,
  FLOAT: 1,
  INT: 2,
  STRING: 3,
  TENSOR: 4,
  GRAPH: 5,
  FLOATS: 6,
  INTS: 7,
  STRINGS: 8,
  TENSORS: 9,
  GRAPHS: 10,
} as const;

/** IR version 8 (ONNX 1.12) is the one that goes with opset 17. */
export const IR_VERSION = 8;

export interface TensorProto {
  name: string;
  /** DataType value. */
  dataType: number;
  dims: number[];
  /** Little-endian bytes of the elements (a view into the file when decoded). */
  rawData?: Uint8Array;
  floatData?: number[];
  int32Data?: number[];
  int64Data?: number[];
  /** 1 = EXTERNAL: data in another file (not supported by this lab's importer). */
  dataLocation?: number;
}

export interface AttributeProto {
  name: string;
  /** AttributeType value. */
  type: number;
  f?: number;
  i?: number;
  s?: Uint8Array;
  t?: TensorProto;
  g?: GraphProto;
  floats?: number[];
  ints?: number[];
  strings?: Uint8Array[];
}

export interface NodeProto {
  opType: string;
  inputs: string[];
  outputs: string[];
  name?: string;
  domain?: string;
  attributes: AttributeProto[];
}

/** A dimension: a size, a symbolic name (dim_param), or unknown. */
export type Dim = number | string | undefined;

/** A graph input/output. Only tensor types are modelled; other types decode as elemType 0. */
export interface ValueInfoProto {
  name: string;
  /** DataType of the elements (0 when not a tensor type). */
  elemType: number;
  /** undefined = rank unknown. */
  shape?: Dim[];
}

export interface GraphProto {
  name: string;
  nodes: NodeProto[];
  initializers: TensorProto[];
  inputs: ValueInfoProto[];
  outputs: ValueInfoProto[];
}

export interface OperatorSetId {
  /** '' = the default ai.onnx domain. */
  domain: string;
  version: number;
}

export interface ModelProto {
  irVersion: number;
  opsetImports: OperatorSetId[];
  producerName?: string;
  producerVersion?: string;
  docString?: string;
  graph: GraphProto;
  metadataProps: { key: string; value: string }[];
}

// ---------------------------------------------------------------------------------------------
// Encoding

/**
 * Fields go out in field-number order except the graph, which goes last: a file cut anywhere then
 * lacks a complete graph (a clear "truncated"/"no graph"), instead of reading as a complete model
 * without its metadata.
 */
export function encodeModel(model: ModelProto): Uint8Array {
  const w = new ProtoWriter();
  writeModelHead(w, model);
  w.message(7, (g) => writeGraph(g, model.graph));
  return w.finish();
}

/**
 * The fields encodeModel writes before the graph, and the graph's own bytes: for a writer that
 * appends the graph (field 7) itself, e.g. with initializers too large to copy through nested
 * messages.
 */
export function encodeModelHead(model: Omit<ModelProto, 'graph'>): Uint8Array {
  const w = new ProtoWriter();
  writeModelHead(w, model);
  return w.finish();
}

export function encodeGraph(graph: GraphProto): Uint8Array {
  const w = new ProtoWriter();
  writeGraph(w, graph);
  return w.finish();
}

function writeModelHead(w: ProtoWriter, model: Omit<ModelProto, 'graph'>): void {
  w.varint(1, model.irVersion);
  if (model.producerName !== undefined) w.string(2, model.producerName);
  if (model.producerVersion !== undefined) w.string(3, model.producerVersion);
  if (model.docString !== undefined) w.string(6, model.docString);
  for (const opset of model.opsetImports) {
    w.message(8, (o) => {
      if (opset.domain !== '') o.string(1, opset.domain);
      o.varint(2, opset.version);
    });
  }
  for (const { key, value } of model.metadataProps) {
    w.message(14, (e) => e.string(1, key).string(2, value));
  }
}

function writeGraph(w: ProtoWriter, graph: GraphProto): void {
  for (const node of graph.nodes) w.message(1, (n) => writeNode(n, node));
  w.string(2, graph.name);
  for (const t of graph.initializers) w.message(5, (m) => writeTensor(m, t));
  for (const v of graph.inputs) w.message(11, (m) => writeValueInfo(m, v));
  for (const v of graph.outputs) w.message(12, (m) => writeValueInfo(m, v));
}

function writeNode(w: ProtoWriter, node: NodeProto): void {
  for (const input of node.inputs) w.string(1, input);
  for (const output of node.outputs) w.string(2, output);
  if (node.name !== undefined) w.string(3, node.name);
  w.string(4, node.opType);
  for (const a of node.attributes) w.message(5, (m) => writeAttribute(m, a));
  if (node.domain !== undefined && node.domain !== '') w.string(7, node.domain);
}

function writeAttribute(w: ProtoWriter, a: AttributeProto): void {
  w.string(1, a.name);
  if (a.f !== undefined) w.float(2, a.f);
  if (a.i !== undefined) w.varint(3, a.i);
  if (a.s !== undefined) w.bytes(4, a.s);
  if (a.t !== undefined) w.message(5, (m) => writeTensor(m, a.t!));
  if (a.g !== undefined) w.message(6, (m) => writeGraph(m, a.g!));
  for (const f of a.floats ?? []) w.float(7, f);
  for (const i of a.ints ?? []) w.varint(8, i);
  for (const s of a.strings ?? []) w.bytes(9, s);
  w.varint(20, a.type);
}

function writeTensor(w: ProtoWriter, t: TensorProto): void {
  for (const d of t.dims) w.varint(1, d);
  w.varint(2, t.dataType);
  for (const f of t.floatData ?? []) w.float(4, f);
  for (const i of t.int32Data ?? []) w.varint(5, i);
  for (const i of t.int64Data ?? []) w.varint(7, i);
  w.string(8, t.name);
  if (t.rawData !== undefined) w.bytes(9, t.rawData);
  if (t.dataLocation !== undefined) w.varint(14, t.dataLocation);
}

function writeValueInfo(w: ProtoWriter, v: ValueInfoProto): void {
  w.string(1, v.name);
  w.message(2, (type) =>
    type.message(1, (tensor) => {
      tensor.varint(1, v.elemType);
      if (v.shape !== undefined) {
        const dims = v.shape;
        tensor.message(2, (shape) => {
          for (const d of dims) {
            shape.message(1, (dim) => {
              if (typeof d === 'number') dim.varint(1, d);
              else if (typeof d === 'string') dim.string(2, d);
            });
          }
        });
      }
    }),
  );
}

// ---------------------------------------------------------------------------------------------
// Decoding

/** Sub-graphs (If/Loop bodies) nest; a hostile file could nest them until the stack overflows. */
const MAX_GRAPH_DEPTH = 32;

/**
 * Bytes → ModelProto. Throws OnnxError: 'truncated' when the bytes end inside a field,
 * 'malformed' for bad wire data or a message without what onnx.proto requires (a graph).
 */
export function decodeModel(bytes: Uint8Array): ModelProto {
  if (!(bytes instanceof Uint8Array)) {
    throw new OnnxError('input', 'bytes', 'must be a Uint8Array');
  }
  if (bytes.length === 0) throw new OnnxError('truncated', 'ModelProto', 'is empty (0 bytes)', 0);
  const path = 'ModelProto';
  let irVersion: number | undefined;
  let graph: GraphProto | undefined;
  const model: Omit<ModelProto, 'irVersion' | 'graph'> = { opsetImports: [], metadataProps: [] };
  for (const f of new ProtoReader(bytes, 0, path).readAll()) {
    switch (f.field) {
      case 1:
        irVersion = protoInt(expectVarint(f, `${path}.ir_version`), `${path}.ir_version`, f.offset);
        break;
      case 2:
        model.producerName = readString(f, `${path}.producer_name`);
        break;
      case 3:
        model.producerVersion = readString(f, `${path}.producer_version`);
        break;
      case 6:
        model.docString = readString(f, `${path}.doc_string`);
        break;
      case 7:
        graph = readGraph(f, `${path}.graph`, 0);
        break;
      case 8:
        model.opsetImports.push(readOpset(f, `${path}.opset_import[${model.opsetImports.length}]`));
        break;
      case 14:
        model.metadataProps.push(
          readEntry(f, `${path}.metadata_props[${model.metadataProps.length}]`),
        );
        break;
      default: // unknown or unused field: skipped, as protobuf parsers do
        break;
    }
  }
  if (graph === undefined) {
    throw new OnnxError('malformed', path, 'has no graph (field 7): not an ONNX model', 0);
  }
  if (irVersion === undefined) {
    throw new OnnxError('malformed', path, 'has no ir_version (field 1): not an ONNX model', 0);
  }
  return { irVersion, graph, ...model };
}

function readOpset(f: ProtoField, path: string): OperatorSetId {
  const opset: OperatorSetId = { domain: '', version: 0 };
  for (const g of subReader(f, path).readAll()) {
    if (g.field === 1) opset.domain = readString(g, `${path}.domain`);
    else if (g.field === 2)
      opset.version = protoInt(expectVarint(g, `${path}.version`), path, g.offset);
  }
  return opset;
}

function readEntry(f: ProtoField, path: string): { key: string; value: string } {
  const entry = { key: '', value: '' };
  for (const g of subReader(f, path).readAll()) {
    if (g.field === 1) entry.key = readString(g, `${path}.key`);
    else if (g.field === 2) entry.value = readString(g, `${path}.value`);
  }
  return entry;
}

function readGraph(f: ProtoField, path: string, depth: number): GraphProto {
  if (depth > MAX_GRAPH_DEPTH) {
    throw new OnnxError(
      'malformed',
      path,
      `nests sub-graphs deeper than ${MAX_GRAPH_DEPTH}`,
      f.offset,
    );
  }
  const graph: GraphProto = { name: '', nodes: [], initializers: [], inputs: [], outputs: [] };
  for (const g of subReader(f, path).readAll()) {
    switch (g.field) {
      case 1:
        graph.nodes.push(readNode(g, `${path}.node[${graph.nodes.length}]`, depth));
        break;
      case 2:
        graph.name = readString(g, `${path}.name`);
        break;
      case 5:
        graph.initializers.push(readTensor(g, `${path}.initializer[${graph.initializers.length}]`));
        break;
      case 11:
        graph.inputs.push(readValueInfo(g, `${path}.input[${graph.inputs.length}]`));
        break;
      case 12:
        graph.outputs.push(readValueInfo(g, `${path}.output[${graph.outputs.length}]`));
        break;
      default: // unknown or unused field: skipped, as protobuf parsers do
        break;
    }
  }
  return graph;
}

function readNode(f: ProtoField, path: string, depth: number): NodeProto {
  const node: NodeProto = { opType: '', inputs: [], outputs: [], attributes: [] };
  for (const g of subReader(f, path).readAll()) {
    switch (g.field) {
      case 1:
        node.inputs.push(readString(g, `${path}.input`));
        break;
      case 2:
        node.outputs.push(readString(g, `${path}.output`));
        break;
      case 3:
        node.name = readString(g, `${path}.name`);
        break;
      case 4:
        node.opType = readString(g, `${path}.op_type`);
        break;
      case 5:
        node.attributes.push(
          readAttribute(g, `${path}.attribute[${node.attributes.length}]`, depth),
        );
        break;
      case 7:
        node.domain = readString(g, `${path}.domain`);
        break;
      default: // unknown or unused field: skipped, as protobuf parsers do
        break;
    }
  }
  return node;
}

function readAttribute(f: ProtoField, path: string, depth: number): AttributeProto {
  const a: AttributeProto = { name: '', type: AttributeType.UNDEFINED };
  for (const g of subReader(f, path).readAll()) {
    switch (g.field) {
      case 1:
        a.name = readString(g, `${path}.name`);
        break;
      case 2: {
        const out: number[] = [];
        readRepeatedFloats(g, `${path}.f`, out);
        a.f = out[out.length - 1];
        break;
      }
      case 3:
        a.i = protoInt(expectVarint(g, `${path}.i`), `${path}.i`, g.offset);
        break;
      case 4:
        a.s = expectBytes(g, `${path}.s`);
        break;
      case 5:
        a.t = readTensor(g, `${path}.t`);
        break;
      case 6:
        a.g = readGraph(g, `${path}.g`, depth + 1);
        break;
      case 7:
        readRepeatedFloats(g, `${path}.floats`, (a.floats ??= []));
        break;
      case 8:
        readRepeatedInts(g, `${path}.ints`, (a.ints ??= []));
        break;
      case 9:
        (a.strings ??= []).push(expectBytes(g, `${path}.strings`));
        break;
      case 20:
        a.type = protoInt(expectVarint(g, `${path}.type`), `${path}.type`, g.offset);
        break;
      default: // unknown or unused field: skipped, as protobuf parsers do
        break;
    }
  }
  return a;
}

function readTensor(f: ProtoField, path: string): TensorProto {
  const t: TensorProto = { name: '', dataType: DataType.UNDEFINED, dims: [] };
  for (const g of subReader(f, path).readAll()) {
    switch (g.field) {
      case 1:
        readRepeatedInts(g, `${path}.dims`, t.dims);
        break;
      case 2:
        t.dataType = protoInt(expectVarint(g, `${path}.data_type`), `${path}.data_type`, g.offset);
        break;
      case 4:
        readRepeatedFloats(g, `${path}.float_data`, (t.floatData ??= []));
        break;
      case 5:
        readRepeatedInts(g, `${path}.int32_data`, (t.int32Data ??= []));
        break;
      case 7:
        readRepeatedInts(g, `${path}.int64_data`, (t.int64Data ??= []));
        break;
      case 8:
        t.name = readString(g, `${path}.name`);
        break;
      case 9:
        t.rawData = expectBytes(g, `${path}.raw_data`);
        break;
      case 14:
        t.dataLocation = protoInt(expectVarint(g, `${path}.data_location`), path, g.offset);
        break;
      default: // unknown or unused field: skipped, as protobuf parsers do
        break;
    }
  }
  return t;
}

function readValueInfo(f: ProtoField, path: string): ValueInfoProto {
  const v: ValueInfoProto = { name: '', elemType: 0 };
  for (const g of subReader(f, path).readAll()) {
    if (g.field === 1) v.name = readString(g, `${path}.name`);
    else if (g.field === 2) {
      for (const h of subReader(g, `${path}.type`).readAll()) {
        if (h.field === 1) readTensorType(h, `${path}.type.tensor_type`, v);
      }
    }
  }
  return v;
}

function readTensorType(f: ProtoField, path: string, v: ValueInfoProto): void {
  for (const g of subReader(f, path).readAll()) {
    if (g.field === 1) v.elemType = protoInt(expectVarint(g, `${path}.elem_type`), path, g.offset);
    else if (g.field === 2) {
      const dims: Dim[] = [];
      for (const h of subReader(g, `${path}.shape`).readAll()) {
        if (h.field !== 1) continue;
        let dim: Dim;
        for (const d of subReader(h, `${path}.shape.dim[${dims.length}]`).readAll()) {
          if (d.field === 1) dim = protoInt(expectVarint(d, `${path}.dim_value`), path, d.offset);
          else if (d.field === 2) dim = readString(d, `${path}.dim_param`);
        }
        dims.push(dim);
      }
      v.shape = dims;
    }
  }
}
