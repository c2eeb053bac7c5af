/**
 * GPU wrapper for kernels/nn/next_token.wgsl; CPU twin: src/ops/nn/next-token.ts.
 * Dispatch: one invocation per row.
 */
import source from '../../../../kernels/nn/next_token.wgsl?raw';
import {
  MAX_STOP_TOKENS,
  checkNextTokenShape,
  type NextTokenRule,
  type NextTokenShape,
} from '../../../ops/nn/next-token';
import { checkInt } from '../../../ops/validate';
import type { BufferRef, CommandBatch } from '../../batch';
import type { GpuContext } from '../../context';
import { defineKernel } from '../../kernel';

const WORKGROUP_SIZE = 64;

export const nextTokenKernel = defineKernel({
  name: 'next_token',
  source,
  uniforms: [
    { name: 'batch', type: 'u32' },
    { name: 'prompt_width', type: 'u32' },
    { name: 'max_length', type: 'u32' },
    { name: 'pos', type: 'u32' },
    { name: 'max_new_tokens', type: 'u32' },
    { name: 'pad_token', type: 'i32' },
    { name: 'stop_count', type: 'u32' },
    { name: 'stop0', type: 'i32' },
    { name: 'stop1', type: 'i32' },
    { name: 'stop2', type: 'i32' },
    { name: 'stop3', type: 'i32' },
  ],
  storage: [
    { name: 'prompts', access: 'read' },
    { name: 'sampled', access: 'read' },
    { name: 'sampledLogprobs', access: 'read' },
    { name: 'input', access: 'read_write' },
    { name: 'done', access: 'read_write' },
    { name: 'tokens', access: 'read_write' },
    { name: 'logprobs', access: 'read_write' },
    { name: 'mask', access: 'read_write' },
  ],
});

type NextTokenBuffers = Record<(typeof nextTokenKernel.storage)[number]['name'], BufferRef>;

/** Most stop tokens the kernel takes (they travel as uniforms). */

/** The kernel's `prompts` buffer: lengths (B), then the padded prompt tokens (B, P). */
export function packPromptData(prompts: Int32Array, promptLengths: Int32Array): Int32Array {
  const data = new Int32Array(promptLengths.length + prompts.length);
  data.set(promptLengths);
  data.set(prompts, promptLengths.length);
  return data;
}

/** Records one step. buffers.prompts: packPromptData() of the prompts. */
export async function encodeNextToken(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: NextTokenBuffers,
  pos: number,
  shape: NextTokenShape,
  rule: Pick<NextTokenRule, 'maxNewTokens' | 'padToken' | 'stopTokens'>,
): Promise<void> {
  checkNextTokenShape(shape, pos);
  checkInt('nextToken', 'maxNewTokens', rule.maxNewTokens, 1, shape.maxLength);
  checkInt('nextToken', 'stopTokens.length', rule.stopTokens.length, 0, MAX_STOP_TOKENS);
  const stop = (i: number) => rule.stopTokens[i] ?? -1;
  const pipeline = await gpu.pipelines.get(nextTokenKernel, { WORKGROUP_SIZE });
  batch.dispatch(nextTokenKernel, {
    pipeline,
    buffers,
    uniforms: {
      batch: shape.batch,
      prompt_width: shape.promptWidth,
      max_length: shape.maxLength,
      pos,
      max_new_tokens: rule.maxNewTokens,
      pad_token: rule.padToken,
      stop_count: rule.stopTokens.length,
      stop0: stop(0),
      stop1: stop(1),
      stop2: stop(2),
      stop3: stop(3),
    },
    workgroups: [Math.ceil(shape.batch / WORKGROUP_SIZE)],
  });
}
