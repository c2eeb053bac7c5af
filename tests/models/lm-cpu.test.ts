/** The CPU language model: a training step, the skip rule, generation and its determinism. */
import { describe, expect, it } from 'vitest';
import { reverseTask } from '../../src/envs/token-tasks/reverse';
import type { GenerateRequest } from '../../src/models/generate';
import { CpuLanguageModel } from '../../src/models/lm-cpu';
import type { OptimizerConfig } from '../../src/models/optimizer';
import { CharTokenizer } from '../../src/models/tokenizer';
import type { TransformerConfig } from '../../src/models/transformer-config';
import { transformerLayout } from '../../src/models/transformer-params';
import { promptTokens } from '../../src/agents/prompt-tokens';
import { packSequences } from '../../src/models/sequence-batch';
import { seededRandom } from '../support/random';

const tokenizer = CharTokenizer.createDefault();
const config: TransformerConfig = {
  vocab: tokenizer.vocabSize,
  context: 16,
  width: 32,
  layers: 2,
  heads: 4,
  tiedEmbeddings: true,
  valueHead: false,
};
const optimizer: OptimizerConfig = { lr: 3e-3, weightDecay: 0.01, maxGradNorm: 1 };
const task = reverseTask({ minLength: 3, maxLength: 5 });

function freshModel(seed = 1) {
  return new CpuLanguageModel(config, transformerLayout(config).initialize(seed));
}

function fixedBatch(seed: number, size: number) {
  const random = seededRandom(seed);
  const pairs = Array.from({ length: size }, () => {
    const s = task.sample(random);
    return { prompt: s.prompt, completion: s.answer };
  });
  return packSequences(tokenizer, pairs, config.context);
}

function request(seed: number, overrides: Partial<GenerateRequest> = {}): GenerateRequest {
  const random = seededRandom(99);
  return {
    prompts: Array.from({ length: 6 }, () => promptTokens(tokenizer, task.sample(random))),
    maxLength: 14,
    maxNewTokens: 8,
    stopTokens: [tokenizer.eos],
    padToken: tokenizer.pad,
    sampling: { temperature: 1 },
    seed,
    ...overrides,
  };
}

describe('CpuLanguageModel', () => {
  it('starts near chance (loss ≈ ln V) and memorises a fixed batch', async () => {
    const model = freshModel();
    const batch = fixedBatch(3, 8);
    for (let i = 0; i < 25; i++) await model.trainCrossEntropy(batch, optimizer);
    const metrics = await model.takeMetrics();
    expect(metrics).toHaveLength(25);
    expect(Math.abs(metrics[0]!.loss - Math.log(config.vocab))).toBeLessThan(0.1);
    expect(metrics[24]!.loss).toBeLessThan(metrics[0]!.loss * 0.5);
    expect(metrics.map((m) => m.step)).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    expect(metrics.every((m) => m.applied && m.clipScale <= 1)).toBe(true);
    expect(await model.takeMetrics()).toEqual([]);
  }, 30_000);

  it('skips a step with non-finite logits and leaves the weights untouched', async () => {
    const model = freshModel();
    const params = await model.readParams();
    params[5] = NaN; // in wte: the logits of every row go NaN through the tied head
    model.writeParams(params);
    await model.trainCrossEntropy(fixedBatch(1, 2), optimizer);
    const [m] = await model.takeMetrics();
    expect(m!.applied).toBe(false);
    expect(m!.step).toBe(0);
    const after = await model.readParams();
    expect(Object.is(after[5], NaN)).toBe(true);
    expect(after.subarray(6)).toEqual(params.subarray(6));
  });

  it('generates deterministically for a seed; prompts kept, mask on generated tokens only', async () => {
    const model = freshModel(2);
    const a = await model.generate(request(7));
    const b = await model.generate(request(7));
    const c = await model.generate(request(8));
    expect(a.tokens).toEqual(b.tokens);
    expect(a.logprobs).toEqual(b.logprobs);
    expect(a.tokens).not.toEqual(c.tokens);
    const L = a.maxLength;
    const prompts = request(7).prompts;
    prompts.forEach((prompt, row) => {
      expect([...a.tokens.subarray(row * L, row * L + prompt.length)]).toEqual([...prompt]);
      for (let t = 0; t < L; t++) {
        const generated = a.mask[row * L + t] === 1;
        if (t < prompt.length) expect(generated).toBe(false);
        if (generated) expect(a.logprobs[row * L + t]).toBeLessThanOrEqual(0);
        else expect(a.logprobs[row * L + t]).toBe(0);
      }
      // At most maxNewTokens generated, and nothing after <eos>.
      const row0 = [...a.mask.subarray(row * L, (row + 1) * L)];
      expect(row0.reduce((s, x) => s + x, 0)).toBeLessThanOrEqual(8);
      const eosAt = [...a.tokens.subarray(row * L, (row + 1) * L)].indexOf(tokenizer.eos);
      if (eosAt >= 0) expect(row0.slice(eosAt + 1).every((x) => x === 0)).toBe(true);
    });
  });

  it('greedy generation picks the argmax of the full forward pass at every step', async () => {
    const model = freshModel(5);
    const g = await model.generate(request(1, { sampling: { temperature: 0 } }));
    const L = g.maxLength;
    const V = config.vocab;
    for (let row = 0; row < g.batch; row++) {
      const seq = g.tokens.slice(row * L, (row + 1) * L);
      const logits = await model.logits(seq.subarray(0, L), 1, L);
      for (let t = 1; t < L; t++) {
        if (g.mask[row * L + t] !== 1) continue;
        const prev = logits.subarray((t - 1) * V, t * V);
        const argmax = prev.indexOf(Math.max(...prev));
        expect(seq[t], `row ${row} pos ${t}`).toBe(argmax);
      }
    }
  });

  it('rejects a prompt token outside the vocabulary, naming it', async () => {
    const model = freshModel();
    const bad = request(1);
    const prompts = bad.prompts.map((p) => p.slice());
    prompts[2]![1] = config.vocab;
    await expect(model.generate({ ...bad, prompts })).rejects.toThrow(/prompts\[2\]\[1\]/);
  });
});
