/**
 * Configuration of the decoder-only transformer policy (GPT-2 shaped): token embeddings plus either
 * learned position embeddings (GPT-2's wpe) or rotary positions (RoPE, as in Llama, SmolLM2 and
 * Qwen2.5: q and k of each head rotated by their position, so attention scores depend on the
 * distance between two tokens, not on where they sit), `layers` pre-LayerNorm blocks (LN → causal
 * multi-head attention → residual; LN → GELU MLP of width 4·C → residual), a final LayerNorm, and
 * an LM head (tied to the token embedding or separate), optionally a scalar value head for a PPO
 * critic.
 *
 * Shapes in comments use B = batch, T = sequence, C = width, NH = heads, hs = C / NH, V = vocab.
 */
import { OpInputError } from '../ops/errors';
import { checkInt, checkOneOf } from '../ops/validate';

export interface TransformerConfig {
  /** Vocabulary size V, 2–256 (the character tokenizer's size). */
  vocab: number;
  /** Context length: the largest T, 2–256 (with learned positions, one wpe row per slot). */
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
  /**
   * How the model knows positions: 'learned' (GPT-2's wpe table, the default when absent, which
   * every checkpoint written before rotary positions existed means) or 'rotary' (no wpe; q and k
   * rotated in Hugging Face's rotate-half convention, src/ops/nn/rotary.ts).
   */
  positions?: PositionKind;
  /** The rotary base θ (inv_freq[i] = θ^(−2i/hs)), 100–10⁷; 10,000 when absent (Llama's). */
  rotaryBase?: number;
}

export type PositionKind = 'learned' | 'rotary';

export const POSITION_KINDS: readonly PositionKind[] = ['learned', 'rotary'];

/** Llama's and SmolLM2's rotary base (Qwen2.5 uses 10⁶). */
export const DEFAULT_ROTARY_BASE = 10_000;

export const ROTARY_BASE_LIMITS = [100, 1e7] as const;

/** True when the model uses rotary positions (and has no wpe table). */
export function usesRotary(config: TransformerConfig): boolean {
  return config.positions === 'rotary';
}

/** The rotary base of a config, its default filled in. */
export function rotaryBaseOf(config: TransformerConfig): number {
  return config.rotaryBase ?? DEFAULT_ROTARY_BASE;
}

/**
 * The shape of the lab's language models (the worker builds this one; the CLI's default flags
 * match it). A run of another shape can be compared in the lab but not trained on there.
 */
export const LAB_MODEL_SHAPE = Object.freeze({ width: 64, layers: 2, heads: 4 });

/** The trunk's size: what a run file records so the lab can tell whether it builds the same. */
export type ModelShape = Pick<TransformerConfig, 'width' | 'layers' | 'heads'>;

/**
 * A new model for a run (the lab's worker and `npm run train` build the same one): the trunk
 * `shape`, tied embeddings, a context that holds the run's longest task (`maxChars`) with 10
 * positions to spare, at most the model's 256, and the chosen positions. Learned positions leave
 * the field out, as every config from before rotary ones has it.
 */
export function newRunModelConfig(run: {
  vocab: number;
  maxChars: number;
  shape: ModelShape;
  valueHead: boolean;
  positions?: PositionKind;
}): TransformerConfig {
  return {
    vocab: run.vocab,
    context: Math.min(256, run.maxChars + 2 + 8),
    ...run.shape,
    tiedEmbeddings: true,
    valueHead: run.valueHead,
    ...(run.positions === 'rotary' ? { positions: 'rotary' as const } : {}),
  };
}

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
  if (config.positions !== undefined) checkOneOf(op, 'positions', config.positions, POSITION_KINDS);
  if (config.rotaryBase !== undefined) {
    if (config.positions !== 'rotary') {
      throw new OpInputError(op, 'rotaryBase', "is only meaningful with positions 'rotary'");
    }
    const [min, max] = ROTARY_BASE_LIMITS;
    const base = config.rotaryBase;
    if (typeof base !== 'number' || !Number.isFinite(base) || base < min || base > max) {
      throw new OpInputError(
        op,
        'rotaryBase',
        `must be a number in [${min}, ${max}], got ${String(base)}`,
      );
    }
  }
  if (config.positions === 'rotary' && (config.width / config.heads) % 2 !== 0) {
    throw new OpInputError(
      op,
      'heads',
      `must leave an even head size (width / heads) for rotary positions, got ${config.width} / ${config.heads}`,
    );
  }
}
