/**
 * A saved policy to start (or resume) training from: our checkpoint file or an ONNX file this lab
 * exported, read into a config and weights the run can use.
 *
 *   - The file kind comes from its first bytes (a checkpoint starts with "ARLCKPT1"; anything
 *     else is read as ONNX), so a renamed file still loads, and each reader names what is wrong.
 *   - The tokenizer must be the run's own: ids are positions in the embedding table, so a model
 *     trained with other characters would read every prompt wrongly.
 *   - The task's longest prompt and answer must fit the model's context.
 *   - The value head follows the algorithm, as TRL's AutoModelForCausalLMWithValueHead does: PPO
 *     on a model without one gets a fresh head (initialized from the run's seed, every other
 *     weight copied by name); GRPO and DPO on a model with one drop it.
 */
import { isCheckpointFile } from '../models/checkpoint';
import { loadLanguageModel } from '../models/lm-checkpoint';
import type { TokenizerSpec } from '../models/tokenizer';
import type { TransformerConfig } from '../models/transformer-config';
import { transformerLayout } from '../models/transformer-params';
import { importTransformerOnnx } from './import';
import { OnnxError } from './onnx-error';

export interface StartingPolicy {
  /** Where the weights came from: 'checkpoint' or 'onnx'. */
  source: 'checkpoint' | 'onnx';
  config: TransformerConfig;
  /** transformerLayout(config).total floats. */
  params: Float32Array;
  /** What the reader should know of the file: an ONNX file without a checksum was not checked. */
  note?: string;
}

export interface StartingPolicyNeeds {
  /** The run's tokenizer: the file's must be the same characters in the same order. */
  tokenizer: TokenizerSpec;
  /** The task's longest prompt + answer in characters, plus the 2 special tokens around them. */
  tokensNeeded: number;
  /** The algorithm trains a value head (PPO). */
  valueHead: boolean;
  /** Seeds a value head the file does not have. */
  seed: number;
}

/** Bytes of a checkpoint or an ONNX export → weights ready for the run (see the file comment). */
export function readStartingPolicy(bytes: Uint8Array, needs: StartingPolicyNeeds): StartingPolicy {
  const source = isCheckpointFile(bytes) ? 'checkpoint' : 'onnx';
  const { config, params, tokenizer, note } =
    source === 'checkpoint' ? fromCheckpoint(bytes) : fromOnnx(bytes);
  if (JSON.stringify(tokenizer) !== JSON.stringify(needs.tokenizer)) {
    throw new OnnxError(
      'config',
      'tokenizer',
      `has characters ${JSON.stringify(tokenizer.chars)}; this lab's runs use ` +
        `${JSON.stringify(needs.tokenizer.chars)}`,
    );
  }
  if (needs.tokensNeeded > config.context) {
    throw new OnnxError(
      'config',
      'context',
      `is ${config.context} tokens, but the task needs up to ${needs.tokensNeeded}: ` +
        'choose shorter task options or a model with a longer context',
    );
  }
  return {
    source,
    ...withValueHead(config, params, needs.valueHead, needs.seed),
    ...(note === undefined ? {} : { note }),
  };
}

function fromCheckpoint(bytes: Uint8Array) {
  const loaded = loadLanguageModel(bytes);
  if (!loaded.tokenizer) {
    throw new OnnxError('config', 'tokenizer', 'is missing from the checkpoint');
  }
  return {
    config: loaded.config,
    params: loaded.params,
    tokenizer: loaded.tokenizer,
    note: undefined,
  };
}

function fromOnnx(bytes: Uint8Array) {
  const imported = importTransformerOnnx(bytes);
  return {
    config: imported.config,
    params: imported.params,
    tokenizer: imported.tokenizerSpec,
    note: imported.integrity.checked ? undefined : imported.integrity.note,
  };
}

/** The same weights under a config with or without the value head (copied by tensor name). */
export function withValueHead(
  config: TransformerConfig,
  params: Float32Array,
  valueHead: boolean,
  seed: number,
): { config: TransformerConfig; params: Float32Array } {
  if (config.valueHead === valueHead) return { config, params };
  const from = transformerLayout(config);
  const targetConfig = { ...config, valueHead };
  const to = transformerLayout(targetConfig);
  // Fresh weights first (the new head's initialization), then every shared tensor copied over.
  const out = to.initialize<Float32Array>(seed);
  for (const entry of to.entries) {
    if (from.has(entry.name)) to.view(out, entry.name).set(from.view(params, entry.name));
  }
  return { config: targetConfig, params: out };
}
