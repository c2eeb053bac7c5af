/**
 * PEFT adapter files: what adapter_config.json may say and what it may not (each refusal names the
 * field), tensors checked by name and shape against the model (each error names the tensor and the
 * shape expected), and a written adapter read back unchanged.
 */
import { describe, expect, it } from 'vitest';
import { createLlamaLora, type LoraSettings } from '../../../src/models/hf/llama-lora';
import {
  adapterConfigText,
  adapterWeightsBytes,
  readAdapterConfig,
  readAdapterWeights,
  readPeftAdapter,
} from '../../../src/models/hf/peft-adapter';
import { bytesSource } from '../../../src/models/hf/random-access-source';
import { writeSafetensors } from '../../../src/models/hf/safetensors-writer';
import type { ModelSpec } from '../../../src/models/model-spec';

const SPEC: ModelSpec = {
  family: 'llama',
  vocab: 11,
  context: 8,
  width: 8,
  layers: 2,
  heads: 4,
  kvHeads: 2,
  headDim: 2,
  mlpWidth: 6,
  mlp: 'swiglu',
  norm: 'rmsnorm',
  normEps: 1e-6,
  positions: 'rotary',
  rotaryBase: 10_000,
  qkvBias: false,
  outBias: false,
  mlpBias: false,
  qkNorm: false,
  tiedEmbeddings: true,
  valueHead: false,
};

/** A config as PEFT (0.15-ish) writes it for r 2, alpha 4 on q and v, with TRL's dropout. */
const PEFT_CONFIG = {
  alpha_pattern: {},
  auto_mapping: null,
  base_model_name_or_path: 'HuggingFaceTB/SmolLM2-135M-Instruct',
  bias: 'none',
  corda_config: null,
  eva_config: null,
  exclude_modules: null,
  fan_in_fan_out: false,
  inference_mode: true,
  init_lora_weights: true,
  layer_replication: null,
  layers_pattern: null,
  layers_to_transform: null,
  loftq_config: {},
  lora_alpha: 4,
  lora_bias: false,
  lora_dropout: 0.05,
  megatron_config: null,
  megatron_core: 'megatron.core',
  modules_to_save: null,
  peft_type: 'LORA',
  qalora_group_size: 16,
  r: 2,
  rank_pattern: {},
  revision: null,
  target_modules: ['v_proj', 'q_proj'],
  target_parameters: null,
  task_type: 'CAUSAL_LM',
  trainable_token_indices: null,
  use_dora: false,
  use_qalora: false,
  use_rslora: false,
};

describe('adapter_config.json', () => {
  it('reads PEFT-written fields: r, alpha, targets in module order, base model, dropout', () => {
    expect(readAdapterConfig(PEFT_CONFIG)).toEqual({
      settings: { rank: 2, alpha: 4, targets: ['q_proj', 'v_proj'] },
      baseModel: 'HuggingFaceTB/SmolLM2-135M-Instruct',
      dropout: 0.05,
    });
    const minimal = { peft_type: 'LORA', r: 8, lora_alpha: 16, target_modules: 'all-linear' };
    expect(readAdapterConfig(minimal).settings.targets).toHaveLength(7);
  });

  it.each([
    [{ peft_type: 'IA3' }, 'peft_type must be "LORA", got "IA3"'],
    [{ task_type: 'SEQ_CLS' }, 'task_type must be "CAUSAL_LM", got "SEQ_CLS"'],
    [{ r: 0 }, 'r must be an integer in [1, 1024], got 0'],
    [{ r: 2.5 }, 'r must be an integer in [1, 1024], got 2.5'],
    [{ lora_alpha: '4' }, 'lora_alpha must be a number > 0, got "4"'],
    [{ lora_dropout: 1 }, 'lora_dropout must be a number in [0, 1), got 1'],
    [{ bias: 'all' }, 'bias must be "none" (the lab trains no biases), got "all"'],
    [{ fan_in_fan_out: true }, 'fan_in_fan_out must be false'],
    [{ use_dora: true }, 'use_dora must be false: the lab implements plain LoRA'],
    [{ use_rslora: true }, 'use_rslora must be false: the lab implements plain LoRA'],
    [{ use_qalora: true }, 'use_qalora must be false'],
    [{ lora_bias: true }, 'lora_bias must be false'],
    [{ rank_pattern: { q_proj: 8 } }, 'rank_pattern must be null or empty'],
    [{ layers_to_transform: [0] }, 'layers_to_transform must be null or empty'],
    [{ modules_to_save: ['lm_head'] }, 'modules_to_save must be null or empty'],
    [{ target_modules: '.*proj' }, 'target_modules must be "all-linear" or a list of'],
    [{ target_modules: ['q_proj', 'lm_head'] }, 'target_modules[1] must be one of q_proj'],
    [{ target_modules: [] }, 'target_modules must name at least one module, got []'],
  ])('refuses %j naming the field', (change, message) => {
    expect(() => readAdapterConfig({ ...PEFT_CONFIG, ...change }, 'a/adapter_config.json')).toThrow(
      `a/adapter_config.json: ${message}`,
    );
  });

  it('writes the fields PEFT writes, and reads back what it wrote', () => {
    const settings: LoraSettings = { rank: 16, alpha: 32, targets: ['q_proj', 'up_proj'] };
    const text = adapterConfigText(settings, 'Qwen/Qwen2.5-0.5B-Instruct');
    const json = JSON.parse(text) as Record<string, unknown>;
    expect(Object.keys(json)).toEqual(Object.keys(json).sort());
    expect(json).toMatchObject({
      peft_type: 'LORA',
      task_type: 'CAUSAL_LM',
      r: 16,
      lora_alpha: 32,
      lora_dropout: 0,
      bias: 'none',
      fan_in_fan_out: false,
      use_rslora: false,
      use_dora: false,
      target_modules: ['q_proj', 'up_proj'],
      base_model_name_or_path: 'Qwen/Qwen2.5-0.5B-Instruct',
    });
    expect(readAdapterConfig(json).settings).toEqual(settings);
  });
});

describe('adapter_model.safetensors', () => {
  const settings: LoraSettings = { rank: 2, alpha: 4, targets: ['q_proj', 'v_proj'] };
  const name = (l: number, m: string, w: 'A' | 'B') =>
    `base_model.model.model.layers.${l}.self_attn.${m}.lora_${w}.weight`;
  /** Every tensor the settings need, with `change` applied (undefined shape: left out). */
  function file(change: Record<string, number[] | undefined> = {}): Uint8Array {
    const shapes: Record<string, number[] | undefined> = {};
    for (let l = 0; l < 2; l++) {
      shapes[name(l, 'q_proj', 'A')] = [2, 8];
      shapes[name(l, 'q_proj', 'B')] = [8, 2];
      shapes[name(l, 'v_proj', 'A')] = [2, 8];
      shapes[name(l, 'v_proj', 'B')] = [4, 2];
    }
    Object.assign(shapes, change);
    const tensors = Object.entries(shapes)
      .filter((e): e is [string, number[]] => e[1] !== undefined)
      .map(([n, shape]) => ({
        name: n,
        shape,
        dtype: 'F32' as const,
        data: new Float32Array(shape[0]! * shape[1]!).fill(0.5),
      }));
    return writeSafetensors(tensors);
  }
  const load = (bytes: Uint8Array) =>
    readAdapterWeights(bytesSource(bytes, 'adapter_model.safetensors'), SPEC, settings);

  it('reads a complete file into the lora group', async () => {
    const lora = await load(file());
    expect(lora.layers[1]!.v_proj!.b).toEqual(new Float32Array(8).fill(0.5));
    expect(lora.layers[0]!.k_proj).toBeUndefined();
  });

  it('names a missing, an extra and a mis-shaped tensor with the shape expected', async () => {
    await expect(load(file({ [name(1, 'v_proj', 'B')]: undefined }))).rejects.toThrow(
      `adapter_model.safetensors: is missing '${name(1, 'v_proj', 'B')}' [4, 2] (r = 2 on q_proj, v_proj of a 2-layer llama model)`,
    );
    await expect(load(file({ [name(0, 'k_proj', 'A')]: [2, 8] }))).rejects.toThrow(
      `adapter_model.safetensors: holds '${name(0, 'k_proj', 'A')}' [2, 8], which r = 2 on q_proj, v_proj of a 2-layer llama model does not have`,
    );
    // A rank-4 adapter read with a config that says r = 2.
    await expect(load(file({ [name(0, 'q_proj', 'A')]: [4, 8] }))).rejects.toThrow(
      `'${name(0, 'q_proj', 'A')}' has shape [4, 8], expected [2, 8]`,
    );
    // (in, out) stored the wrong way round, as a fan_in_fan_out layer would.
    await expect(load(file({ [name(0, 'v_proj', 'B')]: [2, 4] }))).rejects.toThrow(
      `'${name(0, 'v_proj', 'B')}' has shape [2, 4], expected [4, 2]`,
    );
  });

  it('a written adapter reads back bit for bit, with its config', async () => {
    const lora = createLlamaLora(SPEC, settings, 3);
    // Every tensor non-zero (the layout's padding between tensors stays zero).
    for (const e of lora.group.layout.entries) {
      const view = lora.group.layout.view(lora.params, e.name);
      view.forEach((_, i) => (view[i] = Math.sin(e.offset + i)));
    }
    const back = await readPeftAdapter(
      adapterConfigText(settings, null),
      bytesSource(adapterWeightsBytes(lora)),
      SPEC,
    );
    expect(back.config.settings).toEqual(settings);
    expect(back.config.baseModel).toBeNull();
    expect(Array.from(back.lora.params)).toEqual(Array.from(lora.params));
    await expect(readPeftAdapter('{"r": 2', bytesSource(new Uint8Array(8)), SPEC)).rejects.toThrow(
      /adapter_config.json: is not valid JSON/,
    );
  });
});
