/**
 * onnx.proto messages: golden bytes worked out by hand from the field numbers in onnx.proto (each
 * byte explained beside it), decode(encode(x)) = x, and the decoder's refusals.
 */
import { describe, expect, it } from 'vitest';
import { OnnxError } from '../../src/onnx/onnx-error';
import {
  AttributeType,
  DataType,
  decodeModel,
  encodeModel,
  type GraphProto,
  type ModelProto,
} from '../../src/onnx/onnx-proto';
import { ProtoWriter } from '../../src/onnx/protobuf';

const ascii = (s: string) => [...s].map((c) => c.charCodeAt(0));
const emptyGraph = (): GraphProto => ({
  name: 'g',
  nodes: [],
  initializers: [],
  inputs: [],
  outputs: [],
});

function model(graph: GraphProto, extra: Partial<ModelProto> = {}): ModelProto {
  return { irVersion: 8, opsetImports: [], graph, metadataProps: [], ...extra };
}

/** The bytes of ModelProto { ir_version 8, graph { <graphBody> } } (field 7 = 0x3A). */
function modelWithGraph(graphBody: number[]): number[] {
  return [0x08, 0x08, 0x3a, graphBody.length, ...graphBody];
}

function thrown(fn: () => unknown): OnnxError {
  try {
    fn();
  } catch (error) {
    expect(error).toBeInstanceOf(OnnxError);
    return error as OnnxError;
  }
  throw new Error('expected an OnnxError');
}

describe('ONNX messages: golden bytes', () => {
  it('ModelProto with opset and metadata', () => {
    const bytes = encodeModel(
      model(emptyGraph(), {
        opsetImports: [{ domain: '', version: 17 }],
        metadataProps: [{ key: 'k', value: 'v' }],
      }),
    );
    expect([...bytes]).toEqual([
      ...[0x08, 0x08], // ir_version (field 1, varint) = 8
      ...[0x42, 0x02, 0x10, 0x11], // opset_import (8 → 0x42): version (2 → 0x10) = 17; domain "" left out
      ...[0x72, 0x06, 0x0a, 0x01, 0x6b, 0x12, 0x01, 0x76], // metadata_props (14 → 0x72): key "k", value "v"
      ...[0x3a, 0x03, 0x12, 0x01, 0x67], // graph (7 << 3 | 2 = 0x3A), written last: name (2) = "g"
    ]);
  });

  it('NodeProto with an int attribute of −1', () => {
    const graph = emptyGraph();
    graph.name = '';
    graph.nodes.push({
      opType: 'Add',
      inputs: ['a', 'b'],
      outputs: ['c'],
      attributes: [{ name: 'axis', type: AttributeType.INT, i: -1 }],
    });
    const attribute = [
      ...[0x0a, 0x04, ...ascii('axis')], // name (1)
      ...[0x18, ...Array(9).fill(0xff), 0x01], // i (3 → 0x18) = −1 as a 10-byte varint
      ...[0xa0, 0x01, 0x02], // type (20 << 3 = 160 → varint 0xA0 0x01) = INT (2)
    ];
    const node = [
      ...[0x0a, 0x01, 0x61, 0x0a, 0x01, 0x62], // input (1) "a", "b"
      ...[0x12, 0x01, 0x63], // output (2) "c"
      ...[0x22, 0x03, ...ascii('Add')], // op_type (4 → 0x22)
      ...[0x2a, attribute.length, ...attribute], // attribute (5 → 0x2A)
    ];
    const graphBody = [0x0a, node.length, ...node, 0x12, 0x00]; // node (1), then name (2) = ""
    expect([...encodeModel(model(graph))]).toEqual(modelWithGraph(graphBody));
  });

  it('TensorProto with float raw_data and ValueInfoProto with a symbolic dim', () => {
    const graph = emptyGraph();
    graph.name = '';
    graph.initializers.push({
      name: 'w',
      dataType: DataType.FLOAT,
      dims: [2],
      rawData: Uint8Array.from([0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0]), // 1.0, −2.0
    });
    graph.inputs.push({ name: 'x', elemType: DataType.FLOAT, shape: ['b', 3] });
    const tensor = [
      ...[0x08, 0x02], // dims (1) = 2, unpacked as onnx.proto (proto2) declares it
      ...[0x10, 0x01], // data_type (2) = FLOAT
      ...[0x42, 0x01, 0x77], // name (8 → 0x42) = "w"
      ...[0x4a, 0x08, 0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0xc0], // raw_data (9 → 0x4A)
    ];
    const shape = [
      ...[0x0a, 0x03, 0x12, 0x01, 0x62], // dim (1) { dim_param (2) = "b" }
      ...[0x0a, 0x02, 0x08, 0x03], // dim (1) { dim_value (1) = 3 }
    ];
    const tensorType = [0x08, 0x01, 0x12, shape.length, ...shape]; // elem_type (1), shape (2)
    const typeProto = [0x0a, tensorType.length, ...tensorType]; // tensor_type (1)
    const valueInfo = [0x0a, 0x01, 0x78, 0x12, typeProto.length, ...typeProto]; // name "x", type (2)
    const graphBody = [
      ...[0x12, 0x00], // name (2) = ""
      ...[0x2a, tensor.length, ...tensor], // initializer (5 → 0x2A)
      ...[0x5a, valueInfo.length, ...valueInfo], // input (11 → 0x5A)
    ];
    expect([...encodeModel(model(graph))]).toEqual(modelWithGraph(graphBody));
  });
});

describe('ONNX messages: decoding', () => {
  it('decode(encode(model)) gives the model back', () => {
    const graph: GraphProto = {
      name: 'net',
      nodes: [
        {
          opType: 'Constant',
          inputs: [],
          outputs: ['c'],
          name: 'c',
          attributes: [
            {
              name: 'value',
              type: AttributeType.TENSOR,
              t: { name: '', dataType: DataType.INT64, dims: [2], int64Data: [-3, 2 ** 40] },
            },
          ],
        },
        {
          opType: 'Transpose',
          inputs: ['w'],
          outputs: ['wT'],
          attributes: [
            { name: 'perm', type: AttributeType.INTS, ints: [1, 0] },
            { name: 'f', type: AttributeType.FLOAT, f: 0.5 },
            { name: 'fs', type: AttributeType.FLOATS, floats: [1.5, -2] },
          ],
          domain: 'custom.domain',
        },
      ],
      initializers: [
        { name: 'w', dataType: DataType.FLOAT, dims: [2, 1], floatData: [0.25, -1] },
        { name: 'r', dataType: DataType.FLOAT, dims: [], rawData: Uint8Array.of(0, 0, 128, 63) },
      ],
      inputs: [{ name: 'x', elemType: DataType.INT64, shape: ['batch', 'seq'] }],
      outputs: [{ name: 'y', elemType: DataType.FLOAT, shape: ['batch', undefined, 7] }],
    };
    const original = model(graph, {
      opsetImports: [
        { domain: '', version: 17 },
        { domain: 'com.example', version: 1 },
      ],
      producerName: 'p',
      producerVersion: '1.0',
      docString: 'doc ✓',
      metadataProps: [{ key: 'a/b', value: '{"x":1}' }],
    });
    expect(decodeModel(encodeModel(original))).toEqual(original);
  });

  it('accepts packed dims (other writers use them) and skips unknown fields', () => {
    const tensor = new ProtoWriter()
      .packedVarints(1, [4, 5]) // dims, packed
      .varint(2, DataType.FLOAT)
      .string(8, 't')
      .varint(999, 1) // unknown field: skipped
      .finish();
    const bytes = new ProtoWriter()
      .varint(1, 8)
      .message(7, (g) => g.bytes(5, tensor))
      .string(20, 'unknown model field')
      .finish();
    expect(decodeModel(bytes).graph.initializers[0]).toEqual({
      name: 't',
      dataType: DataType.FLOAT,
      dims: [4, 5],
    });
  });

  const bad: { name: string; bytes: () => Uint8Array; reason: string; says: RegExp }[] = [
    { name: 'no bytes', bytes: () => new Uint8Array(0), reason: 'truncated', says: /is empty/ },
    {
      name: 'no graph',
      bytes: () => new ProtoWriter().varint(1, 8).finish(),
      reason: 'malformed',
      says: /has no graph \(field 7\): not an ONNX model/,
    },
    {
      name: 'no ir_version',
      bytes: () => new ProtoWriter().message(7, (g) => g.string(2, 'g')).finish(),
      reason: 'malformed',
      says: /has no ir_version/,
    },
    {
      name: 'graph as a varint',
      bytes: () => new ProtoWriter().varint(1, 8).varint(7, 3).finish(),
      reason: 'malformed',
      says: /ModelProto\.graph must be length-delimited/,
    },
    {
      name: 'a cut graph',
      bytes: () => encodeModel(model({ ...emptyGraph(), name: 'x'.repeat(40) })).subarray(0, 20),
      reason: 'truncated',
      says: /ModelProto field 7 declares 42 bytes, but only 16 remain/,
    },
    {
      name: 'a node name that is not UTF-8',
      bytes: () =>
        new ProtoWriter()
          .varint(1, 8)
          .message(7, (g) => g.message(1, (n) => n.bytes(3, Uint8Array.of(0xc3))))
          .finish(),
      reason: 'malformed',
      says: /ModelProto\.graph\.node\[0\]\.name is not valid UTF-8/,
    },
  ];
  it.each(bad)('refuses $name', ({ bytes, reason, says }) => {
    const error = thrown(() => decodeModel(bytes()));
    expect(error.reason).toBe(reason);
    expect(error.message).toMatch(says);
  });
});
