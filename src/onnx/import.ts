/**
 * An ONNX file exported by this lab → config, tokenizer and parameters in our flat layout, ready to
 * start or resume training. Only the metadata and the initializers are read: the graph is rebuilt
 * from the config by whoever runs the model, so an edited graph does not change what is loaded.
 *
 * Everything is checked before anything is returned (a bad file never half-loads): the bytes are
 * protobuf and an ONNX ModelProto; its checksum matches (integrity.ts: a file without one is
 * accepted, its `integrity` saying that it could not be checked); the metadata says agent-rl-lab and the expected format; config
 * and tokenizer pass the model's own checks; every tensor of the layout is present as a float
 * initializer with the layout's shape and finite values; no other initializer is there.
 * Failures are OnnxError with a reason and the field (tensor name, metadata key) at fault.
 */
import { CHECKPOINT_MAGIC, isCheckpointFile } from '../models/checkpoint';
import { TRANSFORMER_KIND } from '../models/lm-checkpoint';
import { ACTOR_CRITIC_KIND } from '../models/mlp-checkpoint';
import { checkMlpConfig, type MlpConfig } from '../models/mlp-params';
import { AgentLayout } from '../models/mlp-policy';
import type { ParamLayout } from '../models/param-layout';
import { CharTokenizer, type TokenizerSpec } from '../models/tokenizer';
import { checkTransformerConfig, type TransformerConfig } from '../models/transformer-config';
import { transformerLayout } from '../models/transformer-params';
import {
  CONFIG_KEY,
  FORMAT_KEY,
  ONNX_FORMATS,
  TOKENIZER_KEY,
  freeMetadata,
  type OnnxFormat,
} from './format';
import { isRecord } from '../util/json-checks';
import { jsonDepthProblem } from '../util/json-depth';
import { checkIntegrity, type Integrity } from './integrity';
import { OnnxError } from './onnx-error';
import { DataType, decodeModel, type ModelProto, type TensorProto } from './onnx-proto';

export interface ImportedTransformer {
  format: typeof TRANSFORMER_KIND;
  config: TransformerConfig;
  tokenizerSpec: TokenizerSpec;
  /** transformerLayout(config).total floats, padding zero. */
  params: Float32Array;
  /** metadata_props other than the reserved keys (task, step, …), as strings. */
  meta: Record<string, string>;
  /** Whether the file's checksum was checked (a file without one is read with a note). */
  integrity: Integrity;
}

export interface ImportedActorCritic {
  format: typeof ACTOR_CRITIC_KIND;
  actorConfig: MlpConfig;
  criticConfig: MlpConfig;
  agent: AgentLayout;
  /** agent.joint.total floats (the joint layout), padding zero. */
  params: Float32Array;
  meta: Record<string, string>;
  integrity: Integrity;
}

export type ImportedModel = ImportedTransformer | ImportedActorCritic;

/** A transformer export → config, tokenizer, params. Anything else is an OnnxError. */
export function importTransformerOnnx(bytes: Uint8Array): ImportedTransformer {
  const { model, integrity } = decodeOurs(bytes, TRANSFORMER_KIND);
  const config = readTransformerConfig(parseJsonEntry(model, CONFIG_KEY));
  const tokenizerSpec = readTokenizer(parseJsonEntry(model, TOKENIZER_KEY), config);
  const params = readWeights(model, transformerLayout(config));
  return {
    format: TRANSFORMER_KIND,
    config,
    tokenizerSpec,
    params,
    meta: freeMetadata(model.metadataProps),
    integrity,
  };
}

/** An MLP actor-critic export → both configs, the joint layout and its params. */
export function importActorCriticOnnx(bytes: Uint8Array): ImportedActorCritic {
  const { model, integrity } = decodeOurs(bytes, ACTOR_CRITIC_KIND);
  const raw = parseJsonEntry(model, CONFIG_KEY);
  const configs = isRecord(raw) ? raw : {};
  const actorConfig = readMlpConfig(configs.actor, 'actor');
  const criticConfig = readMlpConfig(configs.critic, 'critic');
  const agent = new AgentLayout(actorConfig, criticConfig);
  return {
    format: ACTOR_CRITIC_KIND,
    actorConfig,
    criticConfig,
    agent,
    params: readWeights(model, agent.joint),
    meta: freeMetadata(model.metadataProps),
    integrity,
  };
}

/** Either kind of export, by its format metadata. */
export function importOnnx(bytes: Uint8Array): ImportedModel {
  const format = readFormat(decodeOnnx(bytes));
  return format === TRANSFORMER_KIND ? importTransformerOnnx(bytes) : importActorCriticOnnx(bytes);
}

// ---------------------------------------------------------------------------------------------

/** Bytes → ModelProto, with a friendlier word for our own checkpoint files. */
function decodeOnnx(bytes: Uint8Array): ModelProto {
  if (bytes instanceof Uint8Array && isCheckpointFile(bytes)) {
    throw new OnnxError(
      'foreign',
      'bytes',
      `start with "${CHECKPOINT_MAGIC}": this is an agent-rl-lab checkpoint, not an ONNX file ` +
        '(load it as a checkpoint)',
    );
  }
  return decodeModel(bytes);
}

function decodeOurs(
  bytes: Uint8Array,
  expected: OnnxFormat,
): { model: ModelProto; integrity: Integrity } {
  const model = decodeOnnx(bytes);
  // Before anything else is read: a damaged file is named as such, not by what the damage broke.
  const integrity = checkIntegrity(bytes, model);
  const format = readFormat(model);
  if (format !== expected) {
    throw new OnnxError(
      'foreign',
      `metadata_props["${FORMAT_KEY}"]`,
      `is "${format}", expected "${expected}" (a different kind of agent-rl-lab model)`,
    );
  }
  return { model, integrity };
}

function readFormat(model: ModelProto): OnnxFormat {
  const format = metadata(model, FORMAT_KEY);
  if (format === undefined) {
    const producer = model.producerName ? `producer "${model.producerName}"` : 'no producer name';
    throw new OnnxError(
      'foreign',
      'metadata_props',
      `has no agent-rl-lab metadata ("${FORMAT_KEY}" is missing): this ONNX model was not ` +
        `exported by this lab (${producer}, graph "${model.graph.name}", ` +
        `${model.graph.initializers.length} initializers)`,
    );
  }
  if (!(ONNX_FORMATS as readonly string[]).includes(format)) {
    throw new OnnxError(
      'foreign',
      `metadata_props["${FORMAT_KEY}"]`,
      `is "${format}"; this lab reads ${ONNX_FORMATS.map((f) => `"${f}"`).join(' or ')}`,
    );
  }
  return format as OnnxFormat;
}

function metadata(model: ModelProto, key: string): string | undefined {
  return model.metadataProps.find((e) => e.key === key)?.value;
}

/** JSON.parse of a metadata value (parsed, never evaluated). */
function parseJsonEntry(model: ModelProto, key: string): unknown {
  const field = `metadata_props["${key}"]`;
  const text = metadata(model, key);
  if (text === undefined) throw new OnnxError('config', field, 'is missing');
  const tooDeep = jsonDepthProblem(text);
  if (tooDeep) throw new OnnxError('config', field, tooDeep);
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new OnnxError('config', field, `is not valid JSON: ${String(error)}`);
  }
}

/** Rebuilds the config field by field (extra keys are dropped), then checks it. */
function readTransformerConfig(raw: unknown): TransformerConfig {
  const field = `metadata_props["${CONFIG_KEY}"]`;
  if (!isRecord(raw)) throw new OnnxError('config', field, 'must be a JSON object');
  const config = {
    vocab: raw.vocab,
    context: raw.context,
    width: raw.width,
    layers: raw.layers,
    heads: raw.heads,
    tiedEmbeddings: raw.tiedEmbeddings,
    valueHead: raw.valueHead,
    ...(raw.positions !== undefined ? { positions: raw.positions } : {}),
    ...(raw.rotaryBase !== undefined ? { rotaryBase: raw.rotaryBase } : {}),
  } as TransformerConfig;
  try {
    checkTransformerConfig(config);
  } catch (error) {
    throw new OnnxError('config', field, `is not a valid transformer config: ${String(error)}`);
  }
  return config;
}

function readTokenizer(raw: unknown, config: TransformerConfig): TokenizerSpec {
  const field = `metadata_props["${TOKENIZER_KEY}"]`;
  if (!isRecord(raw)) throw new OnnxError('config', field, 'must be a JSON object');
  const spec = { kind: raw.kind, version: raw.version, chars: raw.chars } as TokenizerSpec;
  let vocabSize: number;
  try {
    vocabSize = CharTokenizer.fromSpec(spec).vocabSize;
  } catch (error) {
    throw new OnnxError('config', field, `is not a valid tokenizer: ${String(error)}`);
  }
  if (vocabSize > config.vocab) {
    throw new OnnxError(
      'config',
      field,
      `has ${vocabSize} ids, more than the model's vocabulary (${config.vocab})`,
    );
  }
  return spec;
}

function readMlpConfig(raw: unknown, net: 'actor' | 'critic'): MlpConfig {
  const field = `metadata_props["${CONFIG_KEY}"].${net}`;
  if (!isRecord(raw)) throw new OnnxError('config', field, 'must be a JSON object');
  const config = {
    inputs: raw.inputs,
    hidden: Array.isArray(raw.hidden) ? [...(raw.hidden as unknown[])] : raw.hidden,
    outputs: raw.outputs,
    activation: raw.activation,
    outputGain: raw.outputGain,
  } as MlpConfig;
  try {
    checkMlpConfig(config);
  } catch (error) {
    throw new OnnxError('config', field, `is not a valid MLP config: ${String(error)}`);
  }
  return config;
}

const TYPE_NAMES: Record<number, string> = Object.fromEntries(
  Object.entries(DataType).map(([name, value]) => [value, name]),
);

function describeType(dataType: number): string {
  return `${TYPE_NAMES[dataType] ?? 'type'} (${dataType})`;
}

/**
 * Every layout tensor from the initializers, by name, into a fresh flat array (padding zero).
 * Missing first (in layout order), then unexpected ones (in file order).
 */
function readWeights(model: ModelProto, layout: ParamLayout): Float32Array {
  const byName = new Map<string, TensorProto>();
  for (const t of model.graph.initializers) {
    if (byName.has(t.name)) {
      throw new OnnxError('unexpected-tensor', `initializer "${t.name}"`, 'appears twice');
    }
    byName.set(t.name, t);
  }
  const flat = new Float32Array(layout.total);
  for (const e of layout.entries) {
    const field = `initializer "${e.name}"`;
    const expected = `float [${e.shape.join(', ')}]`;
    const t = byName.get(e.name);
    if (t === undefined) {
      throw new OnnxError('missing-tensor', field, `is missing (this config needs ${expected})`);
    }
    if (t.dataType !== DataType.FLOAT) {
      throw new OnnxError(
        'tensor-mismatch',
        field,
        `has data type ${describeType(t.dataType)}, expected FLOAT (1)`,
      );
    }
    if (t.dims.length !== e.shape.length || t.dims.some((d, i) => d !== e.shape[i])) {
      throw new OnnxError(
        'tensor-mismatch',
        field,
        `has shape [${t.dims.join(', ')}], expected [${e.shape.join(', ')}] for this config`,
      );
    }
    if (t.dataLocation === 1) {
      throw new OnnxError(
        'tensor-mismatch',
        field,
        'keeps its data in an external file (not supported)',
      );
    }
    const view = flat.subarray(e.offset, e.offset + e.size);
    readFloats(t, view, field);
    const bad = view.findIndex((v) => !Number.isFinite(v));
    if (bad >= 0) {
      throw new OnnxError(
        'tensor-mismatch',
        field,
        `index ${bad} is ${view[bad]} (weights must be finite)`,
      );
    }
  }
  for (const t of model.graph.initializers) {
    if (!layout.has(t.name)) {
      throw new OnnxError(
        'unexpected-tensor',
        `initializer "${t.name}"`,
        `is not a parameter of this model (its layout has ${layout.entries.length} tensors)`,
      );
    }
  }
  return flat;
}

/** raw_data (little-endian float32) or float_data into `out`; the count must match exactly. */
function readFloats(t: TensorProto, out: Float32Array, field: string): void {
  if (t.rawData !== undefined && t.rawData.length > 0) {
    if (t.rawData.length !== out.length * 4) {
      throw new OnnxError(
        'tensor-mismatch',
        field,
        `raw_data holds ${t.rawData.length} bytes, expected ${out.length} floats = ${out.length * 4}`,
      );
    }
    const view = new DataView(t.rawData.buffer, t.rawData.byteOffset, t.rawData.length);
    for (let i = 0; i < out.length; i++) out[i] = view.getFloat32(i * 4, true);
    return;
  }
  const data = t.floatData ?? [];
  if (data.length !== out.length) {
    throw new OnnxError(
      'tensor-mismatch',
      field,
      `holds ${data.length} values, expected ${out.length}`,
    );
  }
  out.set(data);
}
