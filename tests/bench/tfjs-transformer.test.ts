/**
 * The tfjs transformer peer (bench/peers/tfjs-transformer.ts) on tfjs-core's CPU backend
 * (@tensorflow/tfjs-backend-cpu: tfjs-core registers no backend of its own; that package is
 * installed as a dependency of tfjs-backend-webgpu). Tiny configurations, so this stays fast.
 */
import * as tf from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-backend-cpu';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  TFJS_ADAMW,
  createTfjsTransformer,
  loadTfjsTransformerGradients,
  type TfjsTransformer,
} from '../../bench/peers/tfjs-transformer';
import type { TransformerConfig } from '../../src/models/transformer-config';
import {
  blockParamNames,
  lmHeadName,
  transformerLayout,
} from '../../src/models/transformer-params';
import { OpInputError } from '../../src/ops/errors';
import { seededRandom } from '../support/random';

const CONFIG: TransformerConfig = {
  vocab: 32,
  context: 16,
  width: 32,
  layers: 2,
  heads: 4,
  tiedEmbeddings: false,
  valueHead: false,
};

/** The smallest model the config allows, for the 50-step test. */
const TINY: TransformerConfig = { ...CONFIG, vocab: 16, width: 16, layers: 1, heads: 2 };

function randomIds(n: number, vocab: number, seed: number): Int32Array {
  const next = seededRandom(seed);
  return Int32Array.from({ length: n }, () => Math.floor(next() * vocab));
}

/** Every row of a (rows, n) tensor: the float64 reference works row by row. */
type Rows = Float64Array[];

/**
 * The architecture written out loop by loop in float64, from the same definition the peer
 * follows (PyTorch nn.Linear layout, pre-LN blocks, GELU tanh, causal attention, qkv = [q|k|v]).
 * Returns logits (B·T, V) row-major.
 */
function referenceLogits(
  config: TransformerConfig,
  p: (name: string) => Float32Array,
  tokens: Int32Array,
  B: number,
  T: number,
): Float64Array {
  const { width: C, heads: NH, vocab: V } = config;
  const hs = C / NH;
  const linear = (x: Rows, w: Float32Array, b: Float32Array | undefined, out: number): Rows =>
    x.map((row) => {
      const y = new Float64Array(out);
      for (let o = 0; o < out; o++) {
        let s = b ? b[o]! : 0;
        for (let i = 0; i < row.length; i++) s += row[i]! * w[o * row.length + i]!;
        y[o] = s;
      }
      return y;
    });
  const layerNorm = (x: Rows, gamma: Float32Array, beta: Float32Array): Rows =>
    x.map((row) => {
      const mean = row.reduce((a, v) => a + v, 0) / C;
      const variance = row.reduce((a, v) => a + (v - mean) ** 2, 0) / C;
      return row.map((v, c) => ((v - mean) / Math.sqrt(variance + 1e-5)) * gamma[c]! + beta[c]!);
    });
  const gelu = (v: number) =>
    0.5 * v * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (v + 0.044715 * v ** 3)));
  const add = (a: Rows, b: Rows): Rows => a.map((row, r) => row.map((v, c) => v + b[r]![c]!));

  const wte = p('wte');
  const wpe = p('wpe');
  let x: Rows = Array.from(tokens, (id, r) =>
    Float64Array.from({ length: C }, (_, c) => wte[id * C + c]! + wpe[(r % T) * C + c]!),
  );
  for (let l = 0; l < config.layers; l++) {
    const n = blockParamNames(l);
    const qkv = linear(layerNorm(x, p(n.ln1Gamma), p(n.ln1Beta)), p(n.qkvW), p(n.qkvB), 3 * C);
    const attn: Rows = qkv.map(() => new Float64Array(C));
    for (let b = 0; b < B; b++) {
      for (let h = 0; h < NH; h++) {
        for (let t = 0; t < T; t++) {
          const q = qkv[b * T + t]!;
          const scores = Array.from({ length: t + 1 }, (_, j) => {
            const key = qkv[b * T + j]!;
            let s = 0;
            for (let d = 0; d < hs; d++) s += q[h * hs + d]! * key[C + h * hs + d]!;
            return s / Math.sqrt(hs);
          });
          const max = Math.max(...scores);
          const e = scores.map((s) => Math.exp(s - max));
          const z = e.reduce((a, v) => a + v, 0);
          for (let j = 0; j <= t; j++) {
            const value = qkv[b * T + j]!;
            for (let d = 0; d < hs; d++) {
              attn[b * T + t]![h * hs + d]! += (e[j]! / z) * value[2 * C + h * hs + d]!;
            }
          }
        }
      }
    }
    x = add(x, linear(attn, p(n.projW), p(n.projB), C));
    const fc = linear(layerNorm(x, p(n.ln2Gamma), p(n.ln2Beta)), p(n.fcW), p(n.fcB), 4 * C);
    x = add(
      x,
      linear(
        fc.map((row) => row.map(gelu)),
        p(n.mlpProjW),
        p(n.mlpProjB),
        C,
      ),
    );
  }
  const logits = linear(
    layerNorm(x, p('lnf.gamma'), p('lnf.beta')),
    p(lmHeadName(config)),
    undefined,
    V,
  );
  const out = new Float64Array(tokens.length * V);
  logits.forEach((row, r) => out.set(row, r * V));
  return out;
}

function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i]! - b[i]!));
  return max;
}

const created: TfjsTransformer[] = [];
function model(config: TransformerConfig = CONFIG, seed = 7): TfjsTransformer {
  const m = createTfjsTransformer(tf, config, seed);
  created.push(m);
  return m;
}

async function lossOf(m: TfjsTransformer, ...args: Parameters<TfjsTransformer['step']>) {
  const loss = m.step(...args);
  const value = (await loss.data())[0]!;
  loss.dispose();
  return value;
}

beforeAll(async () => {
  // PROD silences tfjs's one-time "install the node backend" banner; it changes no maths.
  tf.env().set('PROD', true);
  expect(await tf.setBackend('cpu')).toBe(true);
  await loadTfjsTransformerGradients(tf);
});

afterAll(() => {
  for (const m of created) m.dispose();
});

describe('tfjs transformer peer (tfjs-core, CPU backend)', () => {
  it.each([false, true])(
    'matches a float64 loop-by-loop forward pass (tied embeddings: %s)',
    async (tiedEmbeddings) => {
      const config = { ...CONFIG, tiedEmbeddings };
      const [B, T] = [2, 7];
      const tokens = randomIds(B * T, config.vocab, 11);
      const layout = transformerLayout(config);
      const flat = layout.initialize<Float32Array>(7);
      const expected = referenceLogits(config, (n) => layout.view(flat, n), tokens, B, T);
      // f32 sums of ≤ 4C = 128 terms around magnitude 1: rounding stays below 1e-5.
      expect(maxDiff(await model(config).logits(tokens, B, T), expected)).toBeLessThan(1e-5);
    },
  );

  it('starts at a loss within 0.1 of ln V on random tokens', async () => {
    const [B, T] = [4, 16];
    const tokens = randomIds(B * T, CONFIG.vocab, 1);
    const targets = randomIds(B * T, CONFIG.vocab, 2);
    const loss = await lossOf(model(), tokens, targets, new Float32Array(B * T).fill(1), B, T);
    expect(Math.abs(loss - Math.log(CONFIG.vocab))).toBeLessThan(0.1);
  });

  it.each([false, true])(
    'memorises a fixed batch: the loss falls over 50 steps (tied embeddings: %s)',
    async (tiedEmbeddings) => {
      // Smaller still: 50 steps of the tfjs CPU backend are the slowest part of this file.
      const config = { ...TINY, tiedEmbeddings };
      const m = model(config);
      const [B, T] = [2, 8];
      const tokens = randomIds(B * T, config.vocab, 3);
      const targets = randomIds(B * T, config.vocab, 4);
      const mask = new Float32Array(B * T).fill(1);
      mask.fill(0, 0, 3); // part of the batch masked out, as prompts are in RL
      const losses: number[] = [];
      for (let i = 0; i < 50; i++) losses.push(await lossOf(m, tokens, targets, mask, B, T));
      expect(losses[0]!).toBeGreaterThan(Math.log(config.vocab) - 0.1);
      expect(losses[49]!).toBeLessThan(0.8 * losses[0]!);
      // Mostly downhill: Adam at lr 1e-3 on one batch should rarely go up.
      const rises = losses.slice(1).filter((l, i) => l > losses[i]!).length;
      expect(rises).toBeLessThan(5);
    },
    // The CPU backend takes ~1 s for these 50 steps; the margin is for a busy machine.
    30_000,
  );

  it('loss = −Σ mask·log p(target) / Σ mask; masked targets change neither loss nor update', async () => {
    const [B, T, V] = [2, 6, CONFIG.vocab];
    const tokens = randomIds(B * T, V, 12);
    const targets = randomIds(B * T, V, 13);
    const mask = Float32Array.from({ length: B * T }, (_, i) => (i % 3 === 0 ? 0 : 1));
    // The same targets except at masked positions.
    const otherTargets = targets.map((t, i) => (mask[i] === 0 ? (t + 5) % V : t));
    const [a, b] = [model(), model()];
    const logits = await a.logits(tokens, B, T);
    let sum = 0;
    let count = 0;
    for (let r = 0; r < B * T; r++) {
      const row = logits.subarray(r * V, (r + 1) * V);
      const max = Math.max(...row);
      const logZ = max + Math.log(row.reduce((acc, x) => acc + Math.exp(x - max), 0));
      sum += mask[r]! * (row[targets[r]!]! - logZ);
      count += mask[r]!;
    }
    const loss = await lossOf(a, tokens, targets, mask, B, T);
    expect(loss).toBeCloseTo(-sum / count, 5);
    expect(await lossOf(b, tokens, otherTargets, mask, B, T)).toBe(loss);
    for (const [name, variable] of a.parameters) {
      expect(maxDiff(variable.dataSync(), b.parameters.get(name)!.dataSync()), name).toBe(0);
    }
  });

  it('is causal: changing a later token leaves every earlier logit unchanged', async () => {
    const m = model();
    const [B, T, V] = [2, 12, CONFIG.vocab];
    const tokens = randomIds(B * T, V, 5);
    const changed = tokens.slice();
    const at = 8;
    for (let b = 0; b < B; b++) changed[b * T + at] = (tokens[b * T + at]! + 1) % V;
    const [before, after] = [await m.logits(tokens, B, T), await m.logits(changed, B, T)];
    for (let b = 0; b < B; b++) {
      const rows = (x: Float32Array, from: number, to: number) =>
        x.subarray((b * T + from) * V, (b * T + to) * V);
      // Masked scores add −1e9 and their softmax weight underflows to exactly 0.
      expect(maxDiff(rows(after, 0, at), rows(before, 0, at))).toBe(0);
      expect(maxDiff(rows(after, at, T), rows(before, at, T))).toBeGreaterThan(1e-4);
    }
  });

  it('AdamW: an empty mask only decays the 2-D weights, by lr·wd', async () => {
    // Loss 0 → gradients 0 → m = v = 0 → the Adam term is 0/(0 + eps) = 0; only the decay
    // p ← p − lr·wd·p acts, and only on weights with decay (not biases or LayerNorm).
    const m = model();
    const [B, T] = [1, 4];
    const before = new Map([...m.parameters].map(([n, v]) => [n, v.dataSync().slice()]));
    const ids = randomIds(B * T, CONFIG.vocab, 6);
    expect(Math.abs(await lossOf(m, ids, ids, new Float32Array(B * T), B, T))).toBe(0);
    // Compared relative to |p|: decay changes p by 1e-5·|p|, f32 rounding by ≤ 1.2e-7·|p|.
    const factor = 1 - TFJS_ADAMW.lr * TFJS_ADAMW.weightDecay;
    const layout = transformerLayout(CONFIG);
    for (const [name, variable] of m.parameters) {
      const old = before.get(name)!;
      const expected = layout.entry(name).decay ? factor : 1;
      const now = variable.dataSync();
      let worst = 0;
      for (let i = 0; i < old.length; i++) {
        if (old[i] !== 0) worst = Math.max(worst, Math.abs(now[i]! / old[i]! - expected));
      }
      expect(worst, name).toBeLessThan(1e-6);
    }
  });

  it('AdamW: the first step moves each parameter by at most lr (bias-corrected moments)', async () => {
    // t = 1: m̂ = g, v̂ = g², so the Adam term is lr·g/(|g| + eps): |Δ| ≤ lr, ≈ lr where
    // |g| ≫ eps. Without bias correction it would be lr·0.1·g/(√0.001·|g|) ≈ 3.16·lr.
    const m = model();
    const [B, T] = [2, 8];
    const gamma = 'h0.ln1.gamma';
    const bias = 'h1.mlp.fc.b';
    const old = [gamma, bias].map((n) => m.parameters.get(n)!.dataSync().slice());
    const ids = randomIds(B * T, CONFIG.vocab, 8);
    await lossOf(m, ids, ids.slice().reverse(), new Float32Array(B * T).fill(1), B, T);
    [gamma, bias].forEach((name, i) => {
      const moved = m.parameters.get(name)!.dataSync();
      const steps = Array.from(moved, (v, j) => Math.abs(v - old[i]![j]!)).sort((a, b) => a - b);
      expect(steps.at(-1)!, name).toBeLessThan(TFJS_ADAMW.lr * 1.001);
      expect(steps[steps.length >> 1]!, name).toBeGreaterThan(TFJS_ADAMW.lr * 0.9);
    });
  });

  it('loadFlat sets the weights of a layout array and restarts the optimizer', async () => {
    const [a, b] = [model(CONFIG, 1), model(CONFIG, 2)];
    const [B, T] = [1, 6];
    const tokens = randomIds(B * T, CONFIG.vocab, 9);
    const mask = new Float32Array(B * T).fill(1);
    expect(maxDiff(await a.logits(tokens, B, T), await b.logits(tokens, B, T))).toBeGreaterThan(0);
    await lossOf(b, tokens, tokens, mask, B, T); // b now has an optimizer state to reset
    b.loadFlat(transformerLayout(CONFIG).initialize<Float32Array>(1));
    expect(maxDiff(await a.logits(tokens, B, T), await b.logits(tokens, B, T))).toBe(0);
    const [la, lb] = [
      await lossOf(a, tokens, tokens, mask, B, T),
      await lossOf(b, tokens, tokens, mask, B, T),
    ];
    expect(la).toBe(lb);
    expect(maxDiff(await a.logits(tokens, B, T), await b.logits(tokens, B, T))).toBe(0);
  });

  it('leaves the value head out and leaks no tensors per step', async () => {
    const m = model({ ...CONFIG, valueHead: true });
    expect([...m.parameters.keys()].some((n) => n.startsWith('value_head'))).toBe(false);
    const [B, T] = [1, 5];
    const ids = randomIds(B * T, CONFIG.vocab, 10);
    const mask = new Float32Array(B * T).fill(1);
    await lossOf(m, ids, ids, mask, B, T); // first step caches the (T, T) causal mask
    const count = tf.memory().numTensors;
    await lossOf(m, ids, ids, mask, B, T);
    expect(tf.memory().numTensors).toBe(count);
  });

  it.each<[string, () => unknown]>([
    ['seq above context', () => model().logits(new Int32Array(17), 1, 17)],
    ['token id ≥ V', () => model().logits(Int32Array.of(0, 32), 1, 2)],
    [
      'negative target',
      () => model().step(Int32Array.of(0, 1), Int32Array.of(0, -1), new Float32Array(2), 1, 2),
    ],
    [
      'mask not 0/1',
      () => model().step(Int32Array.of(0, 1), Int32Array.of(0, 1), Float32Array.of(1, 0.5), 1, 2),
    ],
    ['wrong token count', () => model().logits(new Int32Array(5), 2, 3)],
    ['width not a multiple of heads', () => model({ ...CONFIG, heads: 3 })],
  ])('rejects %s with OpInputError', async (_, call) => {
    await expect(async () => call()).rejects.toThrow(OpInputError);
  });
});
