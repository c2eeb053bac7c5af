import { describe, expect, it } from 'vitest';
import type { ModelSpec } from '../../../src/models/model-spec';
import {
  llamaCachedStep,
  llamaGenerate,
  llamaKvCache,
} from '../../../src/models/hf/llama-cpu-generate';
import { llamaForward, llamaRotaryTable, llamaScore } from '../../../src/models/hf/llama-cpu';
import {
  llamaModelFromWeights,
  llamaTensorEntries,
  type LlamaCpuModel,
} from '../../../src/models/hf/llama-cpu-weights';
import { OpInputError } from '../../../src/ops/errors';
import { seededRandom } from '../../../src/util/random';

/** A tiny spec of each family: 4 query / 2 kv heads, Qwen3 with head_dim apart from width/heads. */
function tinySpec(family: 'llama' | 'qwen2' | 'qwen3'): ModelSpec {
  return {
    family,
    vocab: 37,
    context: 32,
    width: 16,
    layers: 2,
    heads: 4,
    kvHeads: 2,
    headDim: family === 'qwen3' ? 6 : 4,
    mlpWidth: 24,
    mlp: 'swiglu',
    norm: 'rmsnorm',
    normEps: 1e-6,
    positions: 'rotary',
    rotaryBase: family === 'llama' ? 10_000 : 1_000_000,
    qkvBias: family === 'qwen2',
    outBias: false,
    mlpBias: false,
    qkNorm: family === 'qwen3',
    tiedEmbeddings: family !== 'llama',
    valueHead: false,
  };
}

/** Random weights under Hugging Face's names: matrices ±0.5, norm gains 1 ± 0.2. */
function randomWeights(spec: ModelSpec, seed: number): Map<string, Float32Array> {
  const next = seededRandom(seed);
  const map = new Map<string, Float32Array>();
  for (const { name, shape } of llamaTensorEntries(spec)) {
    const size = shape.reduce((a, b) => a * b, 1);
    const isNorm = name.endsWith('norm.weight');
    map.set(
      name,
      Float32Array.from({ length: size }, () => (isNorm ? 1 + (next() - 0.5) * 0.4 : next() - 0.5)),
    );
  }
  return map;
}

function argmax(row: ArrayLike<number>): number {
  let best = 0;
  for (let i = 1; i < row.length; i++) if (row[i]! > row[best]!) best = i;
  return best;
}

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

describe.each(['llama', 'qwen2', 'qwen3'] as const)('Llama-family CPU model: %s', (family) => {
  const spec = tinySpec(family);
  const model: LlamaCpuModel = llamaModelFromWeights(spec, randomWeights(spec, 7));
  const V = spec.vocab;
  const ids = Int32Array.from([3, 9, 1, 30, 12, 5, 7, 22, 0, 36, 4, 4]); // 2 × 6

  it('is causal: logits before a changed token do not move', () => {
    const base = llamaForward(model, ids, 2, 6).logits;
    const changed = ids.slice();
    changed[4] = 17; // sequence 0, t = 4
    const other = llamaForward(model, changed, 2, 6).logits;
    expect(maxAbsDiff(base.subarray(0, 4 * V), other.subarray(0, 4 * V))).toBe(0);
    expect(maxAbsDiff(base.subarray(4 * V, 5 * V), other.subarray(4 * V, 5 * V))).toBeGreaterThan(
      1e-3,
    );
    // Sequence 1 is another row of the batch: unchanged.
    expect(maxAbsDiff(base.subarray(6 * V), other.subarray(6 * V))).toBe(0);
  });

  it('a batch of two equals each sequence alone', () => {
    const both = llamaForward(model, ids, 2, 6).logits;
    const second = llamaForward(model, ids.subarray(6), 1, 6).logits;
    expect(maxAbsDiff(both.subarray(6 * V), second)).toBeLessThan(1e-6);
  });

  it('keeps the activations a backward needs, with their shapes', () => {
    const { activations } = llamaForward(model, ids, 2, 6);
    const N = 12;
    const layer = activations.layers[1]!;
    expect(activations.layers).toHaveLength(2);
    expect(layer.q).toHaveLength(N * spec.heads * spec.headDim);
    expect(layer.kRot).toHaveLength(N * spec.kvHeads * spec.headDim);
    expect(layer.probs).toHaveLength(2 * spec.heads * 6 * 6);
    expect(layer.h).toHaveLength(N * spec.mlpWidth);
    expect(layer.qNormRstd === undefined).toBe(!spec.qkNorm);
    expect(activations.xnFinal).toHaveLength(N * spec.width);
  });

  it('scores each id after its prefix: logprobs are the log-softmax of the forward logits', () => {
    const { logprobs, forward } = llamaScore(model, ids, 2, 6);
    expect(logprobs).toHaveLength(2 * 5);
    for (let b = 0; b < 2; b++) {
      for (let t = 0; t < 5; t++) {
        const row = forward.logits.subarray((b * 6 + t) * V, (b * 6 + t + 1) * V);
        const lse = Math.log(Array.from(row).reduce((s, l) => s + Math.exp(l), 0));
        expect(logprobs[b * 5 + t]).toBeCloseTo(row[ids[b * 6 + t + 1]!]! - lse, 5);
      }
    }
  });

  it('the KV-cache step gives the full forward logits: ragged prefill, then one token at a time', () => {
    const seqA = Int32Array.from([3, 9, 1, 30, 12, 5, 7]);
    const seqB = Int32Array.from([8, 2, 33, 6]);
    const cache = llamaKvCache(model, 2, 8);
    const table = llamaRotaryTable(model, 8);
    // Prefill A's first 4 and B's first 2 together, then A's 5th with B's 3rd, then chunks.
    const steps = [
      [
        { sequence: 0, ids: seqA.subarray(0, 4) },
        { sequence: 1, ids: seqB.subarray(0, 2) },
      ],
      [
        { sequence: 0, ids: seqA.subarray(4, 5) },
        { sequence: 1, ids: seqB.subarray(2, 3) },
      ],
      [
        { sequence: 1, ids: seqB.subarray(3, 4) },
        { sequence: 0, ids: seqA.subarray(5, 7) },
      ],
    ];
    const fullA = llamaForward(model, seqA, 1, 7).logits;
    const fullB = llamaForward(model, seqB, 1, 4).logits;
    for (const segments of steps) {
      const logits = llamaCachedStep(model, cache, table, segments);
      segments.forEach(({ sequence }, s) => {
        const full = sequence === 0 ? fullA : fullB;
        const t = cache.lengths[sequence]! - 1;
        const mine = logits.subarray(s * V, (s + 1) * V);
        expect(maxAbsDiff(mine, full.subarray(t * V, (t + 1) * V))).toBeLessThan(1e-5);
      });
    }
    expect(Array.from(cache.lengths)).toEqual([7, 4]);
  });

  it('greedy generation picks the argmax of the full forward at every new position', () => {
    const prompts = [Int32Array.from([3, 9, 1]), Int32Array.from([8, 2, 33, 6, 0])];
    const out = llamaGenerate(model, prompts, { maxNewTokens: 6, temperature: 0 });
    prompts.forEach((prompt, i) => {
      const gen = out.tokens[i]!;
      expect(gen).toHaveLength(6);
      expect(out.finish[i]).toBe('length');
      expect(Array.from(out.logprobs[i]!)).toEqual([0, 0, 0, 0, 0, 0]);
      const all = Int32Array.from([...prompt, ...gen]);
      const logits = llamaForward(model, all, 1, all.length).logits;
      for (let j = 0; j < gen.length; j++) {
        const t = prompt.length - 1 + j;
        expect(gen[j]).toBe(argmax(logits.subarray(t * V, (t + 1) * V)));
      }
    });
  });

  it('sampling is seeded; its log-probs at temperature 1 are the scored log-probs', () => {
    const prompts = [Int32Array.from([3, 9]), Int32Array.from([8, 2, 33])];
    const options = { maxNewTokens: 8, temperature: 1, seed: 5 };
    const a = llamaGenerate(model, prompts, options);
    const b = llamaGenerate(model, prompts, options);
    expect(a).toEqual(b);
    const c = llamaGenerate(model, prompts, { ...options, seed: 6 });
    expect(c.tokens.map((t) => Array.from(t))).not.toEqual(a.tokens.map((t) => Array.from(t)));
    // The first prompt alone draws the same numbers (row 0) as in the batch.
    const alone = llamaGenerate(model, prompts.slice(0, 1), options);
    expect(Array.from(alone.tokens[0]!)).toEqual(Array.from(a.tokens[0]!));
    prompts.forEach((prompt, i) => {
      const all = Int32Array.from([...prompt, ...a.tokens[i]!]);
      const { logprobs } = llamaScore(model, all, 1, all.length);
      const scored = logprobs.subarray(prompt.length - 1);
      expect(maxAbsDiff(scored, a.logprobs[i]!)).toBeLessThan(1e-5);
    });
  });

  it('a stop id ends its sequence (kept in the output) while the other goes on', () => {
    const prompts = [Int32Array.from([3, 9, 1]), Int32Array.from([8, 2, 33, 6, 0])];
    const greedy = llamaGenerate(model, prompts, { maxNewTokens: 6, temperature: 0 });
    const stop = greedy.tokens[0]![2]!; // sequence 0's third new token
    const stopped = llamaGenerate(model, prompts, {
      maxNewTokens: 6,
      temperature: 0,
      stopIds: [stop],
    });
    const firstStop = Array.from(greedy.tokens[0]!).indexOf(stop);
    expect(Array.from(stopped.tokens[0]!)).toEqual(
      Array.from(greedy.tokens[0]!.subarray(0, firstStop + 1)),
    );
    expect(stopped.finish[0]).toBe('stop');
    const otherStop = Array.from(greedy.tokens[1]!).indexOf(stop);
    const expectedOther =
      otherStop < 0 ? greedy.tokens[1]! : greedy.tokens[1]!.subarray(0, otherStop + 1);
    expect(Array.from(stopped.tokens[1]!)).toEqual(Array.from(expectedOther));
  });
});

describe('Llama-family CPU model input checks', () => {
  const spec = tinySpec('qwen2');
  const weights = randomWeights(spec, 1);
  const model = llamaModelFromWeights(spec, weights);

  it('names a missing tensor and a tensor of the wrong size', () => {
    const missing = new Map(weights);
    missing.delete('model.layers.1.self_attn.k_proj.bias');
    expect(() => llamaModelFromWeights(spec, missing)).toThrow(
      /llamaCpu: weights is missing the tensor 'model.layers.1.self_attn.k_proj.bias'/,
    );
    const wrong = new Map(weights);
    wrong.set('model.norm.weight', new Float32Array(15));
    expect(() => llamaModelFromWeights(spec, wrong)).toThrow(
      /weights\['model.norm.weight'\] must have 16 = 16 elements, got 15/,
    );
  });

  it('refuses a spec it cannot run, naming the field', () => {
    expect(() => llamaTensorEntries({ ...spec, family: 'gpt' })).toThrow(
      /family must be one of 'llama', 'qwen2', 'qwen3', got 'gpt'/,
    );
    expect(() => llamaTensorEntries({ ...spec, mlp: 'gelu' })).toThrow(
      /mlp must be 'swiglu' in a qwen2 model, got "gelu"/,
    );
  });

  it('refuses cache steps that name a sequence twice or one the cache does not have', () => {
    const cache = llamaKvCache(model, 2, 4);
    const table = llamaRotaryTable(model, 4);
    const one = Int32Array.of(1);
    expect(() => llamaCachedStep(model, cache, table, [{ sequence: 2, ids: one }])).toThrow(
      /segments\[\].sequence must be an integer in \[0, 1\], got 2/,
    );
    expect(() =>
      llamaCachedStep(model, cache, table, [
        { sequence: 1, ids: one },
        { sequence: 1, ids: one },
      ]),
    ).toThrow(/segments name sequence 1 twice in one step/);
    llamaCachedStep(model, cache, table, [{ sequence: 0, ids: Int32Array.of(1, 2, 3) }]);
    expect(() =>
      llamaCachedStep(model, cache, table, [{ sequence: 0, ids: Int32Array.of(1, 2) }]),
    ).toThrow(/would fill sequence 0 past its cache capacity 4/);
    expect(Array.from(cache.lengths)).toEqual([3, 0]);
  });

  it.each([
    [
      'ids length',
      () => llamaForward(model, new Int32Array(5), 2, 3),
      /ids must have batch × seq = 2 × 3 = 6 elements, got 5/,
    ],
    [
      'an id past the vocabulary',
      () => llamaForward(model, Int32Array.of(1, 37), 1, 2),
      /must be ids in \[0, 37\)/,
    ],
    [
      'seq past the context',
      () => llamaForward(model, new Int32Array(33), 1, 33),
      /seq must be an integer in \[1, 32\], got 33/,
    ],
    [
      'scoring one token',
      () => llamaScore(model, Int32Array.of(1), 1, 1),
      /llamaScore: seq must be at least 2 to score, got 1/,
    ],
    [
      'maxNewTokens',
      () => llamaGenerate(model, [Int32Array.of(1)], { maxNewTokens: 0 }),
      /llamaGenerate: maxNewTokens must be an integer in \[1, 31\], got 0/,
    ],
    [
      'a prompt too long for the context',
      () => llamaGenerate(model, [Int32Array.of(1), new Int32Array(30)], { maxNewTokens: 4 }),
      /prompts\[1\].length must be an integer in \[1, 28\], got 30/,
    ],
    [
      'a prompt id',
      () => llamaGenerate(model, [Int32Array.of(1, 40)], { maxNewTokens: 2 }),
      /prompts\[0\]\[1\] must be an integer in \[0, 36\], got 40/,
    ],
    [
      'a stop id',
      () => llamaGenerate(model, [Int32Array.of(1)], { maxNewTokens: 2, stopIds: [-1] }),
      /stopIds\[0\] must be an integer in \[0, 36\], got -1/,
    ],
    [
      'topP',
      () => llamaGenerate(model, [Int32Array.of(1)], { maxNewTokens: 2, topP: 0 }),
      /topP must be in \(0, 1\], got 0/,
    ],
  ])('rejects %s with an OpInputError naming it', (_name, call, pattern) => {
    expect(call).toThrow(OpInputError);
    expect(call).toThrow(pattern);
  });
});
