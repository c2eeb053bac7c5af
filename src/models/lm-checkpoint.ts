/**
 * A language model ⇄ a checkpoint file: its ModelSpec, its parameter groups, the weights of each
 * group and the AdamW moments of each trainable group by tensor name, the tokenizer's record, step
 * and seed. Loading checks the file against the spec it declares (every tensor present with its
 * shape), so a mismatched or corrupted file is refused whole.
 *
 * Two header forms are read (model.kind is 'transformer' in both):
 *   grouped (written now)   model.config = { spec: ModelSpec, groups: [{ name, storage,
 *                           trainable }] }; the tensors of group g are named `${g}/${name}`
 *                           ('base/wte', 'base/h0.attn.qkv.w', …).
 *   flat (every older file) model.config = the tiny GPT's TransformerConfig; tensor names carry no
 *                           group, and all of them are the one trainable group 'base'.
 */
import { CheckpointError, decodeCheckpoint, encodeCheckpoint, type Checkpoint } from './checkpoint';
import type { LanguageModel, OptimizerSnapshot } from './language-model';
import { layoutToTensors, tensorsToLayout } from './layout-tensors';
import { modelParamGroups } from './model-groups';
import {
  fromTransformerConfig,
  readModelSpec,
  toTransformerConfig,
  writeModelSpec,
  type ModelSpec,
} from './model-spec';
import type { OptimizerConfig } from './optimizer';
import type { ParamGroup } from './param-groups';
import type { TokenizerSpec } from './tokenizer';
import type { TokenizerRecord } from './tokenizer-api';
import {
  checkTransformerConfig,
  DEFAULT_ROTARY_BASE,
  type TransformerConfig,
} from './transformer-config';
import { transformerParamGroups } from './transformer-params';
import { errorText } from '../util/error-text';

export const TRANSFORMER_KIND = 'transformer';

export interface SaveOptions {
  tokenizer: TokenizerRecord;
  seed: number;
  /** The optimizer settings, stored with the moments. */
  optimizer?: OptimizerConfig;
  meta?: Record<string, string | number | boolean>;
}

/** What a grouped header stores of each group (its layout follows from the spec). */
interface GroupRecord {
  name: string;
  storage: string;
  trainable: boolean;
}

/** The name a group's tensor has in a grouped checkpoint. */
export function groupTensorPrefix(group: ParamGroup['name']): string {
  return `${group}/`;
}

export async function saveLanguageModel(
  model: LanguageModel,
  options: SaveOptions,
): Promise<Uint8Array> {
  const { groups } = model;
  if (options.tokenizer !== undefined) checkTokenizerFits(model.spec, options.tokenizer);
  const trainable = groups.filter((g) => g.trainable);
  const [params, snapshots] = await Promise.all([
    Promise.all(groups.map((g) => model.readParams(g.name))),
    Promise.all(trainable.map((g) => model.readOptimizer(g.name))),
  ]);
  // The first trainable group's AdamW step is the model's step (all of them step together).
  const step = snapshots[0]!.stats[3]!;
  const hyperparams = Object.fromEntries(
    Object.entries(options.optimizer ?? {}).filter(([, v]) => typeof v === 'number'),
  ) as Record<string, number>;
  const moments = (which: 'm' | 'v') =>
    trainable.flatMap((g, i) =>
      layoutToTensors(g.layout, snapshots[i]![which], groupTensorPrefix(g.name)),
    );
  const groupRecords: GroupRecord[] = groups.map((g) => ({
    name: g.name,
    storage: g.storage,
    trainable: g.trainable,
  }));
  const ckpt: Checkpoint = {
    model: {
      kind: TRANSFORMER_KIND,
      config: { spec: writeModelSpec(model.spec), groups: groupRecords },
    },
    tokenizer: options.tokenizer,
    step,
    seed: options.seed,
    tensors: groups.flatMap((g, i) =>
      layoutToTensors(g.layout, params[i]!, groupTensorPrefix(g.name)),
    ),
    optimizer: { kind: 'adamw', step, hyperparams, m: moments('m'), v: moments('v') },
    ...(options.meta ? { meta: options.meta } : {}),
  };
  return encodeCheckpoint(ckpt);
}

/** One parameter group as loaded: its parameters, and its AdamW state when it trains. */
export interface LoadedGroup {
  group: ParamGroup;
  params: Float32Array; // (group.layout.total)
  optimizer: OptimizerSnapshot | undefined;
}

export interface LoadedLanguageModel {
  spec: ModelSpec;
  /** The tiny GPT's configuration of `spec` (family 'gpt', the one family loaded so far). */
  config: TransformerConfig;
  /** The tokenizer's record as stored. */
  tokenizerRecord: TokenizerRecord | undefined;
  /** The character tokenizer's record (the tiny GPT's tokenizer); compatibility for its callers. */
  tokenizer: TokenizerSpec | undefined;
  /** Every group of the model, in the model's order. */
  groups: readonly LoadedGroup[];
  /** The 'base' group's parameters. */
  params: Float32Array;
  /** The 'base' group's AdamW state (when the file has moments and the base trains). */
  optimizer: OptimizerSnapshot | undefined;
  checkpoint: Checkpoint;
}

/** The spec, groups and tensor-name prefix a header's model.config declares. */
interface Declared {
  spec: ModelSpec;
  groups: readonly ParamGroup[];
  prefix: (group: ParamGroup['name']) => string;
  /** The tiny GPT's configuration: a flat header's own, or the one a grouped header's spec gives. */
  config: TransformerConfig;
  /** The object whose fields determine the tensor shapes, and its path in the header. */
  sizes: { object: object; field: string };
}

/** Decodes and validates a language-model checkpoint; throws CheckpointError naming the problem. */
export function loadLanguageModel(bytes: Uint8Array): LoadedLanguageModel {
  // First pass: header only as far as the config; the second decode checks tensors by name/shape.
  const loose = decodeCheckpoint(bytes, { kind: TRANSFORMER_KIND });
  const declared = declaredModel(loose.model.config);
  const { spec, groups, prefix } = declared;
  const expected = groups.flatMap((g) =>
    g.layout.entries.map((e) => ({ name: prefix(g.name) + e.name, shape: [...e.shape] })),
  );
  checkShapesAgainstSpec(expected, loose, declared.sizes);
  const ckpt = decodeCheckpoint(bytes, { kind: TRANSFORMER_KIND, tensors: expected });
  checkMomentsCoverTrainable(ckpt, groups, prefix);
  const stats = ckpt.optimizer ? Float32Array.from([0, 1, 1, ckpt.optimizer.step]) : undefined;
  const loadedGroups: LoadedGroup[] = groups.map((group) => {
    const p = prefix(group.name);
    const optimizer =
      ckpt.optimizer && group.trainable
        ? {
            m: tensorsToLayout(group.layout, ckpt.optimizer.m, p),
            v: tensorsToLayout(group.layout, ckpt.optimizer.v, p),
            stats: stats!.slice(),
          }
        : undefined;
    return { group, params: tensorsToLayout(group.layout, ckpt.tensors, p), optimizer };
  });
  const base = loadedGroups.find((g) => g.group.name === 'base')!;
  const record = ckpt.tokenizer;
  if (record) checkTokenizerFits(spec, record);
  return {
    spec,
    config: declared.config,
    tokenizerRecord: record,
    tokenizer: record?.kind === 'char' ? record : undefined,
    groups: loadedGroups,
    params: base.params,
    optimizer: base.optimizer,
    checkpoint: ckpt,
  };
}

/**
 * Writes every loaded group's parameters into `model`, and the AdamW state of each trainable group
 * the file has moments for: a checkpoint resumed group by group. The model must have the loaded
 * spec (its groups are then the same).
 */
export function restoreLanguageModel(model: LanguageModel, loaded: LoadedLanguageModel): void {
  if (JSON.stringify(model.spec) !== JSON.stringify(loaded.spec)) {
    throw new CheckpointError(
      'model.config.spec',
      `does not describe this model: the file's ${shortJson(loaded.spec)}, the model's ${shortJson(model.spec)}`,
    );
  }
  for (const { group, params, optimizer } of loaded.groups) {
    model.writeParams(params, group.name);
    if (optimizer) model.writeOptimizer(optimizer, group.name);
  }
}

/** The tiny GPT reads only the character tokenizer (its vocabulary is at most 256 ids). */
function checkTokenizerFits(spec: ModelSpec, record: TokenizerRecord): void {
  if (spec.family === 'gpt' && record.kind !== 'char') {
    throw new CheckpointError(
      'tokenizer.kind',
      `the tiny GPT reads a character tokenizer ('char'), found '${record.kind}'`,
    );
  }
}

/** Reads model.config in either header form (see the top of this file). */
function declaredModel(config: unknown): Declared {
  if (typeof config === 'object' && config !== null && 'spec' in config) {
    return declaredGroupedModel(config as Record<string, unknown>);
  }
  const transformer = config as TransformerConfig;
  try {
    checkTransformerConfig(transformer);
  } catch (error) {
    throw new CheckpointError(
      'model.config',
      `is not a valid transformer config: ${String(error)}`,
    );
  }
  return {
    spec: fromTransformerConfig(transformer),
    groups: transformerParamGroups(transformer),
    prefix: () => '',
    config: transformer,
    sizes: { object: transformer, field: 'model.config' },
  };
}

function declaredGroupedModel(config: Record<string, unknown>): Declared {
  for (const key of Object.keys(config)) {
    if (key !== 'spec' && key !== 'groups') {
      throw new CheckpointError(
        `model.config.${key.slice(0, 40)}`,
        'is not a field of a grouped model config (spec, groups)',
      );
    }
  }
  let spec: ModelSpec;
  let groups: readonly ParamGroup[];
  try {
    spec = readModelSpec(config.spec);
    groups = modelParamGroups(spec);
  } catch (error) {
    throw new CheckpointError(
      'model.config.spec',
      `is not a model this lab can load: ${errorText(error)}`,
    );
  }
  checkGroupRecords(config.groups, groups);
  return {
    spec,
    groups,
    prefix: groupTensorPrefix,
    config: gptConfig(spec),
    sizes: { object: spec, field: 'model.config.spec' },
  };
}

/**
 * The tiny GPT's configuration of a 'gpt' spec as the lab writes one (newRunModelConfig): the
 * default rotary base left out, so that a saved config loads back equal to itself.
 */
function gptConfig(spec: ModelSpec): TransformerConfig {
  const config = toTransformerConfig(spec);
  if (config.rotaryBase === DEFAULT_ROTARY_BASE) delete config.rotaryBase;
  return config;
}

/** The header's group list must name the model's groups, in order, with the same trainable flags. */
function checkGroupRecords(value: unknown, groups: readonly ParamGroup[]): void {
  const field = 'model.config.groups';
  const expected = groups.map((g) => `${g.name} (${g.trainable ? 'trainable' : 'frozen'})`);
  const describe = () => `must list the model's groups ${expected.join(', ')}`;
  if (!Array.isArray(value) || value.length !== groups.length) {
    throw new CheckpointError(field, `${describe()}, found ${shortJson(value)}`);
  }
  value.forEach((raw: unknown, i) => {
    const record = raw as Partial<GroupRecord> | null;
    const group = groups[i]!;
    if (
      typeof record !== 'object' ||
      record === null ||
      record.name !== group.name ||
      record.trainable !== group.trainable ||
      typeof record.storage !== 'string'
    ) {
      throw new CheckpointError(`${field}[${i}]`, `${describe()}, found ${shortJson(raw)}`);
    }
  });
}

/**
 * A tensor whose shape differs from the one the declared spec gives is refused naming the spec
 * field that sets the differing dimension (e.g. model.config.spec.width), where one does.
 */
function checkShapesAgainstSpec(
  expected: readonly { name: string; shape: number[] }[],
  loose: Checkpoint,
  sizes: Declared['sizes'],
): void {
  const found = new Map(loose.tensors.map((t) => [t.name, t.shape]));
  for (const { name, shape } of expected) {
    const actual = found.get(name);
    if (!actual || actual.join(',') === shape.join(',')) continue;
    const where = `tensors[${JSON.stringify(name)}].shape`;
    const shapes = `expected [${shape.join(', ')}] from ${sizes.field}, found [${actual.join(', ')}]`;
    if (actual.length !== shape.length)
      throw new CheckpointError(where, `shape mismatch: ${shapes}`);
    const dim = shape.findIndex((d, i) => d !== actual[i]);
    const fields = Object.entries(sizes.object)
      .filter(([, v]) => v === shape[dim])
      .map(([k]) => `${sizes.field}.${k}`);
    const cause =
      fields.length > 0
        ? `dimension ${dim} is ${fields.join(' = ')} = ${shape[dim]}, but the file's is ${actual[dim]}`
        : `dimension ${dim} is ${shape[dim]} by ${sizes.field}, but the file's is ${actual[dim]}`;
    throw new CheckpointError(
      where,
      `shape mismatch for ${JSON.stringify(name)}: ${cause} (${shapes})`,
    );
  }
}

/** The moments, when present, are those of exactly the trainable groups' tensors. */
function checkMomentsCoverTrainable(
  ckpt: Checkpoint,
  groups: readonly ParamGroup[],
  prefix: Declared['prefix'],
): void {
  if (!ckpt.optimizer) return;
  const wanted = groups
    .filter((g) => g.trainable)
    .flatMap((g) => g.layout.entries.map((e) => prefix(g.name) + e.name));
  const have = new Set(ckpt.optimizer.m.map((t) => t.name));
  const missing = wanted.filter((name) => !have.has(name));
  const extra = ckpt.optimizer.m.length - (wanted.length - missing.length);
  if (missing.length > 0 || extra > 0) {
    const trained = groups.filter((g) => g.trainable).map((g) => g.name);
    throw new CheckpointError(
      'optimizer.m',
      `covers ${ckpt.optimizer.m.length - extra} of ${wanted.length} tensors` +
        (extra > 0 ? ` and ${extra} of frozen ones` : '') +
        `; this model trains all of its trainable groups' tensors (${trained.join(', ')})`,
    );
  }
}

function shortJson(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
}
