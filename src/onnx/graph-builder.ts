/**
 * A small helper to write ONNX graphs by hand: named nodes, Constant nodes for graph constants,
 * initializers for weights, and the tensor encodings (raw_data, little-endian).
 *
 * Graph constants (index lists, shapes, the causal mask, GELU coefficients) are Constant NODES,
 * not initializers, so that every initializer of an exported model is a parameter: the importer
 * can then call any initializer it does not know "unexpected".
 */
import { OnnxError } from './onnx-error';
import {
  AttributeType,
  DataType,
  type AttributeProto,
  type NodeProto,
  type TensorProto,
} from './onnx-proto';

export const attr = {
  int: (name: string, i: number): AttributeProto => ({ name, type: AttributeType.INT, i }),
  float: (name: string, f: number): AttributeProto => ({ name, type: AttributeType.FLOAT, f }),
  ints: (name: string, ints: number[]): AttributeProto => ({
    name,
    type: AttributeType.INTS,
    ints,
  }),
  tensor: (name: string, t: TensorProto): AttributeProto => ({
    name,
    type: AttributeType.TENSOR,
    t,
  }),
};

/** A float32 tensor with its elements as little-endian raw_data. */
export function floatTensor(name: string, dims: number[], data: ArrayLike<number>): TensorProto {
  const raw = new Uint8Array(data.length * 4);
  const view = new DataView(raw.buffer);
  for (let i = 0; i < data.length; i++) view.setFloat32(i * 4, data[i]!, true);
  return { name, dataType: DataType.FLOAT, dims, rawData: raw };
}

/** An int64 tensor as little-endian raw_data (8 bytes per element). */
export function int64Tensor(name: string, dims: number[], data: readonly number[]): TensorProto {
  const raw = new Uint8Array(data.length * 8);
  const view = new DataView(raw.buffer);
  data.forEach((v, i) => view.setBigInt64(i * 8, BigInt(v), true));
  return { name, dataType: DataType.INT64, dims, rawData: raw };
}

/** A bool tensor: one byte per element, 0 or 1. */
export function boolTensor(name: string, dims: number[], data: Uint8Array): TensorProto {
  return { name, dataType: DataType.BOOL, dims, rawData: data.slice() };
}

export class GraphBuilder {
  readonly nodes: NodeProto[] = [];
  readonly initializers: TensorProto[] = [];
  private readonly names = new Set<string>();

  /** Declares a graph input's name (so no node output can take it). */
  input(name: string): string {
    return this.claim(name);
  }

  /**
   * Adds a node `opType(inputs) → outputs` (each output name must be new) and returns the outputs.
   * The node is named after its first output.
   */
  node(
    opType: string,
    inputs: string[],
    outputs: string[],
    attributes: AttributeProto[] = [],
  ): string[] {
    for (const output of outputs) this.claim(output);
    this.nodes.push({ opType, inputs, outputs, name: outputs[0]!, attributes });
    return outputs;
  }

  /** A node with one output, named `output`. */
  op(opType: string, inputs: string[], output: string, attributes: AttributeProto[] = []): string {
    return this.node(opType, inputs, [output], attributes)[0]!;
  }

  /** A Constant node holding `tensor` (its name becomes the node's output). */
  constant(tensor: TensorProto): string {
    return this.op('Constant', [], tensor.name, [attr.tensor('value', { ...tensor, name: '' })]);
  }

  /** A float32 scalar constant (rank 0), for broadcasting with Mul/Add/Where. */
  scalar(name: string, value: number): string {
    return this.constant(floatTensor(name, [], [value]));
  }

  /** A 1-D int64 constant (indices, axes, shapes). */
  ints(name: string, values: number[]): string {
    return this.constant(int64Tensor(name, [values.length], values));
  }

  /** A float32 weight initializer, named as in the parameter layout. */
  initializer(name: string, dims: number[], data: ArrayLike<number>): string {
    this.claim(name);
    this.initializers.push(floatTensor(name, dims, data));
    return name;
  }

  /**
   * y = x·Wᵀ + b (PyTorch's nn.Linear) with W (out, in) stored as our layout has it, under its
   * own name. A Transpose node turns W into (in, out) for MatMul; onnxruntime folds a Transpose
   * of an initializer into a constant when the session is created (constant folding), so it
   * costs nothing per run. x: (…, in) → y: (…, out).
   */
  linear(x: string, w: string, b: string | undefined, output: string): string {
    const wT = this.op('Transpose', [w], `${w}.T`, [attr.ints('perm', [1, 0])]);
    if (b === undefined) return this.op('MatMul', [x, wT], output);
    const xw = this.op('MatMul', [x, wT], `${output}.matmul`);
    return this.op('Add', [xw, b], output);
  }

  private claim(name: string): string {
    if (name === '' || this.names.has(name)) {
      throw new OnnxError('input', 'graph', `value name "${name}" is empty or used twice`);
    }
    this.names.add(name);
    return name;
  }
}
