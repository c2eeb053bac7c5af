/**
 * The token log-probs (+ entropy) computation as an ONNX graph of elementary ops, for the ONNX
 * Runtime peers. Deliberately NOT the LogSoftmax op: ORT's WebGPU EP silently hands LogSoftmax to
 * the CPU EP on software adapters, so the decomposition keeps every node on the GPU.
 *
 *   m    = ReduceMax(z, axis 1)            (N, 1)
 *   s    = z − m                           (N, V)
 *   lse  = Log(ReduceSum(Exp(s), axis 1))  (N, 1)
 *   logp = s − lse                         (N, V)
 *   logp_token = GatherElements(logp, targets, axis 1)   (N, 1)
 *   entropy    = −ReduceSum(Exp(logp) · logp, axis 1)    (N, 1)
 */
import { encodeModel, type OnnxGraph } from './model';

/** Opset 18: ReduceMax and ReduceSum both take their axes as an input. */
const OPSET = 18;

export const TOKEN_LOGPROBS_INPUTS = { logits: 'logits', targets: 'targets' } as const;
export const TOKEN_LOGPROBS_OUTPUTS = { logp: 'logp_token', entropy: 'entropy' } as const;

/** logits: (rows, cols) float32; targets: (rows, 1) int32. */
export function tokenLogprobsGraph(rows: number, cols: number): OnnxGraph {
  const keep = { keepdims: 1 };
  return {
    name: 'token_logprobs',
    opset: OPSET,
    inputs: [
      { name: 'logits', type: 'float', dims: [rows, cols] },
      { name: 'targets', type: 'int32', dims: [rows, 1] },
    ],
    outputs: [
      { name: 'logp_token', type: 'float', dims: [rows, 1] },
      { name: 'entropy', type: 'float', dims: [rows, 1] },
    ],
    initializers: [{ name: 'axis1', type: 'int64', dims: [1], data: BigInt64Array.of(1n) }],
    nodes: [
      { op: 'ReduceMax', inputs: ['logits', 'axis1'], outputs: ['m'], attributes: keep },
      { op: 'Sub', inputs: ['logits', 'm'], outputs: ['s'] },
      { op: 'Exp', inputs: ['s'], outputs: ['e'] },
      { op: 'ReduceSum', inputs: ['e', 'axis1'], outputs: ['se'], attributes: keep },
      { op: 'Log', inputs: ['se'], outputs: ['lse'] },
      { op: 'Sub', inputs: ['s', 'lse'], outputs: ['logp'] },
      {
        op: 'GatherElements',
        inputs: ['logp', 'targets'],
        outputs: ['logp_token'],
        attributes: { axis: 1 },
      },
      { op: 'Exp', inputs: ['logp'], outputs: ['p'] },
      { op: 'Mul', inputs: ['p', 'logp'], outputs: ['plogp'] },
      { op: 'ReduceSum', inputs: ['plogp', 'axis1'], outputs: ['neg_entropy'], attributes: keep },
      { op: 'Neg', inputs: ['neg_entropy'], outputs: ['entropy'] },
    ],
  };
}

export function tokenLogprobsModel(rows: number, cols: number): Uint8Array {
  return encodeModel(tokenLogprobsGraph(rows, cols));
}
