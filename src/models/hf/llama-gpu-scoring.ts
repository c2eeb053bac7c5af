/**
 * A frozen Llama-family model's network for the GPU steps (lm-gpu-steps.ts): the forward alone,
 * through one LlamaWorkspace reused by every layer (llama-gpu.ts, as teacher-forced scoring runs
 * it), so that a KL reference (LlamaGpuLanguageModel.withoutAdapters) keeps no activations for a
 * backward it never takes — a training pass's per-layer buffers would double a KL run's memory.
 */
import type { CommandBatch } from '../../gpu/batch';
import type { GpuContext } from '../../gpu/context';
import { OpInputError } from '../../ops/errors';
import { checkTokenIds } from '../../ops/nn/embedding';
import { rotaryTable } from '../../ops/nn/rotary';
import { checkInt, checkLength } from '../../ops/validate';
import type { GpuNetwork, GpuPassWorkspace } from '../lm-gpu-steps';
import { LlamaWorkspace, recordLlamaForward } from './llama-gpu';
import { type GpuRotaryTable, uploadRotaryTable } from './llama-gpu-ops';
import type { LlamaGpuWeights } from './llama-gpu-weights';

const OP = 'llamaScoringGpu';

/** One (B, T) scoring workspace with its rotary table; `logits` is the workspace's. */
export interface ScoringPass extends GpuPassWorkspace {
  ws: LlamaWorkspace;
  table: GpuRotaryTable;
}

export class LlamaScoringNetwork implements GpuNetwork<ScoringPass> {
  /** The last (B, T)'s workspace, kept for the next call of the same shape. */
  private kept: ScoringPass | undefined;

  constructor(
    private readonly gpu: GpuContext,
    private readonly weights: LlamaGpuWeights,
  ) {}

  writeTokens(tokens: Int32Array, batch: number, seq: number): ScoringPass {
    const { spec } = this.weights;
    checkInt(OP, 'batch', batch, 1, 2 ** 16);
    checkInt(OP, 'seq', seq, 1, spec.context);
    checkLength(OP, 'tokens', tokens, batch * seq, 'batch × seq');
    checkTokenIds(OP, tokens, spec.vocab, seq);
    if (this.kept?.ws.batch !== batch || this.kept.ws.seq !== seq) {
      this.release();
      const ws = new LlamaWorkspace(this.gpu, spec, batch, seq);
      const table = uploadRotaryTable(this.gpu, rotaryTable(seq, spec.headDim, spec.rotaryBase));
      const positions = Uint32Array.from({ length: batch * seq }, (_, r) => r % seq);
      this.gpu.device.queue.writeBuffer(ws.positions, 0, positions);
      this.kept = { ws, table, logits: ws.logits };
    }
    this.gpu.device.queue.writeBuffer(this.kept.ws.tokens, 0, Int32Array.from(tokens));
    return this.kept;
  }

  encodeForward(pass: CommandBatch, scoring: ScoringPass): Promise<void> {
    return recordLlamaForward(this.gpu, pass, this.weights, scoring.ws, scoring.table);
  }

  encodeBackward(): Promise<void> {
    throw new OpInputError(OP, 'adapters', 'none: a frozen model takes no backward');
  }

  release(): void {
    this.kept?.table.release();
    this.kept?.ws.release();
    this.kept = undefined;
  }
}
