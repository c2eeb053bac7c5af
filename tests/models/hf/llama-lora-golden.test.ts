/**
 * The PEFT adapter fixture (tests/fixtures/hf/llama-tiny-lora/, written by the independent float64
 * reference scripts/reference/make_lora_fixture.py from the LoRA paper and PEFT's layout) read
 * through the lab's PEFT reader and run on the CPU path:
 *
 * - log-probs with the adapter applied, and with it switched off (the base model's), within 1e-5;
 * - ONE LoRA-GRPO step: the token-mean policy loss at ratio 1 (src/ops/policy-loss.ts), its
 *   gradient through token log-probs and the model to the adapters (llamaLoraBackward), one AdamW
 *   step (src/ops/nn/adamw.ts) on the 'lora' group; loss within 1e-6, adapter gradients within
 *   1e-6 + 1e-4·|g| per element, updated adapters within 1e-7 absolute (an AdamW first step moves
 *   each element by about lr = 1e-3), log-probs after the step within 1e-5.
 * These are f32 tolerances (activations and weights f32, every sum in float64). Measured when
 * written: log-probs 1.6e-6, loss 0, gradients 2.8e-7 absolute, updated adapters 1.3e-8; the
 * maxima are printed after each run.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { llamaLoraBackward } from '../../../src/models/hf/llama-cpu-backward';
import { llamaScore } from '../../../src/models/hf/llama-cpu';
import {
  llamaModelFromWeights,
  type LlamaCpuModel,
} from '../../../src/models/hf/llama-cpu-weights';
import type { LlamaLora } from '../../../src/models/hf/llama-lora';
import {
  adapterConfigText,
  adapterWeightsBytes,
  readPeftAdapter,
  type PeftLoraConfig,
} from '../../../src/models/hf/peft-adapter';
import { bytesSource } from '../../../src/models/hf/random-access-source';
import { adamwStep } from '../../../src/ops/nn/adamw';
import { policyLoss } from '../../../src/ops/policy-loss';
import { tokenLogprobsBackward } from '../../../src/ops/token-logprobs';
import { FIXTURE_ROOT, loadFixture } from './load-fixture';

interface LoraGolden {
  r: number;
  lora_alpha: number;
  score: { ids: number[]; logprobs: number[]; base_logprobs: number[] }[];
  grpo: {
    ids: number[][];
    mask: number[][];
    advantages: number[];
    logprobs: number[][];
    loss: number;
    adamw: { lr: number; betas: [number, number]; eps: number; weight_decay: number };
    grads: Record<string, number[]>;
    updated: Record<string, number[]>;
    logprobs_after: number[][];
  };
}

const DIR = new URL('llama-tiny-lora/', FIXTURE_ROOT);
const read = (file: string) => readFileSync(new URL(file, DIR));
const LOGPROB_TOL = 1e-5;
const LOSS_TOL = 1e-6;
const GRAD_ABS = 1e-6;
const GRAD_REL = 1e-4;
const UPDATED_TOL = 1e-7;

function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i]! - b[i]!));
  return m;
}

const measured = { logprobs: 0, loss: 0, grads: 0, gradsRel: 0, updated: 0 };

describe('PEFT adapter fixture llama-tiny-lora on the CPU path', () => {
  let model: LlamaCpuModel;
  let golden: LoraGolden;
  let config: PeftLoraConfig;
  let lora: LlamaLora;

  beforeAll(async () => {
    const { spec, weights } = await loadFixture('llama-tiny');
    model = llamaModelFromWeights(spec, weights);
    golden = JSON.parse(read('golden.json').toString('utf8')) as LoraGolden;
    const adapter = await readPeftAdapter(
      read('adapter_config.json').toString('utf8'),
      bytesSource(new Uint8Array(read('adapter_model.safetensors'))),
      spec,
    );
    config = adapter.config;
    lora = adapter.lora;
  });

  it('adapter_config.json: r, alpha, all seven projections, the base model named', () => {
    expect(config.settings).toEqual({
      rank: golden.r,
      alpha: golden.lora_alpha,
      targets: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'],
    });
    expect(config.baseModel).toBe('llama-tiny');
    expect(lora.scale).toBe(2);
  });

  it('round trip: the writer gives back the fixture bytes and its config fields', () => {
    expect(Buffer.from(adapterWeightsBytes(lora)).equals(read('adapter_model.safetensors'))).toBe(
      true,
    );
    const written = JSON.parse(adapterConfigText(config.settings, config.baseModel));
    expect(written).toEqual(JSON.parse(read('adapter_config.json').toString('utf8')));
  });

  it('log-probs with the adapter, and with it switched off', () => {
    for (const { ids, logprobs, base_logprobs: base } of golden.score) {
      const n = ids.length;
      const adapted = llamaScore(model, Int32Array.from(ids), 1, n, { lora }).logprobs;
      const plain = llamaScore(model, Int32Array.from(ids), 1, n).logprobs;
      const error = Math.max(maxAbsDiff(adapted, logprobs), maxAbsDiff(plain, base));
      measured.logprobs = Math.max(measured.logprobs, error);
      expect(error).toBeLessThan(LOGPROB_TOL);
    }
  });

  it('one LoRA-GRPO step: loss, adapter gradients, AdamW-updated adapters', () => {
    const { ids, mask, advantages, adamw } = golden.grpo;
    const B = ids.length;
    const T = ids[0]!.length;
    const V = model.spec.vocab;
    const flatIds = Int32Array.from(ids.flat());
    const scored = llamaScore(model, flatIds, B, T, { lora });
    const logp = scored.logprobs; // (B, T − 1)
    expect(maxAbsDiff(logp, golden.grpo.logprobs.flat())).toBeLessThan(LOGPROB_TOL);

    // −mean over completion tokens of A·exp(logp − logp_old), logp_old = logp: TRL's token loss.
    const adv = Float32Array.from(advantages.flatMap((a) => Array<number>(T - 1).fill(a)));
    const m = Float32Array.from(mask.flat());
    const pl = policyLoss(logp, Float32Array.from(logp), adv, m, B, T - 1, {
      flavor: 'trl',
      lossType: 'ppo',
      aggregation: 'token-mean',
    });
    measured.loss = Math.abs(pl.loss - golden.grpo.loss);
    expect(measured.loss).toBeLessThan(LOSS_TOL);

    // ∂loss/∂logits: the scored rows (t < T − 1) through log-softmax; the last row gets 0.
    const logits = new Float32Array(B * (T - 1) * V);
    const targets = new Int32Array(B * (T - 1));
    for (let b = 0; b < B; b++) {
      for (let t = 0; t < T - 1; t++) {
        const row = b * T + t;
        logits.set(scored.forward.logits.subarray(row * V, (row + 1) * V), (b * (T - 1) + t) * V);
        targets[b * (T - 1) + t] = flatIds[row + 1]!;
      }
    }
    const dScored = tokenLogprobsBackward(logits, targets, pl.gradLogp, undefined, B * (T - 1), V);
    const dLogits = new Float32Array(B * T * V);
    for (let b = 0; b < B; b++) {
      for (let t = 0; t < T - 1; t++) {
        const n = b * (T - 1) + t;
        dLogits.set(dScored.subarray(n * V, (n + 1) * V), (b * T + t) * V);
      }
    }
    const { grads, byName } = llamaLoraBackward(model, scored.forward, dLogits);
    expect([...byName.keys()].sort()).toEqual(Object.keys(golden.grpo.grads).sort());
    for (const [name, want] of Object.entries(golden.grpo.grads)) {
      const got = byName.get(name)!;
      want.forEach((g, i) => {
        const error = Math.abs(got[i]! - g);
        measured.grads = Math.max(measured.grads, error);
        measured.gradsRel = Math.max(measured.gradsRel, error / Math.max(Math.abs(g), 1e-3));
        if (!(error <= GRAD_ABS + GRAD_REL * Math.abs(g))) {
          expect.fail(`${name}[${i}]: ${got[i]} vs reference ${g}`);
        }
      });
    }

    const moments = () => new Float32Array(lora.params.length);
    adamwStep(lora.params, grads, moments(), moments(), 1, {
      lr: adamw.lr,
      beta1: adamw.betas[0],
      beta2: adamw.betas[1],
      eps: adamw.eps,
      weightDecay: adamw.weight_decay,
    });
    const { layout } = lora.group;
    for (const [name, want] of Object.entries(golden.grpo.updated)) {
      const error = maxAbsDiff(layout.view(lora.params, name), want);
      measured.updated = Math.max(measured.updated, error);
      expect(error, name).toBeLessThan(UPDATED_TOL);
    }
    const after = llamaScore(model, flatIds, B, T, { lora }).logprobs;
    const afterError = maxAbsDiff(after, golden.grpo.logprobs_after.flat());
    expect(afterError).toBeLessThan(LOGPROB_TOL);
    // The step moved the log-probs (a test that cannot fail otherwise would prove nothing).
    expect(maxAbsDiff(after, logp)).toBeGreaterThan(10 * LOGPROB_TOL);
  });

  afterAll(() => {
    console.log(`llama-tiny-lora measured maxima: ${JSON.stringify(measured)}`);
  });
});
