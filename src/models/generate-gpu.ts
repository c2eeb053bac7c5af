/**
 * The GPU generation loop: the steps of generateCpu() (generate.ts) recorded as dispatches — decode
 * step through the KV cache, sample, next-token rule — with the input tokens, the sequences and
 * the done flags resident on the GPU. Steps are submitted in chunks; after each chunk the done
 * flags are read (one CPU-GPU sync point per chunk) so a batch whose rows have all stopped ends early.
 */
import { encodeNextToken, packPromptData } from '../gpu/kernels/nn/next-token';
import { encodeSample } from '../gpu/kernels/nn/sample';
import { PooledBuffers } from '../gpu/kernels/run-convenience';
import { startGeneration } from '../ops/nn/next-token';
import { packPrompts, type GenerateRequest, type Generation } from './generate';
import { GpuKvCache, type TransformerGpu } from './transformer-gpu';

export interface GenerateGpuOptions {
  /** Decode steps per submission (and per read of the done flags). Default 8. */
  chunk?: number;
}

export async function generateGpu(
  model: TransformerGpu,
  request: GenerateRequest,
  options: GenerateGpuOptions = {},
): Promise<Generation> {
  const { gpu, config } = model;
  const { prompts, promptLengths, shape } = packPrompts(config, request);
  const { batch: B, maxLength: L } = shape;
  const chunk = Math.max(1, Math.floor(options.chunk ?? 8));
  const initial = startGeneration(prompts, shape, request.padToken);

  const pooled = new PooledBuffers(gpu);
  const cache = new GpuKvCache(gpu, config, B, L);
  try {
    const ws = model.workspaceFor(B, 1);
    gpu.device.queue.writeBuffer(ws.tokens, 0, initial.input.buffer, 0, initial.input.byteLength);
    const buffers = {
      prompts: pooled.upload(packPromptData(prompts, promptLengths), 'prompts'),
      sampled: pooled.storage(B, 'sampled tokens'),
      sampledLogprobs: pooled.storage(B, 'sampled log-probs'),
      input: ws.tokens,
      done: pooled.upload(initial.done, 'done'),
      tokens: pooled.upload(initial.tokens, 'sequences'),
      logprobs: pooled.upload(initial.logprobs, 'sequence log-probs'),
      mask: pooled.upload(initial.mask, 'generated mask'),
    };
    const rule = {
      maxNewTokens: request.maxNewTokens,
      padToken: request.padToken,
      stopTokens: Int32Array.from(request.stopTokens),
    };
    for (let start = 0; start + 1 < L; start += chunk) {
      const batch = gpu.beginBatch('generate');
      for (let pos = start; pos < Math.min(start + chunk, L - 1); pos++) {
        await model.encodeForward(batch, ws, { pos, cache });
        await encodeSample(
          gpu,
          batch,
          { logits: ws.logits, tokens: buffers.sampled, logprobs: buffers.sampledLogprobs },
          B,
          config.vocab,
          request.sampling,
          request.seed,
          pos,
        );
        await encodeNextToken(gpu, batch, buffers, pos, shape, rule);
      }
      batch.submit();
      // Sync point: one small read per chunk decides whether to go on.
      const done = new Int32Array(await gpu.read(buffers.done, B * 4));
      if (done.every((d) => d === 1)) break;
    }
    const [tokens, logprobs, mask] = await Promise.all([
      gpu.read(buffers.tokens, B * L * 4),
      gpu.readF32(buffers.logprobs, B * L),
      gpu.readF32(buffers.mask, B * L),
    ]);
    return {
      batch: B,
      maxLength: L,
      tokens: new Int32Array(tokens),
      logprobs,
      mask,
      promptLengths,
    };
  } finally {
    cache.release();
    pooled.release();
  }
}
