/**
 * PEFT's LoRA adapter files, read and written, so that an adapter trained here loads in PEFT and
 * TRL and one trained there scores here:
 *
 * - adapter_config.json: PEFT's LoraConfig as save_pretrained writes it (sorted keys, indent 2).
 *   Read: peft_type "LORA", r, lora_alpha, target_modules ("all-linear" or module names among
 *   q/k/v/o_proj, gate/up/down_proj), task_type "CAUSAL_LM", base_model_name_or_path. Options the
 *   lab does not implement are refused naming the field: bias other than "none", fan_in_fan_out,
 *   any use_* variant switched on (use_dora, use_rslora, use_qalora, …), lora_bias, rank_pattern /
 *   alpha_pattern, layers_to_transform / layers_pattern, modules_to_save, exclude_modules,
 *   layer_replication, trainable_token_indices, target_parameters. lora_dropout is accepted:
 *   dropout does nothing when scoring, and the lab's training does not apply it.
 * - adapter_model.safetensors: the adapters under PEFT's saved names
 *   (base_model.model.model.layers.N.self_attn.q_proj.lora_A.weight, A as [r, in], B as
 *   [out, r]); every tensor checked against the model's spec by name and shape before any is read.
 */
import type { ModelSpec } from '../model-spec';
import { OpInputError } from '../../ops/errors';
import {
  type LlamaLora,
  LORA_MAX_RANK,
  llamaLoraFromTensors,
  type LoraModule,
  type LoraSettings,
  loraTensorEntries,
  loraTensors,
  resolveLoraTargets,
} from './llama-lora';
import type { RandomAccessSource } from './random-access-source';
import { readSafetensorsHeader, tensorToF32 } from './safetensors';
import { writeSafetensors } from './safetensors-writer';

export const ADAPTER_CONFIG_FILE = 'adapter_config.json';
export const ADAPTER_WEIGHTS_FILE = 'adapter_model.safetensors';

/** A problem with an adapter's files: names the file and the field or tensor. */
export class PeftAdapterError extends Error {
  override readonly name = 'PeftAdapterError';
}

export interface PeftLoraConfig {
  settings: LoraSettings;
  /** base_model_name_or_path: the model the adapter was trained on (a Hub id or a path), or null. */
  baseModel: string | null;
  /** lora_dropout, in [0, 1): recorded, not applied. */
  dropout: number;
}

/** Fields that must be null / absent, an empty list or an empty object, or are refused. */
const MUST_BE_EMPTY = [
  'rank_pattern',
  'alpha_pattern',
  'layers_to_transform',
  'layers_pattern',
  'modules_to_save',
  'exclude_modules',
  'layer_replication',
  'trainable_token_indices',
  'target_parameters',
  'megatron_config',
] as const;

function isEmpty(value: unknown): boolean {
  if (value === null || value === undefined) return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === 'object') return Object.keys(value).length === 0;
  return false;
}

function shown(value: unknown): string {
  return (JSON.stringify(value) ?? String(value)).slice(0, 80);
}

/** Checks a parsed adapter_config.json; `file` names it in errors. */
export function readAdapterConfig(json: unknown, file = ADAPTER_CONFIG_FILE): PeftLoraConfig {
  const fail = (field: string, problem: string): never => {
    throw new PeftAdapterError(`${file}: ${field} ${problem}`);
  };
  if (typeof json !== 'object' || json === null || Array.isArray(json)) {
    return fail('(file)', `must be a JSON object, got ${shown(json)}`);
  }
  const c = json as Record<string, unknown>;
  if (c.peft_type !== 'LORA') fail('peft_type', `must be "LORA", got ${shown(c.peft_type)}`);
  if (c.task_type !== undefined && c.task_type !== null && c.task_type !== 'CAUSAL_LM') {
    fail('task_type', `must be "CAUSAL_LM", got ${shown(c.task_type)}`);
  }
  const rank = c.r;
  if (typeof rank !== 'number' || !Number.isInteger(rank) || rank < 1 || rank > LORA_MAX_RANK) {
    fail('r', `must be an integer in [1, ${LORA_MAX_RANK}], got ${shown(rank)}`);
  }
  const alpha = c.lora_alpha;
  if (typeof alpha !== 'number' || !Number.isFinite(alpha) || alpha <= 0) {
    fail('lora_alpha', `must be a number > 0, got ${shown(alpha)}`);
  }
  const dropout = c.lora_dropout ?? 0;
  if (typeof dropout !== 'number' || !(dropout >= 0 && dropout < 1)) {
    fail('lora_dropout', `must be a number in [0, 1), got ${shown(dropout)}`);
  }
  if ((c.bias ?? 'none') !== 'none') {
    fail('bias', `must be "none" (the lab trains no biases), got ${shown(c.bias)}`);
  }
  if (c.fan_in_fan_out === true) {
    fail('fan_in_fan_out', 'must be false: weights are stored (out, in) as nn.Linear does');
  }
  if (c.lora_bias === true) fail('lora_bias', 'must be false: the lab has no LoRA bias');
  for (const [field, value] of Object.entries(c)) {
    if (field.startsWith('use_') && value === true) {
      fail(field, 'must be false: the lab implements plain LoRA (scale alpha / r) only');
    }
  }
  for (const field of MUST_BE_EMPTY) {
    if (!isEmpty(c[field])) {
      fail(field, `must be null or empty: the lab does not implement it, got ${shown(c[field])}`);
    }
  }
  let targets: LoraModule[];
  try {
    targets = resolveLoraTargets(c.target_modules);
  } catch (error) {
    // resolveLoraTargets names the entry (target_modules[i]); keep its words, this file's name.
    if (!(error instanceof OpInputError)) throw error;
    throw new PeftAdapterError(`${file}: ${error.message.replace(/^lora: /, '')}`);
  }
  if (targets.length === 0) fail('target_modules', 'must name at least one module, got []');
  const base = c.base_model_name_or_path ?? null;
  if (base !== null && typeof base !== 'string') {
    fail('base_model_name_or_path', `must be a string or null, got ${shown(base)}`);
  }
  return {
    settings: { rank: rank as number, alpha: alpha as number, targets },
    baseModel: base as string | null,
    dropout: dropout as number,
  };
}

/**
 * adapter_config.json's text for `settings`, with the fields PEFT writes (sorted keys, indent 2,
 * trailing newline); target_modules is the explicit list, as PEFT saves "all-linear" expanded.
 * `revision`: the base model's Hub revision, where it is not the default branch.
 */
export function adapterConfigText(
  settings: LoraSettings,
  baseModel: string | null,
  revision: string | null = null,
): string {
  const config: Record<string, unknown> = {
    alpha_pattern: {},
    auto_mapping: null,
    base_model_name_or_path: baseModel,
    bias: 'none',
    eva_config: null,
    exclude_modules: null,
    fan_in_fan_out: false,
    inference_mode: true,
    init_lora_weights: true,
    layer_replication: null,
    layers_pattern: null,
    layers_to_transform: null,
    loftq_config: {},
    lora_alpha: settings.alpha,
    lora_bias: false,
    lora_dropout: 0,
    megatron_config: null,
    megatron_core: 'megatron.core',
    modules_to_save: null,
    peft_type: 'LORA',
    r: settings.rank,
    rank_pattern: {},
    revision,
    target_modules: [...settings.targets].sort(),
    task_type: 'CAUSAL_LM',
    use_dora: false,
    use_rslora: false,
  };
  return `${JSON.stringify(config, null, 2)}\n`;
}

/**
 * The adapters of adapter_model.safetensors (F32, F16 or BF16) for `spec` and `settings`: the
 * header's names and shapes are checked first (a missing, an extra or a mis-shaped tensor is
 * named with the shape expected), then the tensors are read as f32 into the 'lora' group.
 */
export async function readAdapterWeights(
  source: RandomAccessSource,
  spec: ModelSpec,
  settings: LoraSettings,
): Promise<LlamaLora> {
  const header = await readSafetensorsHeader(source);
  const expected = loraTensorEntries(spec, settings);
  const wanted = new Map(expected.map((e) => [e.name, e.shape]));
  const about = `r = ${settings.rank} on ${settings.targets.join(', ')} of a ${spec.layers}-layer ${spec.family} model`;
  for (const tensor of header.tensors) {
    if (!wanted.has(tensor.name)) {
      throw new PeftAdapterError(
        `${source.name}: holds '${tensor.name}' [${tensor.shape.join(', ')}], which ${about} does not have`,
      );
    }
  }
  const tensors = new Map<string, Float32Array>();
  for (const { name, shape } of expected) {
    const info = header.byName.get(name);
    if (!info) {
      throw new PeftAdapterError(
        `${source.name}: is missing '${name}' [${shape.join(', ')}] (${about})`,
      );
    }
    if (info.shape.length !== 2 || info.shape[0] !== shape[0] || info.shape[1] !== shape[1]) {
      throw new PeftAdapterError(
        `${source.name}: '${name}' has shape [${info.shape.join(', ')}], expected [${shape.join(', ')}] (${about})`,
      );
    }
  }
  for (const { name } of expected) tensors.set(name, await tensorToF32(header, name));
  return llamaLoraFromTensors(spec, settings, tensors);
}

/** adapter_model.safetensors bytes of `lora` (F32, names sorted, metadata format "pt"). */
export function adapterWeightsBytes(lora: LlamaLora<Float32Array>): Uint8Array<ArrayBuffer> {
  const byName = loraTensors(lora, lora.params);
  const entries = lora.group.layout.entries;
  const tensors = [...entries]
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((e) => ({
      name: e.name,
      shape: e.shape,
      dtype: 'F32' as const,
      data: byName.get(e.name)!,
    }));
  return writeSafetensors(tensors, { format: 'pt' });
}

/** A PEFT adapter's two files, read and checked against `spec`. */
export async function readPeftAdapter(
  configText: string,
  weights: RandomAccessSource,
  spec: ModelSpec,
  configName = ADAPTER_CONFIG_FILE,
): Promise<{ config: PeftLoraConfig; lora: LlamaLora }> {
  let json: unknown;
  try {
    json = JSON.parse(configText);
  } catch (error) {
    throw new PeftAdapterError(`${configName}: is not valid JSON (${(error as Error).message})`);
  }
  const config = readAdapterConfig(json, configName);
  const lora = await readAdapterWeights(weights, spec, config.settings);
  return { config, lora };
}
