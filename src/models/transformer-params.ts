/**
 * The transformer's parameter tensors, by name, shape and initialisation (GPT-2's scheme: weights
 * N(0, 0.02²), residual output projections N(0, (0.02/√(2·layers))²), biases 0, LayerNorm gain 1).
 * Weight layout is PyTorch's nn.Linear: W (out, in), y = x·Wᵀ + b.
 */
import { paramGroups, type ParamGroup } from './param-groups';
import { ParamLayout, type ParamSpec } from './param-layout';
import { checkTransformerConfig, usesRotary, type TransformerConfig } from './transformer-config';

const STD = 0.02;

/** Names of one block's tensors; `h${l}.` prefixes them, as in GPT-2's checkpoints. */
export function blockParamNames(layer: number) {
  const p = `h${layer}.`;
  return {
    ln1Gamma: `${p}ln1.gamma`,
    ln1Beta: `${p}ln1.beta`,
    qkvW: `${p}attn.qkv.w`,
    qkvB: `${p}attn.qkv.b`,
    projW: `${p}attn.proj.w`,
    projB: `${p}attn.proj.b`,
    ln2Gamma: `${p}ln2.gamma`,
    ln2Beta: `${p}ln2.beta`,
    fcW: `${p}mlp.fc.w`,
    fcB: `${p}mlp.fc.b`,
    mlpProjW: `${p}mlp.proj.w`,
    mlpProjB: `${p}mlp.proj.b`,
  };
}

export function transformerParamSpecs(config: TransformerConfig): ParamSpec[] {
  checkTransformerConfig(config);
  const { vocab: V, context, width: C, layers } = config;
  const normal = (std: number) => ({ kind: 'normal', std }) as const;
  const weight = (name: string, shape: number[], std = STD): ParamSpec => ({
    name,
    shape,
    decay: true,
    init: normal(std),
  });
  const zeros = (name: string, n: number): ParamSpec => ({
    name,
    shape: [n],
    decay: false,
    init: { kind: 'zeros' },
  });
  const ones = (name: string, n: number): ParamSpec => ({
    name,
    shape: [n],
    decay: false,
    init: { kind: 'ones' },
  });
  const residualStd = STD / Math.sqrt(2 * layers);
  // Rotary positions have no table: the position enters through the rotation of q and k.
  const specs: ParamSpec[] = [weight('wte', [V, C])];
  if (!usesRotary(config)) specs.push(weight('wpe', [context, C]));
  for (let l = 0; l < layers; l++) {
    const n = blockParamNames(l);
    specs.push(
      ones(n.ln1Gamma, C),
      zeros(n.ln1Beta, C),
      weight(n.qkvW, [3 * C, C]),
      zeros(n.qkvB, 3 * C),
      weight(n.projW, [C, C], residualStd),
      zeros(n.projB, C),
      ones(n.ln2Gamma, C),
      zeros(n.ln2Beta, C),
      weight(n.fcW, [4 * C, C]),
      zeros(n.fcB, 4 * C),
      weight(n.mlpProjW, [C, 4 * C], residualStd),
      zeros(n.mlpProjB, C),
    );
  }
  specs.push(ones('lnf.gamma', C), zeros('lnf.beta', C));
  if (!config.tiedEmbeddings) specs.push(weight('lm_head.w', [V, C]));
  if (config.valueHead) specs.push(weight('value_head.w', [1, C]), zeros('value_head.b', 1));
  return specs;
}

export function transformerLayout(config: TransformerConfig): ParamLayout {
  return new ParamLayout(transformerParamSpecs(config));
}

/** The LM head's weight: the token embedding when tied. (V, C) */
export function lmHeadName(config: TransformerConfig): string {
  return config.tiedEmbeddings ? 'wte' : 'lm_head.w';
}

/** The tiny GPT's parameters as groups: one trainable f32 group, 'base', over its one layout. */
export function transformerParamGroups(config: TransformerConfig): readonly ParamGroup[] {
  return paramGroups([
    { name: 'base', layout: transformerLayout(config), storage: 'f32', trainable: true },
  ]);
}
