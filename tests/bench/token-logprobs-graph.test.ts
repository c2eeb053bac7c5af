/**
 * The ONNX Runtime peer of the token-logprobs benchmark computes what the lab's op computes: its
 * graph, written with src/onnx, run by onnxruntime-web's wasm build in Node against
 * tokenLogprobs() on the same logits.
 */
import { describe, expect, it } from 'vitest';
import { decodeModel } from '../../src/onnx/onnx-proto';
import { nodeOrtOptions } from '../../src/onnx/ort-node';
import { loadOrt } from '../../src/onnx/ort-reference';
import { tokenLogprobs } from '../../src/ops/token-logprobs';
import { seededRandom } from '../../src/util/random';
import {
  TOKEN_LOGPROBS_INPUTS,
  TOKEN_LOGPROBS_OUTPUTS,
  tokenLogprobsModel,
} from '../../bench/onnx/token-logprobs-graph';

describe('the benchmark ONNX graph for token log-probs', () => {
  it('decodes as opset 18 of elementary ops, without LogSoftmax', () => {
    const model = decodeModel(tokenLogprobsModel(3, 5));
    expect(model.opsetImports).toEqual([{ domain: '', version: 18 }]);
    const ops = model.graph.nodes.map((n) => n.opType);
    expect(ops).not.toContain('LogSoftmax');
    expect(ops).toContain('GatherElements');
    expect(model.graph.inputs.map((v) => [v.name, v.shape])).toEqual([
      ['logits', [3, 5]],
      ['targets', [3, 1]],
    ]);
  });

  it('gives the log-prob of each target and the entropy of each row, as the op does', async () => {
    const [rows, cols] = [6, 37];
    const random = seededRandom(7);
    const logits = Float32Array.from({ length: rows * cols }, () => (random() - 0.5) * 8);
    const targets = Int32Array.from({ length: rows }, () => Math.floor(random() * cols));
    const ort = await loadOrt(nodeOrtOptions());
    const session = await ort.InferenceSession.create(tokenLogprobsModel(rows, cols), {
      executionProviders: ['wasm'],
    });
    try {
      const out = await session.run({
        [TOKEN_LOGPROBS_INPUTS.logits]: new ort.Tensor('float32', logits, [rows, cols]),
        [TOKEN_LOGPROBS_INPUTS.targets]: new ort.Tensor('int32', targets, [rows, 1]),
      });
      const want = tokenLogprobs(logits, targets, rows, cols);
      const logp = out[TOKEN_LOGPROBS_OUTPUTS.logp]!.data as Float32Array;
      const entropy = out[TOKEN_LOGPROBS_OUTPUTS.entropy]!.data as Float32Array;
      for (let n = 0; n < rows; n++) {
        expect(logp[n]).toBeCloseTo(want.logp[n]!, 4);
        expect(entropy[n]).toBeCloseTo(want.entropy![n]!, 4);
      }
      expect(Math.min(...entropy)).toBeGreaterThan(0.5); // random rows are far from one-hot
    } finally {
      await session.release();
    }
  });
});
