/**
 * LoRA adapters on a Llama-family model (Llama, Qwen2, Qwen3): the trainable 'lora' parameter
 * group beside the frozen 'base' (src/models/param-groups.ts), with PEFT's names and semantics.
 *
 * Each targeted linear layer of each block gets A (r, in) and B (out, r) and computes
 * y = x·Wᵀ (+ b) + (alpha / r)·(x·Aᵀ)·Bᵀ (src/ops/nn/lora.ts). Targets are among q/k/v/o_proj
 * and gate/up/down_proj; "all-linear" is PEFT's meaning for a causal LM: every linear layer of
 * the blocks, never the LM head. Tensor names are those PEFT saves,
 * base_model.model.model.layers.N.self_attn.q_proj.lora_A.weight (mlp.gate_proj, …), so the
 * group's layout is also the layout of adapter_model.safetensors.
 *
 * All adapters live in one flat array (the group's ParamLayout, A and B as views into it), so
 * AdamW, the gradient norm and a checkpoint see the group as one vector, and a GPU twin binds
 * each tensor as a slice of one buffer. Passing no adapters to the forward is the base model:
 * the KL reference needs no second copy of the weights.
 */
import { OpInputError } from '../../ops/errors';
import type { Floats } from '../../ops/nn/floats';
import { loraInitBound, loraScale } from '../../ops/nn/lora';
import { checkInt } from '../../ops/validate';
import type { ModelSpec, StorageDtype } from '../model-spec';
import { paramGroups, type ParamGroup } from '../param-groups';
import { ParamLayout, type ParamSpec } from '../param-layout';
import { hfBaseGroup } from './hf-weights';
import { checkLlamaSpec, type TensorEntry } from './llama-cpu-weights';

const OP = 'lora';

/** The linear layers of a block an adapter can target, in PEFT's (Hugging Face's) module names. */
export const LORA_MODULES = [
  'q_proj',
  'k_proj',
  'v_proj',
  'o_proj',
  'gate_proj',
  'up_proj',
  'down_proj',
] as const;
export type LoraModule = (typeof LORA_MODULES)[number];

/** PEFT's target_modules value that means every linear layer except the output head. */
export const ALL_LINEAR = 'all-linear';

/** The largest rank the lab takes (TRL's LoRA recipes use 1–32; PEFT allows any). */
export const LORA_MAX_RANK = 1024;

export interface LoraSettings {
  /** PEFT r: the rank, an integer in [1, 1024]. */
  rank: number;
  /** PEFT lora_alpha: the scale is alpha / r; > 0. */
  alpha: number;
  /** PEFT target_modules, resolved: which linear layers of every block get adapters. */
  targets: readonly LoraModule[];
}

/** One adapter: A (r, inDim) and B (outDim, r), views into the group's flat array. */
export interface LoraAdapter<T extends Floats = Float32Array> {
  a: T;
  b: T;
  inDim: number;
  outDim: number;
}

/** The adapters of one block, by module. */
export type LoraLayer<T extends Floats = Float32Array> = Partial<
  Record<LoraModule, LoraAdapter<T>>
>;

export interface LlamaLora<T extends Floats = Float32Array> {
  settings: LoraSettings;
  /** alpha / r. */
  scale: number;
  /** The 'lora' group: trainable, f32, its layout under PEFT's tensor names. */
  group: ParamGroup;
  /** Every adapter tensor in one array, laid out by group.layout. */
  params: T;
  /** layers[l][module]: that block's adapter, or undefined where the module is not targeted. */
  layers: LoraLayer<T>[];
}

/**
 * PEFT target_modules → the modules, in LORA_MODULES order: "all-linear" or a list of module
 * names. An empty list is allowed here (LoRA on no module, a control); `field` names the setting
 * in errors.
 */
export function resolveLoraTargets(value: unknown, field = 'target_modules'): LoraModule[] {
  if (value === ALL_LINEAR) return [...LORA_MODULES];
  const valid = `"${ALL_LINEAR}" or a list of ${LORA_MODULES.join(', ')}`;
  if (!Array.isArray(value)) {
    throw new OpInputError(
      OP,
      field,
      `must be ${valid}, got ${JSON.stringify(value)?.slice(0, 80)}`,
    );
  }
  const chosen = new Set<LoraModule>();
  value.forEach((entry: unknown, i) => {
    if (typeof entry !== 'string' || !(LORA_MODULES as readonly string[]).includes(entry)) {
      throw new OpInputError(
        OP,
        `${field}[${i}]`,
        `must be one of ${LORA_MODULES.join(', ')}, got ${JSON.stringify(entry)?.slice(0, 80)}`,
      );
    }
    chosen.add(entry as LoraModule);
  });
  return LORA_MODULES.filter((m) => chosen.has(m));
}

/** Checks rank, alpha and targets, naming PEFT's field. */
export function checkLoraSettings(settings: LoraSettings): void {
  checkInt(OP, 'r', settings.rank, 1, LORA_MAX_RANK);
  if (!Number.isFinite(settings.alpha) || settings.alpha <= 0) {
    throw new OpInputError(OP, 'lora_alpha', `must be a finite number > 0, got ${settings.alpha}`);
  }
  resolveLoraTargets([...settings.targets]);
}

/** Hugging Face's path of a block's linear layer: model.layers.N.self_attn.q_proj, …mlp.up_proj. */
export function loraModulePath(layer: number, module: LoraModule): string {
  const group = module === 'gate_proj' || module === 'up_proj' || module === 'down_proj';
  return `model.layers.${layer}.${group ? 'mlp' : 'self_attn'}.${module}`;
}

/** PEFT's saved name of an adapter tensor (the adapter name "default" is not in saved names). */
export function loraTensorName(layer: number, module: LoraModule, which: 'A' | 'B'): string {
  return `base_model.model.${loraModulePath(layer, module)}.lora_${which}.weight`;
}

/** in_features and out_features of a block's linear layer. */
export function loraModuleDims(
  spec: ModelSpec,
  module: LoraModule,
): { inDim: number; outDim: number } {
  const { width: C, heads: NH, kvHeads: NKV, headDim: hs, mlpWidth: F } = spec;
  switch (module) {
    case 'q_proj':
      return { inDim: C, outDim: NH * hs };
    case 'k_proj':
    case 'v_proj':
      return { inDim: C, outDim: NKV * hs };
    case 'o_proj':
      return { inDim: NH * hs, outDim: C };
    case 'gate_proj':
    case 'up_proj':
      return { inDim: C, outDim: F };
    case 'down_proj':
      return { inDim: F, outDim: C };
  }
}

/** Every adapter tensor with its PEFT name and shape (A [r, in], B [out, r]), layers in order. */
export function loraTensorEntries(spec: ModelSpec, settings: LoraSettings): TensorEntry[] {
  checkLlamaSpec(spec);
  checkLoraSettings(settings);
  const entries: TensorEntry[] = [];
  for (let l = 0; l < spec.layers; l++) {
    for (const module of LORA_MODULES) {
      if (!settings.targets.includes(module)) continue;
      const { inDim, outDim } = loraModuleDims(spec, module);
      entries.push({ name: loraTensorName(l, module, 'A'), shape: [settings.rank, inDim] });
      entries.push({ name: loraTensorName(l, module, 'B'), shape: [outDim, settings.rank] });
    }
  }
  return entries;
}

/**
 * The 'lora' group's layout: A initialised as PEFT does (uniform within ±1/√in), B zeros.
 * Weight decay applies to every adapter tensor (they are all matrices).
 */
export function loraParamLayout(spec: ModelSpec, settings: LoraSettings): ParamLayout {
  const specs: ParamSpec[] = loraTensorEntries(spec, settings).map(({ name, shape }) => ({
    name,
    shape,
    decay: true,
    init: name.endsWith('.lora_A.weight')
      ? { kind: 'uniform', bound: loraInitBound(shape[1]!) }
      : { kind: 'zeros' },
  }));
  return new ParamLayout(specs);
}

/** The adapters over `params` (the group's flat array, used in place, not copied). */
export function llamaLoraFromParams<T extends Floats>(
  spec: ModelSpec,
  settings: LoraSettings,
  params: T,
): LlamaLora<T> {
  const layout = loraParamLayout(spec, settings);
  if (params.length !== layout.total) {
    throw new OpInputError(
      OP,
      'params',
      `must have the 'lora' group's ${layout.total} elements, got ${params.length}`,
    );
  }
  const layers: LoraLayer<T>[] = [];
  for (let l = 0; l < spec.layers; l++) {
    const layer: LoraLayer<T> = {};
    for (const module of settings.targets) {
      layer[module] = {
        a: layout.view(params, loraTensorName(l, module, 'A')),
        b: layout.view(params, loraTensorName(l, module, 'B')),
        ...loraModuleDims(spec, module),
      };
    }
    layers.push(layer);
  }
  const [group] = paramGroups([{ name: 'lora', layout, storage: 'f32', trainable: true }]);
  return {
    settings: { ...settings, targets: [...settings.targets] },
    scale: loraScale(settings.alpha, settings.rank),
    group: group!,
    params,
    layers,
  };
}

/** Fresh adapters as PEFT makes them (B = 0: the model is unchanged until trained), seeded. */
export function createLlamaLora(
  spec: ModelSpec,
  settings: LoraSettings,
  seed: number,
): LlamaLora<Float32Array> {
  checkInt(OP, 'seed', seed, 0, 2 ** 32 - 1);
  const layout = loraParamLayout(spec, settings);
  return llamaLoraFromParams(spec, settings, layout.initialize<Float32Array>(seed, 'f32'));
}

/**
 * Adapters from named tensors (PEFT names → arrays), copied into one flat group. Every tensor
 * the settings call for must be there with its size, and nothing else: errors name the tensor
 * and its expected shape.
 */
export function llamaLoraFromTensors(
  spec: ModelSpec,
  settings: LoraSettings,
  tensors: ReadonlyMap<string, Floats>,
  what = 'adapter',
): LlamaLora<Float32Array> {
  const entries = loraTensorEntries(spec, settings);
  const layout = loraParamLayout(spec, settings);
  const params = new Float32Array(layout.total);
  const expected = new Set(entries.map((e) => e.name));
  for (const name of tensors.keys()) {
    if (!expected.has(name)) {
      throw new OpInputError(
        OP,
        what,
        `holds the tensor '${name}', which r = ${settings.rank} on ${settings.targets.join(', ') || 'no module'} of this ${spec.family} model (${spec.layers} layers) does not have`,
      );
    }
  }
  for (const { name, shape } of entries) {
    const tensor = tensors.get(name);
    const size = shape[0]! * shape[1]!;
    if (!tensor) {
      throw new OpInputError(OP, what, `is missing the tensor '${name}' [${shape.join(', ')}]`);
    }
    if (tensor.length !== size) {
      throw new OpInputError(
        OP,
        `${what}['${name}']`,
        `must have [${shape.join(', ')}] = ${size} elements, got ${tensor.length}`,
      );
    }
    layout.view(params, name).set(tensor);
  }
  return llamaLoraFromParams(spec, settings, params);
}

/** name → view of each adapter tensor in `flat` (the group's layout): for files and tests. */
export function loraTensors<T extends Floats>(lora: LlamaLora<Floats>, flat: T): Map<string, T> {
  return new Map(
    lora.group.layout.entries.map((e) => [e.name, lora.group.layout.view(flat, e.name)]),
  );
}

/**
 * A LoRA run's parameter groups: the brought model's frozen 'base' (stored as `storage` on the
 * device; no gradient, no optimizer state) and the trainable f32 'lora' group of `lora`.
 */
export function llamaLoraGroups(
  spec: ModelSpec,
  lora: LlamaLora<Floats>,
  storage: StorageDtype = 'f16',
): readonly ParamGroup[] {
  return paramGroups([hfBaseGroup(spec, storage), lora.group]);
}
