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
 *
 * Written with the lab's own ONNX writer (src/onnx), the one its exporters use.
 */
import { attr, GraphBuilder } from '../../src/onnx/graph-builder';
import { DataType, encodeModel, IR_VERSION, type ModelProto } from '../../src/onnx/onnx-proto';

/** Opset 18: ReduceMax and ReduceSum both take their axes as an input (IR 8 covers it). */
const OPSET = 18;

export const TOKEN_LOGPROBS_INPUTS = { logits: 'logits', targets: 'targets' } as const;
export const TOKEN_LOGPROBS_OUTPUTS = { logp: 'logp_token', entropy: 'entropy' } as const;

/** logits: (rows, cols) float32; targets: (rows, 1) int32. */
export function tokenLogprobsGraph(rows: number, cols: number): ModelProto {
  const g = new GraphBuilder();
  const logits = g.input(TOKEN_LOGPROBS_INPUTS.logits);
  const targets = g.input(TOKEN_LOGPROBS_INPUTS.targets);
  const axis1 = g.ints('axis1', [1]);
  const keep = [attr.int('keepdims', 1)];
  const m = g.op('ReduceMax', [logits, axis1], 'm', keep);
  const s = g.op('Sub', [logits, m], 's');
  const e = g.op('Exp', [s], 'e');
  const se = g.op('ReduceSum', [e, axis1], 'se', keep);
  const lse = g.op('Log', [se], 'lse');
  const logp = g.op('Sub', [s, lse], 'logp');
  g.op('GatherElements', [logp, targets], TOKEN_LOGPROBS_OUTPUTS.logp, [attr.int('axis', 1)]);
  const p = g.op('Exp', [logp], 'p');
  const plogp = g.op('Mul', [p, logp], 'plogp');
  const negEntropy = g.op('ReduceSum', [plogp, axis1], 'neg_entropy', keep);
  g.op('Neg', [negEntropy], TOKEN_LOGPROBS_OUTPUTS.entropy);
  return {
    irVersion: IR_VERSION,
    opsetImports: [{ domain: '', version: OPSET }],
    producerName: 'agent-rl-lab bench',
    metadataProps: [],
    graph: {
      name: 'token_logprobs',
      nodes: g.nodes,
      initializers: g.initializers,
      inputs: [
        { name: logits, elemType: DataType.FLOAT, shape: [rows, cols] },
        { name: targets, elemType: DataType.INT32, shape: [rows, 1] },
      ],
      outputs: [
        { name: TOKEN_LOGPROBS_OUTPUTS.logp, elemType: DataType.FLOAT, shape: [rows, 1] },
        { name: TOKEN_LOGPROBS_OUTPUTS.entropy, elemType: DataType.FLOAT, shape: [rows, 1] },
      ],
    },
  };
}

export function tokenLogprobsModel(rows: number, cols: number): Uint8Array {
  return encodeModel(tokenLogprobsGraph(rows, cols));
}
