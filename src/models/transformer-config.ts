/**
 * Configuration of the decoder-only transformer policy (GPT-2 shaped): token + learned position
 * embeddings, `layers` pre-LayerNorm blocks (LN → causal multi-head attention → residual; LN → GELU
 * MLP of width 4·C → residual), a final LayerNorm, and an LM head (tied to the token embedding or
 * separate), optionally a scalar value head for a PPO critic.
 *
 * Shapes in comments use B = batch, T = sequence, C = width, NH = heads, hs = C / NH, V = vocab.
 */
import { OpInputError } from '../ops/errors';
import { checkInt, checkOneOf } from '../ops/validate';

export interface TransformerConfig {
  /** Vocabulary size V, 2–256 (the character tokenizer's size). */
  vocab: number;
  /** Context length: the largest T, 2–256 (learned positions, one per slot). */
  context: number;
  /** Width C (d_model), 16–256; a multiple of `heads`. */
  width: number;
  /** Transformer blocks, 1–6. */
  layers: number;
  /** Attention heads NH, 1–8; head size hs = width / heads. */
  heads: number;
  /** LM head shares the token embedding matrix (GPT-2 does). */
  tiedEmbeddings: boolean;
  /** Adds a scalar value head on the final LayerNorm output (PPO critic sharing the trunk). */
  valueHead: boolean;
}

/**
 * The shape of the lab's language models (the worker builds this one; the CLI's default flags
 * match it). A run of another shape can be compared in the lab but not trained on there.
 */
export const LAB_MODEL_SHAPE = Object.freeze({ width: 64, layers: 2, heads: 4 });

/** The trunk's size: what a run file records so the lab can tell whether it builds the same. */
export type ModelShape = Pick<TransformerConfig, 'width' | 'layers' | 'heads'>;

export const TRANSFORMER_LIMITS = {
  vocab: [2, 256],
  context: [2, 256],
  width: [16, 256],
  layers: [1, 6],
  heads: [1, 8],
} as const;

/** Throws OpInputError naming the field and its valid range. */
export function checkTransformerConfig(config: TransformerConfig): void {
  const op = 'TransformerConfig';
  for (const [field, [min, max]] of Object.entries(TRANSFORMER_LIMITS)) {
    checkInt(op, field, config[field as keyof typeof TRANSFORMER_LIMITS], min, max);
  }
  if (config.width % config.heads !== 0) {
    throw new OpInputError(
      op,
      'width',
      `must be a multiple of heads (${config.heads}), got ${config.width}`,
    );
  }
  checkOneOf(op, 'tiedEmbeddings', config.tiedEmbeddings, [true, false]);
  checkOneOf(op, 'valueHead', config.valueHead, [true, false]);
}
