/**
 * OrtReferenceModel: the frozen reference policy on onnxruntime-web (wasm EP, Node).
 *
 *   - a hand-worked model (every weight 0 except a few): exact log-probs, entropy and values;
 *   - parity with CpuLanguageModel.scoreTokens on the shipped reverse checkpoint, |Δ| ≤ 1e-4;
 *   - GRPO with klCoef > 0 and this reference: finite KL, equal (within tolerance) to the same run
 *     with a CpuLanguageModel reference;
 *   - the bad-input table (each error names the method or field; the model still works after).
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuLanguageModel } from '../../src/models/lm-cpu';
import type { TransformerConfig } from '../../src/models/transformer-config';
import { transformerLayout } from '../../src/models/transformer-params';
import { OpInputError } from '../../src/ops/errors';
import { OnnxError } from '../../src/onnx/onnx-error';
import { nodeOrtOptions } from '../../src/onnx/ort-node';
import { FrozenModelError, OrtReferenceModel } from '../../src/onnx/ort-reference-model';
import { createGrpoTrainer } from '../../src/rl/grpo';
import { DEFAULT_GRPO_CONFIG, type GrpoConfig } from '../../src/rl/grpo-config';
import { gaussian, seededRandom } from '../../src/util/random';
import { maxAbsDiff } from '../support/random';
import { randomTokens, tokenizerFor, warmUpOrt } from './helpers';
import { loadShipped, readShipped } from './shipped';

const wasm = { executionProviders: ['wasm' as const], ...nodeOrtOptions() };
const TOLERANCE = 1e-4;

beforeAll(() => warmUpOrt(wasm), 60_000);

describe('a hand-worked model', () => {
  // Every weight 0 except: lnf.beta = e0 (channel 0 is 1), wte[3, 0] = ln 2, value_head.b = 0.5.
  // With every LayerNorm gain 0 the blocks add nothing (their LN outputs are the 0 shifts, so
  // q, k, v, the MLP input and every projection are 0) and the final LN outputs lnf.beta = e0 at
  // every position. Tied head: logits[v] = e0 · wte[v] = wte[v, 0], so logit 3 is ln 2, the other
  // 9 are 0; the value head outputs its bias 0.5.
  //   T = 1:   Σ exp = 2 + 9 = 11.  logp(3) = ln(2/11) = −1.704748, logp(other) = −ln 11 = −2.397895,
  //            H = (2/11)·ln(11/2) + (9/11)·ln 11 = 0.309955 + 1.961914 = 2.271869.
  //   T = 0.5: logit 3 → 2 ln 2 = ln 4; Σ exp = 4 + 9 = 13.  logp(3) = ln(4/13) = −1.178655,
  //            logp(other) = −ln 13 = −2.564949, H = (4/13)·ln(13/4) + (9/13)·ln 13 = 2.138397.
  const config: TransformerConfig = {
    vocab: 10,
    context: 4,
    width: 16,
    layers: 1,
    heads: 2,
    tiedEmbeddings: true,
    valueHead: true,
  };
  const layout = transformerLayout(config);
  const params = new Float32Array(layout.total);
  layout.view(params, 'lnf.beta')[0] = 1;
  layout.view(params, 'wte')[3 * config.width] = Math.LN2;
  layout.view(params, 'value_head.b')[0] = 0.5;
  let reference: OrtReferenceModel;
  beforeAll(async () => {
    reference = await OrtReferenceModel.fromParams(config, params, tokenizerFor(10), wasm);
  }, 30_000);
  afterAll(() => reference.release());

  it('scores exactly what the hand computation gives, at T = 1 and T = 0.5', async () => {
    const tokens = Int32Array.of(1, 5, 9, 3, 0, 2);
    const targets = Int32Array.of(3, 0, 3, 7, 3, 9);
    const golden = [
      { temperature: 1, hit: -1.704748, miss: -2.397895, entropy: 2.271869 },
      { temperature: 0.5, hit: -1.178655, miss: -2.564949, entropy: 2.138397 },
    ];
    for (const g of golden) {
      const s = await reference.scoreTokens(tokens, targets, 2, 3, g.temperature);
      const expected = [...targets].map((t) => (t === 3 ? g.hit : g.miss));
      expect(maxAbsDiff(s.logp, expected)).toBeLessThan(1e-5);
      expect(maxAbsDiff(s.entropy, new Array(6).fill(g.entropy))).toBeLessThan(1e-5);
      expect(s.values).toEqual(new Float32Array(6).fill(0.5));
    }
    expect(reference.backend).toBe('cpu');
    expect(await reference.readParams()).toEqual(params);
  });

  it('property: logp ≤ 0 and 0 ≤ entropy ≤ ln V for any tokens, targets and temperature', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 1000 }),
        fc.double({ min: 0.1, max: 4, noNaN: true }),
        async (batch, seq, seed, temperature) => {
          const tokens = randomTokens(batch * seq, 10, seed);
          const targets = randomTokens(batch * seq, 10, seed + 1);
          const s = await reference.scoreTokens(tokens, targets, batch, seq, temperature);
          for (let i = 0; i < batch * seq; i++) {
            expect(s.logp[i]).toBeLessThanOrEqual(0);
            expect(s.entropy[i]).toBeGreaterThanOrEqual(0);
            expect(s.entropy[i]).toBeLessThanOrEqual(Math.log(10) + 1e-5);
          }
        },
      ),
      { numRuns: 15 },
    );
  });
});

describe('the shipped reverse checkpoint on ORT', () => {
  const shipped = loadShipped('reverse');
  const { config } = shipped;
  let reference: OrtReferenceModel;
  beforeAll(async () => {
    reference = await OrtReferenceModel.fromCheckpoint(
      readShipped(shipped.entry.checkpoint.file),
      wasm,
    );
  }, 30_000);
  afterAll(() => reference.release());

  it('scoreTokens equals CpuLanguageModel.scoreTokens within 1e-4 (logp, entropy, values)', async () => {
    const cpu = new CpuLanguageModel(config, shipped.params);
    const [batch, seq] = [8, config.context - 1];
    const tokens = randomTokens(batch * seq, config.vocab, 5);
    const targets = randomTokens(batch * seq, config.vocab, 6);
    for (const temperature of [1, 0.7]) {
      const ours = await cpu.scoreTokens(tokens, targets, batch, seq, temperature);
      const ort = await reference.scoreTokens(tokens, targets, batch, seq, temperature);
      expect(maxAbsDiff(ort.logp, ours.logp)).toBeLessThanOrEqual(TOLERANCE);
      expect(maxAbsDiff(ort.entropy, ours.entropy)).toBeLessThanOrEqual(TOLERANCE);
      expect(maxAbsDiff(ort.values!, ours.values!)).toBeLessThanOrEqual(TOLERANCE);
    }
    expect(
      maxAbsDiff(await reference.logits(tokens, batch, seq), await cpu.logits(tokens, batch, seq)),
    ).toBeLessThanOrEqual(TOLERANCE);
  });

  describe('as the KL reference of GRPO (2 updates, klCoef 0.1)', () => {
    // The policy starts a small seeded step away from the reference (N(0, 0.01²) on every
    // weight), as it is after any update. Starting exactly at the reference would compare
    // rounding noise instead: the CPU reference then gives KL exactly 0 and ORT ~1e-7, and GRPO
    // turns such noise into O(1) differences (a KL-in-reward group whose verifier rewards are
    // equal is normalized by its ~1e-8 std; Adam's first step has the size lr whatever the
    // gradient's scale).
    const next = seededRandom(12);
    const start = shipped.params.map((v) => v + 0.01 * gaussian(next));
    const cases: [string, Partial<GrpoConfig>][] = [
      ['k3 in the loss', { klEstimator: 'k3', klPenalty: 'loss' }],
      ['k1 in the reward', { klEstimator: 'k1', klPenalty: 'reward' }],
    ];
    for (const [label, kl] of cases) {
      it(
        label,
        async () => {
          const cfg: GrpoConfig = {
            ...DEFAULT_GRPO_CONFIG,
            groupSize: 8,
            promptsPerUpdate: 4,
            maxNewTokens: 8,
            iterations: 2, // the second iteration of update 1 already has policy ≠ reference
            klCoef: 0.1,
            ...kl,
          };
          const run = async (ref: 'ort' | 'cpu') => {
            const policy = new CpuLanguageModel(config, start);
            const trainer = createGrpoTrainer(
              {
                policy,
                reference: ref === 'ort' ? reference : new CpuLanguageModel(config, shipped.params),
                tokenizer: shipped.tokenizerObject,
                task: shipped.task,
                seed: 7,
              },
              cfg,
            );
            const metrics = [await trainer.update(), await trainer.update()];
            return { metrics, params: await policy.readParams() };
          };
          const ort = await run('ort');
          const cpu = await run('cpu');
          const key = kl.klPenalty === 'loss' ? 'actor/kl_loss' : 'actor/reward_kl_penalty';
          for (let u = 0; u < 2; u++) {
            const [a, b] = [ort.metrics[u]![key]!, cpu.metrics[u]![key]!];
            expect(Number.isFinite(a), `${key} update ${u + 1}`).toBe(true);
            expect(Math.abs(a - b), `${key} update ${u + 1}: ${a} vs ${b}`).toBeLessThanOrEqual(
              1e-5 + 1e-3 * Math.abs(b),
            );
            const pg = [ort.metrics[u]!['actor/pg_loss']!, cpu.metrics[u]!['actor/pg_loss']!];
            expect(Math.abs(pg[0]! - pg[1]!)).toBeLessThanOrEqual(1e-4);
          }
          // Away from the reference the KL is positive (k3 ≥ 0, 0 only at equality; the batch
          // mean of k1 is positive here too, the policy's own samples being likelier under it).
          expect(cpu.metrics[0]![key]).toBeGreaterThan(0);
          // The weights only loosely: Adam scales each step by its gradient's RMS, so a weight whose
          // gradient is near 0 moves lr in whatever direction rounding picks. Within 10% of the
          // largest move (4 steps of lr 1e-3).
          const moved = maxAbsDiff(cpu.params, start);
          expect(moved).toBeGreaterThan(1e-3);
          expect(maxAbsDiff(ort.params, cpu.params)).toBeLessThanOrEqual(0.1 * moved);
        },
        30_000,
      );
    }
  });

  it('refuses training, sampling and bad input, and keeps working (bad-input table)', async () => {
    const tokens = randomTokens(2 * 5, config.vocab, 9);
    const targets = randomTokens(2 * 5, config.vocab, 10);
    const before = await reference.scoreTokens(tokens, targets, 2, 5, 1);
    const frozen: [string, () => unknown][] = [
      ['trainCrossEntropy', () => reference.trainCrossEntropy({} as never, {} as never)],
      [
        'backwardFromLogp',
        () => reference.backwardFromLogp(new Float32Array(10), undefined, {} as never),
      ],
      ['generate', () => reference.generate({} as never)],
      ['readOptimizer', () => reference.readOptimizer()],
      ['writeParams', () => reference.writeParams(new Float32Array(1))],
      ['writeOptimizer', () => reference.writeOptimizer({} as never)],
    ];
    for (const [method, call] of frozen) {
      const error = await Promise.resolve()
        .then(call)
        .catch((e: unknown) => e);
      expect(error, method).toBeInstanceOf(FrozenModelError);
      expect((error as Error).message).toBe(
        `OrtReferenceModel.${method}: reference model is frozen (it only scores tokens for the ` +
          'KL term; train, sample from and checkpoint the policy instead)',
      );
    }
    const V = config.vocab;
    const bad: [() => Promise<unknown>, RegExp][] = [
      [() => reference.scoreTokens(tokens, targets, 2, 5, 0), /temperature/],
      [() => reference.scoreTokens(tokens, targets, 2, 5, NaN), /temperature/],
      [
        () => reference.scoreTokens(tokens, targets.subarray(1), 2, 5, 1),
        /targets must have batch × seq = 10 ids, got 9/,
      ],
      [
        () =>
          reference.scoreTokens(
            tokens,
            Int32Array.from(targets, () => V),
            2,
            5,
            1,
          ),
        new RegExp(`targets must be token ids in \\[0, ${V}\\)`),
      ],
      [
        () => reference.scoreTokens(Int32Array.of(0, V), Int32Array.of(0, 0), 1, 2, 1),
        new RegExp(`tokens index 1: id must be in \\[0, ${V - 1}\\], got ${V}`),
      ],
      [
        () => reference.scoreTokens(new Int32Array(24), new Int32Array(24), 1, 24, 1),
        new RegExp(`seq must be an integer in \\[1, ${config.context}\\], got 24`),
      ],
    ];
    for (const [call, says] of bad) {
      const error = await call().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpInputError);
      expect((error as Error).message).toMatch(says);
    }
    expect(await reference.takeMetrics()).toEqual([]);
    const after = await reference.scoreTokens(tokens, targets, 2, 5, 1);
    expect(after.logp).toEqual(before.logp);
  });
});

describe('construction and release', () => {
  it('refuses a checkpoint without a tokenizer and params of the wrong length', async () => {
    const config: TransformerConfig = {
      vocab: 10,
      context: 2,
      width: 16,
      layers: 1,
      heads: 1,
      tiedEmbeddings: true,
      valueHead: false,
    };
    const total = transformerLayout(config).total;
    await expect(
      OrtReferenceModel.fromParams(config, new Float32Array(total - 1), tokenizerFor(10), wasm),
    ).rejects.toThrow(OnnxError);
    const model = await OrtReferenceModel.fromParams(
      config,
      new Float32Array(total),
      tokenizerFor(10),
      wasm,
    );
    expect(() => new OrtReferenceModel(model.policy, new Float32Array(3))).toThrow(
      new RegExp(`params must hold the layout's ${total} floats, got 3`),
    );
    await model.release();
    await model.release(); // idempotent
    await expect(model.scoreTokens(Int32Array.of(1), Int32Array.of(1), 1, 1, 1)).rejects.toThrow(
      /OrtReferenceModel.scoreTokens called after release\(\)/,
    );
  });
});
