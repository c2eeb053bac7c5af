/**
 * The policy transformer (src/models/transformer-config.ts) written the way a tfjs user writes it:
 * tfjs-core ops for the forward pass, tf.variableGrads for the backward pass, and AdamW from tf
 * ops. It is the benchmark peer for one full training step (forward, backward, AdamW) of our WGSL
 * transformer on the same device, so it follows the same definition exactly:
 *
 * - parameters: names, shapes, PyTorch nn.Linear layout (W (out, in), y = x·Wᵀ + b) and the
 *   seeded initialisation of src/models/transformer-params.ts, so both start from the same
 *   weights for the same seed (the value head, if configured, is left out: the peer trains only
 *   the language model);
 * - block: x = x + proj(attn(ln1(x))); x = x + mlp(ln2(x)); mlp = proj(gelu_tanh(fc(·)));
 *   LayerNorm eps 1e-5 with the biased variance; GELU tanh approximation; qkv rows are
 *   [q | k | v], head h uses channels h·hs … h·hs + hs − 1; causal softmax(q·kᵀ/√hs);
 * - loss: token-mean cross-entropy over a 0/1 mask, −Σ mask·log p(target) / Σ mask (0 when the
 *   mask is empty);
 * - AdamW as torch.optim.AdamW (p ← p − lr·wd·p first, then bias-corrected moments, eps added
 *   to √v̂), written by hand with tf ops (about the same ops tf.train.adam records per tensor):
 *   the PyTorch order is explicit in one place, and loadFlat can reset the moments. Weight
 *   decay applies to the 2-D weights and embeddings only (the `decay` flag of each spec).
 *
 * Which backend runs it is the caller's choice (tf.setBackend before creating it).
 */
import type * as TfCore from '@tensorflow/tfjs-core';
import type { TransformerConfig } from '../../src/models/transformer-config';
import {
  blockParamNames,
  lmHeadName,
  transformerLayout,
} from '../../src/models/transformer-params';
import { OpInputError } from '../../src/ops/errors';
import { checkBinary, checkInt, checkLength } from '../../src/ops/validate';

export interface TfjsTransformer {
  /** One training step on (B, T) int32 tokens/targets and a (B, T) 0/1 mask; returns the loss
   *  as an unread tf.Scalar (the caller reads it when timing ends) — no sync inside. */
  step(
    tokens: Int32Array,
    targets: Int32Array,
    mask: Float32Array,
    batch: number,
    seq: number,
  ): TfCore.Scalar;
  /** Forward only, for tests: logits (B, T, V) as a Float32Array. */
  logits(tokens: Int32Array, batch: number, seq: number): Promise<Float32Array>;
  /** The trainable tensors by their names in src/models/transformer-params.ts. */
  readonly parameters: ReadonlyMap<string, TfCore.Variable>;
  /** Replaces every parameter with its tensor in `flat` (laid out by transformerLayout(config),
   *  e.g. our model's weights) and resets the AdamW moments and step count. */
  loadFlat(flat: Float32Array): void;
  dispose(): void;
}

/** torch.optim.AdamW hyperparameters of the benchmark step (weight decay: PyTorch's default). */
export const TFJS_ADAMW = { lr: 1e-3, beta1: 0.9, beta2: 0.999, eps: 1e-8, weightDecay: 0.01 };

const LN_EPS = 1e-5;
/** Added to masked attention scores: exp underflows to exactly 0, with no −∞ arithmetic. */
const MASKED_SCORE = -1e9;
const OP = 'tfjsTransformer';

/**
 * tfjs-core registers no gradient functions by itself (the @tensorflow/tfjs bundle imports all of
 * them); these are the kernels this model's tape records, loaded from tfjs-core's own ESM files
 * (about 80 modules, against 450 for all gradients). A formulation that records another kernel
 * fails loudly in tf.variableGrads ("gradient function not found for …"): add it here.
 *
 * Why this shape: in Node, Vite SSR and vitest leave bare `@tensorflow/tfjs-core/dist/…` imports
 * to Node, which cannot resolve those files' extension-less imports, so the files are imported by
 * path (Vite then transforms them). They are a second copy of tfjs-core's modules next to the one
 * `tf` came from; that works because tfjs keeps its engine and registries on the global object and
 * checks tensors by shape, not class, but only if `tf` created the engine first: hence dynamic
 * imports, run after `tf` is loaded.
 */
const GRADIENT_MODULES: Record<string, () => Promise<object>> = {
  Add: () => import('../../node_modules/@tensorflow/tfjs-core/dist/gradients/Add_grad.js'),
  BatchMatMul: () =>
    import('../../node_modules/@tensorflow/tfjs-core/dist/gradients/BatchMatMul_grad.js'),
  Cast: () => import('../../node_modules/@tensorflow/tfjs-core/dist/gradients/Cast_grad.js'),
  GatherV2: () =>
    import('../../node_modules/@tensorflow/tfjs-core/dist/gradients/GatherV2_grad.js'),
  Identity: () =>
    import('../../node_modules/@tensorflow/tfjs-core/dist/gradients/Identity_grad.js'),
  Mean: () => import('../../node_modules/@tensorflow/tfjs-core/dist/gradients/Mean_grad.js'),
  Multiply: () =>
    import('../../node_modules/@tensorflow/tfjs-core/dist/gradients/Multiply_grad.js'),
  Neg: () => import('../../node_modules/@tensorflow/tfjs-core/dist/gradients/Neg_grad.js'),
  OneHot: () => import('../../node_modules/@tensorflow/tfjs-core/dist/gradients/OneHot_grad.js'),
  Reshape: () => import('../../node_modules/@tensorflow/tfjs-core/dist/gradients/Reshape_grad.js'),
  Rsqrt: () => import('../../node_modules/@tensorflow/tfjs-core/dist/gradients/Rsqrt_grad.js'),
  Slice: () => import('../../node_modules/@tensorflow/tfjs-core/dist/gradients/Slice_grad.js'),
  Softmax: () => import('../../node_modules/@tensorflow/tfjs-core/dist/gradients/Softmax_grad.js'),
  SplitV: () => import('../../node_modules/@tensorflow/tfjs-core/dist/gradients/SplitV_grad.js'),
  Square: () => import('../../node_modules/@tensorflow/tfjs-core/dist/gradients/Square_grad.js'),
  Sub: () => import('../../node_modules/@tensorflow/tfjs-core/dist/gradients/Sub_grad.js'),
  Sum: () => import('../../node_modules/@tensorflow/tfjs-core/dist/gradients/Sum_grad.js'),
  Tanh: () => import('../../node_modules/@tensorflow/tfjs-core/dist/gradients/Tanh_grad.js'),
  Transpose: () =>
    import('../../node_modules/@tensorflow/tfjs-core/dist/gradients/Transpose_grad.js'),
};

/** Registers the gradients createTfjsTransformer needs; call once `tf` is loaded. */
export async function loadTfjsTransformerGradients(tf: typeof TfCore): Promise<void> {
  const modules = await Promise.all(Object.values(GRADIENT_MODULES).map((load) => load()));
  for (const module of modules) {
    for (const config of Object.values(module) as TfCore.GradConfig[]) {
      if (!tf.getGradient(config.kernelName)) tf.registerGradient(config);
    }
  }
}

function checkGradients(tf: typeof TfCore): void {
  const missing = Object.keys(GRADIENT_MODULES).filter((kernel) => !tf.getGradient(kernel));
  if (missing.length > 0) {
    throw new Error(
      `${OP}: no gradient registered for ${missing.join(', ')}; await loadTfjsTransformerGradients(tf) first`,
    );
  }
}

/** Distinct tfjs variable names per instance: tfjs registers variables globally by name. */
let instances = 0;

interface Trainable {
  name: string;
  variable: TfCore.Variable;
  m: TfCore.Variable;
  v: TfCore.Variable;
  decay: boolean;
}

export function createTfjsTransformer(
  tf: typeof TfCore,
  config: TransformerConfig,
  seed: number,
): TfjsTransformer {
  // transformerLayout checks the config (OpInputError naming the field and range).
  const layout = transformerLayout(config);
  checkGradients(tf);
  const { vocab: V, context, width: C, layers, heads: NH } = config;
  const hs = C / NH;
  const prefix = `tfjsTransformer${instances++}/`;
  const entries = layout.entries.filter((e) => !e.name.startsWith('value_head.'));

  const initial = layout.initialize<Float32Array>(seed);
  // A tf.variable shares its initial tensor's data (reference counted): free the temporary.
  const variableOf = (data: Float32Array, shape: number[], trainable: boolean, name: string) => {
    const value = tf.tensor(data, shape);
    const variable = tf.variable(value, trainable, prefix + name);
    value.dispose();
    return variable;
  };
  const trainables: Trainable[] = entries.map((e) => ({
    name: e.name,
    variable: variableOf(layout.view(initial, e.name), [...e.shape], true, e.name),
    m: variableOf(new Float32Array(e.size), [...e.shape], false, `${e.name}/adam_m`),
    v: variableOf(new Float32Array(e.size), [...e.shape], false, `${e.name}/adam_v`),
    decay: e.decay,
  }));
  const parameters = new Map(trainables.map((t) => [t.name, t.variable]));
  const variables = trainables.map((t) => t.variable);
  let stepCount = 0;

  const param = (name: string): TfCore.Variable => {
    const found = parameters.get(name);
    if (!found) throw new Error(`${OP}: no parameter "${name}"`);
    return found;
  };

  // Constants made once and kept (tfjs would otherwise upload a scalar per op call).
  const k = {
    lnEps: tf.scalar(LN_EPS),
    half: tf.scalar(0.5),
    one: tf.scalar(1),
    geluScale: tf.scalar(Math.sqrt(2 / Math.PI)),
    geluCubic: tf.scalar(0.044715),
    attnScale: tf.scalar(1 / Math.sqrt(hs)),
    beta1: tf.scalar(TFJS_ADAMW.beta1),
    oneMinusBeta1: tf.scalar(1 - TFJS_ADAMW.beta1),
    beta2: tf.scalar(TFJS_ADAMW.beta2),
    oneMinusBeta2: tf.scalar(1 - TFJS_ADAMW.beta2),
    eps: tf.scalar(TFJS_ADAMW.eps),
    decayFactor: tf.scalar(1 - TFJS_ADAMW.lr * TFJS_ADAMW.weightDecay),
  };
  /** (T, T): 0 on and below the diagonal, MASKED_SCORE above (key j > query t). */
  const causalMasks = new Map<number, TfCore.Tensor2D>();
  const causalMask = (T: number): TfCore.Tensor2D => {
    let mask = causalMasks.get(T);
    if (!mask) {
      const data = new Float32Array(T * T);
      for (let t = 0; t < T; t++) data.fill(MASKED_SCORE, t * T + t + 1, (t + 1) * T);
      mask = tf.keep(tf.tensor2d(data, [T, T]));
      causalMasks.set(T, mask);
    }
    return mask;
  };

  // x: (N, C) → (N, C), normalised over C with the biased variance.
  const layerNorm = (x: TfCore.Tensor2D, gamma: string, beta: string): TfCore.Tensor2D => {
    const centred = tf.sub(x, tf.mean(x, 1, true));
    const variance = tf.mean(tf.square(centred), 1, true);
    const normed = tf.mul(centred, tf.rsqrt(tf.add(variance, k.lnEps)));
    return tf.add(tf.mul(normed, param(gamma)), param(beta));
  };

  // x: (N, in), W: (out, in), b: (out) → (N, out) = x·Wᵀ + b.
  const linear = (x: TfCore.Tensor2D, w: string, b: string): TfCore.Tensor2D =>
    tf.add(tf.matMul(x, param(w), false, true), param(b));

  // 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
  const gelu = (x: TfCore.Tensor2D): TfCore.Tensor2D => {
    const inner = tf.mul(k.geluScale, tf.add(x, tf.mul(k.geluCubic, tf.mul(x, tf.square(x)))));
    return tf.mul(tf.mul(k.half, x), tf.add(k.one, tf.tanh(inner)));
  };

  // qkv: (B·T, 3C) rows [q | k | v] → (B·T, C), heads concatenated in channel order.
  const attention = (qkv: TfCore.Tensor2D, B: number, T: number): TfCore.Tensor2D => {
    const [q, kk, v] = tf.split(qkv, 3, 1) as [TfCore.Tensor2D, TfCore.Tensor2D, TfCore.Tensor2D];
    // (B·T, C) → (B·NH, T, hs): head h takes channels h·hs … h·hs + hs − 1.
    const byHead = (x: TfCore.Tensor2D): TfCore.Tensor3D =>
      tf.reshape(tf.transpose(tf.reshape(x, [B, T, NH, hs]), [0, 2, 1, 3]), [B * NH, T, hs]);
    // scores: (B·NH, T, T) = q·kᵀ/√hs, keys after the query masked out.
    const scores = tf.add(
      tf.mul(tf.matMul(byHead(q), byHead(kk), false, true), k.attnScale),
      causalMask(T),
    );
    const y = tf.matMul(tf.softmax(scores), byHead(v)); // (B·NH, T, hs)
    return tf.reshape(tf.transpose(tf.reshape(y, [B, NH, T, hs]), [0, 2, 1, 3]), [B * T, C]);
  };

  // tokens: (B·T) int32 → logits (B·T, V).
  const forward = (tokens: TfCore.Tensor1D, B: number, T: number): TfCore.Tensor2D => {
    const positions = tf.slice(param('wpe'), [0, 0], [T, C]); // (T, C)
    const embedded = tf.add(tf.reshape(tf.gather(param('wte'), tokens), [B, T, C]), positions);
    let x = tf.reshape(embedded, [B * T, C]) as TfCore.Tensor2D;
    for (let l = 0; l < layers; l++) {
      const n = blockParamNames(l);
      const attn = attention(linear(layerNorm(x, n.ln1Gamma, n.ln1Beta), n.qkvW, n.qkvB), B, T);
      x = tf.add(x, linear(attn, n.projW, n.projB));
      const hidden = gelu(linear(layerNorm(x, n.ln2Gamma, n.ln2Beta), n.fcW, n.fcB));
      x = tf.add(x, linear(hidden, n.mlpProjW, n.mlpProjB));
    }
    x = layerNorm(x, 'lnf.gamma', 'lnf.beta');
    return tf.matMul(x, param(lmHeadName(config)), false, true);
  };

  // weights: (B·T) = mask / Σ mask, so the loss is −Σ weights·log p(target).
  const loss = (
    tokens: TfCore.Tensor1D,
    targets: TfCore.Tensor1D,
    weights: TfCore.Tensor1D,
    B: number,
    T: number,
  ): TfCore.Scalar => {
    const logp = tf.logSoftmax(forward(tokens, B, T)); // (B·T, V)
    const picked = tf.sum(tf.mul(logp, tf.oneHot(targets, V)), 1); // (B·T)
    return tf.neg(tf.sum<TfCore.Scalar>(tf.mul(picked, weights)));
  };

  // torch.optim.AdamW, one parameter tensor; stepSize = lr / (1 − β1^t), root2 = √(1 − β2^t).
  const adamw = (
    t: Trainable,
    grad: TfCore.Tensor,
    stepSize: TfCore.Scalar,
    root2: TfCore.Scalar,
  ): void => {
    const p = t.decay ? tf.mul(t.variable, k.decayFactor) : t.variable;
    const m = tf.add(tf.mul(k.beta1, t.m), tf.mul(k.oneMinusBeta1, grad));
    const v = tf.add(tf.mul(k.beta2, t.v), tf.mul(k.oneMinusBeta2, tf.square(grad)));
    const denom = tf.add(tf.div(tf.sqrt(v), root2), k.eps);
    t.variable.assign(tf.sub(p, tf.mul(stepSize, tf.div(m, denom))));
    t.m.assign(m);
    t.v.assign(v);
  };

  const checkTokens = (field: string, ids: Int32Array, B: number, T: number): void => {
    checkLength(OP, field, ids, B * T, `batch × seq = ${B} × ${T}`);
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      if (id < 0 || id >= V) {
        throw new OpInputError(OP, field, `must be in [0, ${V - 1}], but index ${i} is ${id}`);
      }
    }
  };
  const checkShape = (B: number, T: number): void => {
    checkInt(OP, 'batch', B, 1, 2 ** 20);
    checkInt(OP, 'seq', T, 1, context);
  };

  return {
    step(tokens, targets, mask, batch, seq) {
      checkShape(batch, seq);
      checkTokens('tokens', tokens, batch, seq);
      checkTokens('targets', targets, batch, seq);
      checkLength(OP, 'mask', mask, batch * seq, `batch × seq = ${batch} × ${seq}`);
      checkBinary(OP, 'mask', mask, seq);
      let count = 0;
      for (const m of mask) count += m;
      const weights = mask.map((m) => m / Math.max(count, 1));
      stepCount += 1;
      const { lr, beta1, beta2 } = TFJS_ADAMW;
      const stepSize = lr / (1 - beta1 ** stepCount);
      const root2 = Math.sqrt(1 - beta2 ** stepCount);
      return tf.tidy(() => {
        const tok = tf.tensor1d(tokens, 'int32');
        const tgt = tf.tensor1d(targets, 'int32');
        const w = tf.tensor1d(weights);
        const { value, grads } = tf.variableGrads(() => loss(tok, tgt, w, batch, seq), variables);
        const stepSizeT = tf.scalar(stepSize);
        const root2T = tf.scalar(root2);
        for (const t of trainables) {
          const grad = grads[t.variable.name];
          if (!grad) throw new Error(`${OP}: no gradient reached ${t.name}`);
          adamw(t, grad, stepSizeT, root2T);
        }
        return value;
      });
    },

    async logits(tokens, batch, seq) {
      checkShape(batch, seq);
      checkTokens('tokens', tokens, batch, seq);
      const out = tf.tidy(() => forward(tf.tensor1d(tokens, 'int32'), batch, seq));
      try {
        return (await out.data()) as Float32Array;
      } finally {
        out.dispose();
      }
    },

    parameters,

    loadFlat(flat) {
      checkLength(OP, 'flat', flat, layout.total, 'the layout total');
      for (const t of trainables) {
        const shape = t.variable.shape;
        tf.tidy(() => {
          t.variable.assign(tf.tensor(layout.view(flat, t.name), shape));
          t.m.assign(tf.zerosLike(t.m));
          t.v.assign(tf.zerosLike(t.v));
        });
      }
      stepCount = 0;
    },

    dispose() {
      for (const t of trainables) {
        t.variable.dispose();
        t.m.dispose();
        t.v.dispose();
      }
      for (const c of Object.values(k)) c.dispose();
      for (const mask of causalMasks.values()) mask.dispose();
      causalMasks.clear();
    },
  };
}
