/**
 * The MLP on the CPU: forward and backward composed from the layer ops in src/ops/nn (linear,
 * activation), the same ops the WGSL kernels are checked against. It is the CPU fallback of the
 * classic-control lessons and the twin the GPU model (mlp-gpu.ts) is tested against; in float64 it
 * is what the gradient check runs on.
 *
 * Shapes: B = batch, D = inputs, H_l = hidden[l], A = outputs, L = hidden.length.
 *   x_0 = obs (B, D);  z_l = x_l·W_lᵀ + b_l, x_{l+1} = f(z_l) (B, H_l) for l < L;
 *   out = x_L·W_Lᵀ + b_L (B, A).
 */
import { activationBackward, activationForward } from '../ops/nn/activation';
import type { Floats } from '../ops/nn/floats';
import { zerosLike } from '../ops/nn/floats';
import { linearBackward, linearForward } from '../ops/nn/linear';
import { checkInt, checkLength } from '../ops/validate';
import { type MlpConfig, checkMlpConfig, mlpLayerNames, mlpWidths } from './mlp-params';
import type { ParamLayout } from './param-layout';

const OP = 'mlp';
/** Most rows in one forward pass. */
export const MLP_MAX_BATCH = 2 ** 20;

/** What the forward pass keeps for the backward pass. */
export interface MlpActivations<T extends Floats> {
  batch: number;
  /** Each layer's input: [obs (B, D), x_1 (B, H_0), …, x_L (B, H_{L−1})]; L + 1 entries. */
  inputs: T[];
  /** Each hidden layer's pre-activation z_l (B, H_l); L entries. */
  pre: T[];
}

export interface MlpOutput<T extends Floats> {
  out: T; // (B, A): logits of an actor, values of a critic
  acts: MlpActivations<T>;
}

/** The checks mlpForward() and MlpGpu.writeObservations() share. */
export function checkMlpBatch(config: MlpConfig, obs: Floats, batch: number): void {
  checkMlpConfig(config);
  checkInt(OP, 'batch', batch, 1, MLP_MAX_BATCH);
  checkLength(OP, 'obs', obs, batch * config.inputs, 'batch × inputs');
}

/** `params` must be laid out by `layout` (the layout of this config). */
export function checkMlpParams(layout: ParamLayout, params: Floats): void {
  checkLength(OP, 'params', params, layout.total, 'layout.total');
}

/** obs (B, D) → out (B, A), keeping what the backward pass needs. */
export function mlpForward<T extends Floats>(
  config: MlpConfig,
  layout: ParamLayout,
  params: T,
  obs: T,
  batch: number,
): MlpOutput<T> {
  checkMlpBatch(config, obs, batch);
  checkMlpParams(layout, params);
  const widths = mlpWidths(config);
  const last = config.hidden.length;
  const p = (name: string) => layout.view(params, name);
  const inputs: T[] = [obs];
  const pre: T[] = [];
  let x = obs;
  for (let l = 0; l < last; l++) {
    const n = mlpLayerNames(l);
    const z = linearForward(x, p(n.w), p(n.b), {
      rows: batch,
      inDim: widths[l]!,
      outDim: widths[l + 1]!,
    });
    x = activationForward(z, config.activation);
    pre.push(z);
    inputs.push(x);
  }
  const n = mlpLayerNames(last);
  const out = linearForward(x, p(n.w), p(n.b), {
    rows: batch,
    inDim: widths[last]!,
    outDim: config.outputs,
  });
  return { out, acts: { batch, inputs, pre } };
}

/**
 * dout (B, A) → gradients of every parameter, in a flat array with the parameters' layout
 * (padding zero). `acts` comes from mlpForward() with the same params.
 */
export function mlpBackward<T extends Floats>(
  config: MlpConfig,
  layout: ParamLayout,
  params: T,
  acts: MlpActivations<T>,
  dout: T,
): T {
  checkMlpConfig(config);
  checkMlpParams(layout, params);
  const { batch } = acts;
  checkLength(OP, 'dout', dout, batch * config.outputs, 'batch × outputs');
  const widths = mlpWidths(config);
  const p = (name: string) => layout.view(params, name);
  const grads = zerosLike(params, layout.total);
  const g = (name: string) => layout.view(grads, name);

  let dy = dout; // gradient of layer l's output: dout, then dz_l
  for (let l = config.hidden.length; l >= 0; l--) {
    const n = mlpLayerNames(l);
    const shape = { rows: batch, inDim: widths[l]!, outDim: widths[l + 1]! };
    const { dx, dw, db } = linearBackward(dy, acts.inputs[l]!, p(n.w), shape, { hasBias: true });
    g(n.w).set(dw);
    g(n.b).set(db!);
    // dz_{l−1} = dx_l · f′(z_{l−1}); the first layer's dx (d obs) is not needed.
    if (l > 0) dy = activationBackward(dx, acts.pre[l - 1]!, config.activation);
  }
  return grads;
}
