/**
 * The MLP policy / value network of the classic-control lessons (CartPole): its configuration,
 * parameter layout and initialisation, following CleanRL's ppo.py `Agent`:
 *
 *   actor  = Linear(obs, 64) → Tanh → Linear(64, 64) → Tanh → Linear(64, actions)   (logits)
 *   critic = Linear(obs, 64) → Tanh → Linear(64, 64) → Tanh → Linear(64, 1)         (value)
 *   layer_init: orthogonal weights with gain √2 on hidden layers, 0.01 on the actor's last layer
 *   and 1 on the critic's; biases 0.
 *
 * Weight layout is PyTorch's nn.Linear: W (out, in), y = x·Wᵀ + b. Layer l is named `l{l}`:
 * l0.w (h0, inputs), l0.b (h0), l1.w (h1, h0), …, l{L}.w (outputs, h{L−1}), L = hidden.length.
 */
import { ACTIVATIONS, type Activation } from '../ops/nn/activation';
import { OpInputError } from '../ops/errors';
import { checkInt, checkOneOf, checkRange } from '../ops/validate';
import { seededRandom } from '../util/random';
import { orthogonal } from './orthogonal-init';
import { ParamLayout, type ParamSpec } from './param-layout';

export interface MlpConfig {
  /** Observation size (CartPole: 4). Integer in [1, 1024]. */
  inputs: number;
  /** Hidden layer widths (CleanRL: [64, 64]). 1–4 layers, each an integer in [1, 1024]. */
  hidden: number[];
  /** Output size: the number of actions for an actor (logits), 1 for a critic. Integer in [1, 1024]. */
  outputs: number;
  /** Hidden activation: 'tanh' as CleanRL's PPO; 'relu' and 'gelu' (tanh approximation) too. */
  activation: Activation;
  /**
   * Std-gain of the last layer's orthogonal init (CleanRL layer_init std): 0.01 for the actor, so
   * the first policy is near uniform; 1 for the critic. Finite, > 0.
   */
  outputGain: number;
}

const OP = 'mlp';
/** Largest observation, hidden and output width. */
export const MLP_MAX_WIDTH = 1024;
/** Most hidden layers. */
export const MLP_MAX_HIDDEN_LAYERS = 4;
/** Orthogonal gain of hidden layers (CleanRL layer_init default std = √2, ReLU/tanh gain). */
export const MLP_HIDDEN_GAIN = Math.SQRT2;

/** CleanRL's PPO actor for `inputs` observations and `actions` discrete actions. */
export function ppoActorConfig(inputs: number, actions: number): MlpConfig {
  return { inputs, hidden: [64, 64], outputs: actions, activation: 'tanh', outputGain: 0.01 };
}

/** CleanRL's PPO critic for `inputs` observations. */
export function ppoCriticConfig(inputs: number): MlpConfig {
  return { inputs, hidden: [64, 64], outputs: 1, activation: 'tanh', outputGain: 1 };
}

/** Rejects a bad config, naming the field and its valid range (OpInputError). */
export function checkMlpConfig(config: MlpConfig): void {
  checkInt(OP, 'inputs', config.inputs, 1, MLP_MAX_WIDTH);
  if (
    !Array.isArray(config.hidden) ||
    config.hidden.length < 1 ||
    config.hidden.length > MLP_MAX_HIDDEN_LAYERS
  ) {
    const got = Array.isArray(config.hidden) ? config.hidden.length : String(config.hidden);
    throw new OpInputError(
      OP,
      'hidden',
      `must list 1 to ${MLP_MAX_HIDDEN_LAYERS} layer widths, got ${got}`,
    );
  }
  config.hidden.forEach((h, i) => checkInt(OP, `hidden[${i}]`, h, 1, MLP_MAX_WIDTH));
  checkInt(OP, 'outputs', config.outputs, 1, MLP_MAX_WIDTH);
  checkOneOf(OP, 'activation', config.activation, ACTIVATIONS);
  checkRange(OP, 'outputGain', config.outputGain, 0, Infinity, { lowOpen: true, highOpen: true });
}

/** Widths of every layer boundary: [inputs, ...hidden, outputs]. */
export function mlpWidths(config: MlpConfig): number[] {
  return [config.inputs, ...config.hidden, config.outputs];
}

/** Names of layer l's weight (out, in) and bias (out). */
export function mlpLayerNames(layer: number): { w: string; b: string } {
  return { w: `l${layer}.w`, b: `l${layer}.b` };
}

/**
 * The parameter tensors. ParamLayout's own `initialize()` only knows Gaussian inits: the weight
 * specs carry N(0, gain²/max(out, in)), the Gaussian with the orthogonal init's per-entry variance,
 * as a stand-in; initMlp() is the real (orthogonal) init.
 */
export function mlpParamSpecs(config: MlpConfig): ParamSpec[] {
  checkMlpConfig(config);
  const widths = mlpWidths(config);
  const layers = widths.length - 1;
  const specs: ParamSpec[] = [];
  for (let l = 0; l < layers; l++) {
    const [inDim, outDim] = [widths[l]!, widths[l + 1]!];
    const names = mlpLayerNames(l);
    const gain = layerGain(config, l);
    specs.push(
      {
        name: names.w,
        shape: [outDim, inDim],
        decay: true,
        init: { kind: 'normal', std: gain / Math.sqrt(Math.max(outDim, inDim)) },
      },
      { name: names.b, shape: [outDim], decay: false, init: { kind: 'zeros' } },
    );
  }
  return specs;
}

/** Flat layout: all weights (decayed) first, then all biases; each tensor 64-float aligned. */
export function mlpLayout(config: MlpConfig): ParamLayout {
  return new ParamLayout(mlpParamSpecs(config));
}

/** Orthogonal gain of layer l: √2 for hidden layers, outputGain for the last. */
export function layerGain(config: MlpConfig, layer: number): number {
  return layer === config.hidden.length ? config.outputGain : MLP_HIDDEN_GAIN;
}

/**
 * CleanRL's layer_init for every layer: orthogonal weights (gain √2 hidden, outputGain last),
 * biases 0, padding 0. One seeded stream, drawn layer by layer: same seed, same parameters.
 * Returns a flat array of mlpLayout(config).total floats (Float64Array with precision 'f64').
 */
export function initMlp(config: MlpConfig, seed: number, precision?: 'f32'): Float32Array;
export function initMlp(config: MlpConfig, seed: number, precision: 'f64'): Float64Array;
export function initMlp(
  config: MlpConfig,
  seed: number,
  precision: 'f32' | 'f64' = 'f32',
): Float32Array | Float64Array {
  const layout = mlpLayout(config);
  const flat =
    precision === 'f64' ? new Float64Array(layout.total) : new Float32Array(layout.total);
  const random = seededRandom(seed);
  const widths = mlpWidths(config);
  for (let l = 0; l < widths.length - 1; l++) {
    const w = orthogonal(widths[l + 1]!, widths[l]!, layerGain(config, l), random);
    layout.view(flat, mlpLayerNames(l).w).set(w);
  }
  return flat;
}
