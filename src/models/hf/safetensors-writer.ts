/**
 * Writing safetensors files (adapters the lab exports, test fixtures): tensors in, bytes out.
 * As the reference writer does, tensors are laid out in the data in header order, and the JSON
 * header is padded with spaces to a multiple of 8 bytes so the data starts 8-aligned.
 */
import { f32ToF16 } from '../../util/half-float';
import { DTYPE_BYTES, type SafetensorsDtype } from './safetensors';

export interface TensorToWrite {
  name: string;
  shape: readonly number[];
  dtype: SafetensorsDtype;
  /**
   * F32: numbers. F16: numbers (rounded to nearest even) or the raw bits (a Uint16Array). BF16:
   * the raw bits only, since how to round to bf16 is the caller's choice.
   */
  data: Float32Array | Uint16Array | readonly number[];
}

/** The safetensors bytes of `tensors` (names unique; '__metadata__' is not a tensor name). */
export function writeSafetensors(
  tensors: readonly TensorToWrite[],
  metadata?: Record<string, string>,
): Uint8Array<ArrayBuffer> {
  const header: Record<string, unknown> = {};
  if (metadata) header.__metadata__ = metadata;
  let offset = 0;
  const payloads: Uint8Array[] = [];
  for (const tensor of tensors) {
    if (tensor.name === '__metadata__' || Object.hasOwn(header, tensor.name)) {
      throw new Error(`writeSafetensors: tensor name "${tensor.name}" is reserved or repeated`);
    }
    const size = tensor.shape.reduce((a, b) => a * b, 1);
    if (tensor.data.length !== size) {
      throw new Error(
        `writeSafetensors: tensor "${tensor.name}" has ${tensor.data.length} values for shape [${tensor.shape.join(', ')}]`,
      );
    }
    const bytes = encode(tensor);
    header[tensor.name] = {
      dtype: tensor.dtype,
      shape: [...tensor.shape],
      data_offsets: [offset, offset + bytes.length],
    };
    payloads.push(bytes);
    offset += bytes.length;
  }
  let json = new TextEncoder().encode(JSON.stringify(header));
  const padding = (8 - (json.length % 8)) % 8;
  if (padding > 0) {
    const padded = new Uint8Array(json.length + padding).fill(0x20);
    padded.set(json);
    json = padded;
  }
  const out = new Uint8Array(8 + json.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(json.length), true);
  out.set(json, 8);
  let at = 8 + json.length;
  for (const bytes of payloads) {
    out.set(bytes, at);
    at += bytes.length;
  }
  return out;
}

/** The tensor's data as little-endian bytes of its dtype. */
function encode(tensor: TensorToWrite): Uint8Array {
  const itemBytes = DTYPE_BYTES[tensor.dtype];
  const out = new Uint8Array(tensor.data.length * itemBytes);
  const view = new DataView(out.buffer);
  const { data } = tensor;
  if (tensor.dtype === 'F32') {
    if (data instanceof Uint16Array)
      throw new Error(`writeSafetensors: "${tensor.name}" F32 from 16-bit words`);
    for (let i = 0; i < data.length; i++) view.setFloat32(4 * i, data[i]!, true);
  } else if (data instanceof Uint16Array) {
    for (let i = 0; i < data.length; i++) view.setUint16(2 * i, data[i]!, true);
  } else if (tensor.dtype === 'F16') {
    for (let i = 0; i < data.length; i++) view.setUint16(2 * i, f32ToF16(data[i]!), true);
  } else {
    throw new Error(`writeSafetensors: "${tensor.name}" BF16 takes its raw bits (a Uint16Array)`);
  }
  return out;
}
