/**
 * The one error type of src/onnx: a file or model that cannot be read, written or loaded.
 * `reason` says what kind of problem it is (tests and the UI switch on it), `field` names where
 * (a protobuf field path, a tensor name, a metadata key), `offset` the byte where reading stopped.
 */

export type OnnxErrorReason =
  /** The bytes end inside a field: a cut download or a partial write. */
  | 'truncated'
  /** Bytes that are not protobuf, or protobuf that breaks onnx.proto's rules. */
  | 'malformed'
  /** A valid ONNX model, but not one this lab exported (no agent-rl-lab metadata). */
  | 'foreign'
  /** Our metadata, but a config or tokenizer that does not check out. */
  | 'config'
  /** A tensor of our layout that the file does not hold. */
  | 'missing-tensor'
  /** An initializer the layout has no place for. */
  | 'unexpected-tensor'
  /** A tensor with the right name and the wrong shape, type or length. */
  | 'tensor-mismatch'
  /** Our checksum does not match the bytes (a flipped bit, a cut copy), or it is missing. */
  | 'damaged'
  /** Bad input to an export or run function (shapes, ids, sizes). */
  | 'input';

export class OnnxError extends Error {
  override readonly name = 'OnnxError';
  constructor(
    readonly reason: OnnxErrorReason,
    readonly field: string,
    message: string,
    /** Byte offset in the file where the problem was found (reading errors only). */
    readonly offset?: number,
  ) {
    super(`onnx: ${field} ${message}${offset === undefined ? '' : ` (at byte ${offset})`}`);
  }
}
