/**
 * A transformer language model ⇄ a checkpoint file: weights and AdamW moments by tensor name, the
 * config, the tokenizer, step and seed. Loading checks the file against the config it declares
 * (every tensor present with its shape), so a mismatched or corrupted file is refused whole.
 */
import { CheckpointError, decodeCheckpoint, encodeCheckpoint, type Checkpoint } from './checkpoint';
import type { LanguageModel, OptimizerSnapshot } from './language-model';
import { layoutToTensors, tensorsToLayout } from './layout-tensors';
import type { OptimizerConfig } from './optimizer';
import type { TokenizerSpec } from './tokenizer';
import { checkTransformerConfig, type TransformerConfig } from './transformer-config';
import { transformerLayout } from './transformer-params';

export const TRANSFORMER_KIND = 'transformer';

export interface SaveOptions {
  tokenizer: TokenizerSpec;
  seed: number;
  /** The optimizer settings, stored with the moments. */
  optimizer?: OptimizerConfig;
  meta?: Record<string, string | number | boolean>;
}

export async function saveLanguageModel(
  model: LanguageModel,
  options: SaveOptions,
): Promise<Uint8Array> {
  const { layout } = model;
  const [params, snapshot] = await Promise.all([model.readParams(), model.readOptimizer()]);
  const step = snapshot.stats[3]!;
  const hyperparams = Object.fromEntries(
    Object.entries(options.optimizer ?? {}).filter(([, v]) => typeof v === 'number'),
  ) as Record<string, number>;
  const ckpt: Checkpoint = {
    model: { kind: TRANSFORMER_KIND, config: model.config },
    tokenizer: options.tokenizer,
    step,
    seed: options.seed,
    tensors: layoutToTensors(layout, params),
    optimizer: {
      kind: 'adamw',
      step,
      hyperparams,
      m: layoutToTensors(layout, snapshot.m),
      v: layoutToTensors(layout, snapshot.v),
    },
    ...(options.meta ? { meta: options.meta } : {}),
  };
  return encodeCheckpoint(ckpt);
}

export interface LoadedLanguageModel {
  config: TransformerConfig;
  tokenizer: TokenizerSpec | undefined;
  params: Float32Array;
  optimizer: OptimizerSnapshot | undefined;
  checkpoint: Checkpoint;
}

/** Decodes and validates a transformer checkpoint; throws CheckpointError naming the problem. */
export function loadLanguageModel(bytes: Uint8Array): LoadedLanguageModel {
  // First pass: header only as far as the config; the second decode checks tensors by name/shape.
  const loose = decodeCheckpoint(bytes, { kind: TRANSFORMER_KIND });
  const config = loose.model.config as TransformerConfig;
  try {
    checkTransformerConfig(config);
  } catch (error) {
    throw new CheckpointError(
      'model.config',
      `is not a valid transformer config: ${String(error)}`,
    );
  }
  const layout = transformerLayout(config);
  const ckpt = decodeCheckpoint(bytes, {
    kind: TRANSFORMER_KIND,
    tensors: layout.entries.map((e) => ({ name: e.name, shape: [...e.shape] })),
  });
  if (ckpt.optimizer && ckpt.optimizer.m.length !== layout.entries.length) {
    throw new CheckpointError(
      'optimizer.m',
      `covers ${ckpt.optimizer.m.length} of ${layout.entries.length} tensors; this model trains them all`,
    );
  }
  const optimizer = ckpt.optimizer
    ? {
        m: tensorsToLayout(layout, ckpt.optimizer.m),
        v: tensorsToLayout(layout, ckpt.optimizer.v),
        stats: Float32Array.from([0, 1, 1, ckpt.optimizer.step]),
      }
    : undefined;
  return {
    config,
    tokenizer: ckpt.tokenizer,
    params: tensorsToLayout(layout, ckpt.tensors),
    optimizer,
    checkpoint: ckpt,
  };
}
