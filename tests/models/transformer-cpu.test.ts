/**
 * The CPU transformer: whole-model gradient checks in float64 (every parameter tensor, tied and
 * untied heads, with a value head, learned and rotary positions), causality, the KV-cache decode
 * step against the full forward pass, and what rotary positions promise (no wpe; only distances
 * count).
 */
import { describe, expect, it } from 'vitest';
import type { TransformerConfig } from '../../src/models/transformer-config';
import {
  runTransformer,
  transformerBackward,
  transformerForward,
} from '../../src/models/transformer-cpu';
import { attentionForward } from '../../src/ops/nn/attention';
import { CpuKvCache, transformerDecodeStep } from '../../src/models/transformer-decode-cpu';
import { transformerLayout } from '../../src/models/transformer-params';
import { OpInputError } from '../../src/ops/errors';
import { maxAbsDiff, seededRandom } from '../support/random';
import { dot, gradCheck, probeWeights } from '../support/gradcheck';

const base: TransformerConfig = {
  vocab: 11,
  context: 8,
  width: 16,
  layers: 2,
  heads: 2,
  tiedEmbeddings: false,
  valueHead: false,
};

function randomTokens(n: number, vocab: number, seed: number): Int32Array {
  const next = seededRandom(seed);
  return Int32Array.from({ length: n }, () => Math.floor(next() * vocab));
}

/** Initial parameters plus noise, so gains ≠ 1 and biases ≠ 0 and every path carries gradient. */
function noisyParams<T extends Float32Array | Float64Array>(
  config: TransformerConfig,
  precision: 'f32' | 'f64',
  seed: number,
): T {
  const layout = transformerLayout(config);
  const params = layout.initialize<T>(seed, precision);
  const next = seededRandom(seed + 1);
  for (const e of layout.entries) {
    for (let i = 0; i < e.size; i++) params[e.offset + i]! += (next() * 2 - 1) * 0.3;
  }
  return params;
}

const rotary: TransformerConfig = { ...base, positions: 'rotary' };

describe.each([
  ['untied', base],
  ['tied + value head', { ...base, tiedEmbeddings: true, valueHead: true, layers: 1, heads: 4 }],
  ['rotary positions', rotary],
  [
    'rotary, base 100, tied + value head',
    { ...rotary, rotaryBase: 100, tiedEmbeddings: true, valueHead: true, layers: 1 },
  ],
])('transformer gradient check (%s)', (_, config) => {
  const layout = transformerLayout(config);
  const batch = 2;
  const seq = 5;
  const tokens = randomTokens(batch * seq, config.vocab, 9);
  tokens[3] = tokens[7]!; // a repeated token: its embedding gradient sums two rows
  const params = noisyParams<Float64Array>(config, 'f64', 4);
  const w = probeWeights(batch * seq * config.vocab, 21);
  const u = probeWeights(batch * seq, 22);
  const probe = () => {
    const out = transformerForward(config, layout, params, tokens, batch, seq);
    return dot(w, out.logits) + (out.values ? dot(u, out.values) : 0);
  };
  const { acts } = transformerForward(config, layout, params, tokens, batch, seq);
  const grads = transformerBackward(
    config,
    layout,
    params,
    acts,
    w,
    config.valueHead ? u : undefined,
  );

  it.each(layout.entries.map((e) => [e.name]))('∂L/∂%s matches finite differences', (name) => {
    const e = layout.entry(name);
    // Check the tensor's own entries only: view into the flat arrays.
    const view = layout.view(params, name);
    const result = gradCheck(view, layout.view(grads, name), probe, {
      maxEntries: 12,
      seed: e.offset + 1,
      // The key bias has an exactly zero gradient (softmax is shift-invariant); finite
      // differences give ~1e-11 there, so compare near-zero entries in absolute terms.
      floor: 1e-4,
    });
    expect(result.maxRelError, JSON.stringify(result.worst)).toBeLessThan(1e-5);
  });

  it('leaves the padding between tensors at zero gradient', () => {
    const used = new Uint8Array(layout.total);
    for (const e of layout.entries) used.fill(1, e.offset, e.offset + e.size);
    for (let i = 0; i < layout.total; i++) if (!used[i]) expect(grads[i]).toBe(0);
  });
});

describe.each([
  ['learned positions', base],
  ['rotary positions', rotary],
])('transformer forward (%s)', (_, config) => {
  const layout = transformerLayout(config);
  const params = noisyParams<Float32Array>(config, 'f32', 8);

  it('is causal: changing a later token never changes earlier logits', () => {
    const seq = 6;
    const tokens = randomTokens(seq, config.vocab, 3);
    const before = transformerForward(config, layout, params, tokens, 1, seq).logits;
    const changed = tokens.slice();
    changed[4] = (changed[4]! + 1) % config.vocab;
    const after = transformerForward(config, layout, params, changed, 1, seq).logits;
    const V = config.vocab;
    expect(maxAbsDiff(before.subarray(0, 4 * V), after.subarray(0, 4 * V))).toBe(0);
    expect(maxAbsDiff(before.subarray(4 * V), after.subarray(4 * V))).toBeGreaterThan(1e-4);
  });

  it('rows of a batch are independent', () => {
    const seq = 4;
    const a = randomTokens(seq, config.vocab, 1);
    const b = randomTokens(seq, config.vocab, 2);
    const both = transformerForward(config, layout, params, Int32Array.from([...a, ...b]), 2, seq);
    const alone = transformerForward(config, layout, params, b, 1, seq);
    expect(maxAbsDiff(both.logits.subarray(seq * config.vocab), alone.logits)).toBeLessThan(1e-6);
  });

  it('decode steps through the KV cache reproduce the full forward pass', () => {
    const batch = 3;
    const seq = config.context;
    const tokens = randomTokens(batch * seq, config.vocab, 5);
    const full = transformerForward(config, layout, params, tokens, batch, seq).logits;
    const cache = new CpuKvCache(config, batch, seq);
    const V = config.vocab;
    for (let pos = 0; pos < seq; pos++) {
      const input = Int32Array.from({ length: batch }, (_, b) => tokens[b * seq + pos]!);
      const step = transformerDecodeStep(config, layout, params, cache, input, pos);
      for (let b = 0; b < batch; b++) {
        const row = full.subarray((b * seq + pos) * V, (b * seq + pos + 1) * V);
        expect(maxAbsDiff(step.subarray(b * V, (b + 1) * V), row)).toBeLessThan(1e-5);
      }
    }
  });

  it('rejects bad shapes and token ids with the field named', () => {
    const tokens = randomTokens(2 * 9, config.vocab, 1);
    expect(() => transformerForward(config, layout, params, tokens, 2, 9)).toThrow(OpInputError);
    expect(() => transformerForward(config, layout, params, tokens, 2, 9)).toThrow(/seq/);
    const bad = randomTokens(4, config.vocab, 1);
    bad[2] = config.vocab;
    expect(() => transformerForward(config, layout, params, bad, 1, 4)).toThrow(/index 2/);
  });
});

describe('rotary positions in the transformer', () => {
  const layout = transformerLayout(rotary);

  it('has no wpe table, and everything else as with learned positions', () => {
    const learned = transformerLayout(base);
    expect(layout.entries.map((e) => e.name)).toEqual(
      learned.entries.map((e) => e.name).filter((name) => name !== 'wpe'),
    );
    expect(learned.total - layout.total).toBeGreaterThanOrEqual(base.context * base.width);
  });

  /** Logits of `tokens` (one row) placed at positions offset … offset + T − 1, full attention. */
  function shiftedLogits(
    config: TransformerConfig,
    params: Float64Array,
    tokens: Int32Array,
    offset: number,
  ) {
    const seq = tokens.length;
    const shape = { batch: 1, seq, heads: config.heads, channels: config.width };
    const run = runTransformer(
      config,
      transformerLayout(config),
      params,
      tokens,
      1,
      seq,
      offset,
      (qkv) => attentionForward(qkv, shape),
    );
    return run.logits;
  }

  it('depends on distances only: the same tokens placed 3 positions later give the same logits', () => {
    const tokens = randomTokens(4, rotary.vocab, 13);
    const params = noisyParams<Float64Array>(rotary, 'f64', 12);
    const diff = maxAbsDiff(
      shiftedLogits(rotary, params, tokens, 3),
      shiftedLogits(rotary, params, tokens, 0),
    );
    expect(diff).toBeLessThan(1e-12);
    // The control: with learned positions the same shift changes the logits.
    const learnedParams = noisyParams<Float64Array>(base, 'f64', 12);
    const learnedDiff = maxAbsDiff(
      shiftedLogits(base, learnedParams, tokens, 3),
      shiftedLogits(base, learnedParams, tokens, 0),
    );
    expect(learnedDiff).toBeGreaterThan(1e-3);
  });

  it('rejects an odd head size and a rotary base out of range, naming the field', () => {
    expect(() => transformerLayout({ ...rotary, width: 18, heads: 2 })).toThrow(/heads/);
    expect(() => transformerLayout({ ...rotary, rotaryBase: 10 })).toThrow(/rotaryBase.*\[100/);
    expect(() => transformerLayout({ ...base, rotaryBase: 1000 })).toThrow(/rotaryBase/);
    expect(() =>
      transformerLayout({ ...base, positions: 'absolute' as unknown as 'rotary' }),
    ).toThrow(/positions/);
  });
});
