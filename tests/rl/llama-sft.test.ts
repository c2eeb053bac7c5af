/**
 * LlamaSft: its loss is the mean −log p of the answer tokens that llamaScore (an independent
 * path: one sequence at a time, no padding) gives; its gradient matches central differences of
 * that loss; padding and prompt tokens are not trained on; steps lower the loss and are
 * deterministic.
 */
import { describe, expect, it } from 'vitest';
import { llamaScore } from '../../src/models/hf/llama-cpu';
import type { ModelSpec } from '../../src/models/model-spec';
import { LlamaSft, type SftExample } from '../../src/rl/llama-sft';

const SPEC: ModelSpec = {
  family: 'llama',
  vocab: 13,
  context: 12,
  width: 16,
  layers: 2,
  heads: 4,
  kvHeads: 2,
  headDim: 4,
  mlpWidth: 24,
  mlp: 'swiglu',
  norm: 'rmsnorm',
  normEps: 1e-5,
  positions: 'rotary',
  rotaryBase: 10_000,
  qkvBias: false,
  outBias: false,
  mlpBias: false,
  qkNorm: false,
  tiedEmbeddings: true,
  valueHead: false,
};
const OPTIMIZER = {
  lr: 1e-2,
  beta1: 0.9,
  beta2: 0.99,
  eps: 1e-8,
  weightDecay: 0.01,
  maxGradNorm: 1,
};
const PAD = 12;

const BATCH: SftExample[] = [
  { prompt: Int32Array.of(1, 2, 3), answer: Int32Array.of(4, 5) },
  { prompt: Int32Array.of(6, 7, 8, 9, 1), answer: Int32Array.of(2, 3, 4) },
  { prompt: Int32Array.of(10), answer: Int32Array.of(11) },
];

/** Initial weights scaled up from HF's 0.02 so that the loss has real gradients everywhere. */
function params(): Float32Array {
  const p = LlamaSft.initialParams(SPEC, 5);
  const sft = new LlamaSft(SPEC, p, OPTIMIZER, PAD);
  for (const e of sft.layout.entries) {
    if (e.init.kind === 'normal') {
      const view = sft.layout.view(p, e.name);
      for (let i = 0; i < view.length; i++) view[i] = view[i]! * 20;
    }
  }
  return p;
}

/** The loss by llamaScore, sequence by sequence. */
function scoredLoss(sft: LlamaSft, batch: readonly SftExample[]): number {
  let sum = 0;
  let count = 0;
  for (const { prompt, answer } of batch) {
    const ids = Int32Array.from([...prompt, ...answer]);
    const { logprobs } = llamaScore(sft.model, ids, 1, ids.length);
    // logprobs[t − 1] scores ids[t]; the answer starts at t = prompt.length.
    for (let t = prompt.length; t < ids.length; t++) sum -= logprobs[t - 1]!;
    count += answer.length;
  }
  return sum / count;
}

describe('LlamaSft', () => {
  it('computes the mean −log p of the answer tokens only, padding or not', () => {
    const sft = new LlamaSft(SPEC, params(), OPTIMIZER, PAD);
    const { loss, tokens } = sft.lossAndGrads(BATCH);
    expect(tokens).toBe(6);
    expect(loss).toBeCloseTo(scoredLoss(sft, BATCH), 5);
    expect(loss).toBeGreaterThan(0.5); // not a trivially small number
  });

  it('has the gradient of that loss (central differences)', () => {
    const p = params();
    const sft = new LlamaSft(SPEC, p, OPTIMIZER, PAD);
    const grads = Float64Array.from(sft.lossAndGrads(BATCH).grads);
    // The 12 largest gradient entries across all tensors, and 4 more spread over the layout.
    const order = Array.from(grads.keys()).sort(
      (a, b) => Math.abs(grads[b]!) - Math.abs(grads[a]!),
    );
    const probes = [
      ...order.slice(0, 12),
      ...[0.1, 0.4, 0.6, 0.9].map((f) => order[Math.floor(f * 800)]!),
    ];
    // f32 weights: h large enough that rounding (~1e-7 in the loss) stays below 1e-4 of a slope.
    const h = 3e-3;
    for (const i of probes) {
      const keep = p[i]!;
      p[i] = keep + h;
      const up = scoredLoss(sft, BATCH);
      p[i] = keep - h;
      const down = scoredLoss(sft, BATCH);
      p[i] = keep;
      const numeric = (up - down) / (2 * h);
      expect(Math.abs(grads[i]! - numeric), `param ${i}`).toBeLessThan(
        1e-3 * Math.abs(numeric) + 2e-4,
      );
    }
    expect(Math.abs(grads[order[0]!]!)).toBeGreaterThan(0.05);
  });

  it('scores a short sequence padded beside a long one as it scores it alone', () => {
    const sft = new LlamaSft(SPEC, params(), OPTIMIZER, PAD);
    const alone = sft.lossAndGrads([BATCH[2]!]).loss;
    const padded = sft.lossAndGrads([BATCH[2]!, BATCH[1]!]);
    // The short sequence's answer is scored the same beside a longer one (padded to 8).
    const longOnly = sft.lossAndGrads([BATCH[1]!]).loss;
    expect(padded.loss).toBeCloseTo((alone * 1 + longOnly * 3) / 4, 5);
  });

  it('lowers the loss with steps, and two runs agree bit for bit', () => {
    const a = new LlamaSft(SPEC, params(), OPTIMIZER, PAD);
    const b = new LlamaSft(SPEC, params(), OPTIMIZER, PAD);
    const first = a.step(BATCH).loss;
    b.step(BATCH);
    for (let s = 0; s < 30; s++) {
      a.step(BATCH);
      b.step(BATCH);
    }
    expect(a.lossAndGrads(BATCH).loss).toBeLessThan(first * 0.5);
    expect(a.params).toEqual(b.params);
    expect(a.stepCount).toBe(31);
  });

  it('refuses a batch past the context, and empty parts, by name', () => {
    const sft = new LlamaSft(SPEC, params(), OPTIMIZER, PAD);
    const long = { prompt: new Int32Array(10).fill(1), answer: Int32Array.of(1, 2, 3) };
    expect(() => sft.step([long])).toThrow(/13 tokens, past the model's context of 12/);
    expect(() => sft.step([])).toThrow(/batch/);
    expect(() => sft.step([{ prompt: new Int32Array(0), answer: Int32Array.of(1) }])).toThrow(
      /batch\[0\]\.prompt/,
    );
    expect(() => new LlamaSft(SPEC, new Float32Array(3), OPTIMIZER, PAD)).toThrow(/params/);
  });
});
