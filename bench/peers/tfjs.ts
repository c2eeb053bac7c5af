/**
 * TensorFlow.js with its WebGPU backend, as a benchmark peer. Imported on first use: in Node the
 * backend only finds Dawn if globalThis.navigator.gpu exists before the backend module loads, so
 * the Node environment installs it first (bench/env/node.ts).
 */
import type * as TfCore from '@tensorflow/tfjs-core';

export interface TfjsModules {
  tf: typeof TfCore;
  version: string;
}

let loading: Promise<TfjsModules> | undefined;

export function loadTfjs(): Promise<TfjsModules> {
  loading ??= (async () => {
    const tf = await import('@tensorflow/tfjs-core');
    await import('@tensorflow/tfjs-backend-webgpu');
    if (!(await tf.setBackend('webgpu'))) {
      throw new Error('tfjs: the WebGPU backend did not initialise (no navigator.gpu adapter?)');
    }
    await tf.ready();
    return { tf, version: tf.version_core };
  })();
  return loading;
}

/**
 * Token log-probs and entropy the way a tfjs user writes them: logSoftmax over the vocabulary,
 * a batched gather of each row's target column, and entropy = −Σ p·log p.
 * logits: (N, V) tensor, targets: (N, 1) int32 tensor. Returns (N) and (N) tensors.
 *
 * Not a gather of the flat index n·V + t_n: tfjs-backend-webgpu's gather loses integer precision
 * above 2^24 (wrong rows at 4096 × 32768), the batched gather (batchDims = 1) does not.
 */
export function tfjsTokenLogprobs(
  tf: typeof TfCore,
  logits: TfCore.Tensor2D,
  targets: TfCore.Tensor2D,
): [TfCore.Tensor1D, TfCore.Tensor1D] {
  return tf.tidy(() => {
    const logp = tf.logSoftmax(logits, 1);
    const picked = tf.reshape(tf.gather(logp, targets, 1, 1), [-1]) as TfCore.Tensor1D;
    const entropy = tf.neg(tf.sum(tf.mul(tf.exp(logp), logp), 1)) as TfCore.Tensor1D;
    return [picked, entropy];
  });
}
