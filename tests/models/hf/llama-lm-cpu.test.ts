/**
 * A brought Llama model as the trainers' LanguageModel (src/models/hf/llama-lm-cpu.ts), checked
 * against the independent float64 reference's LoRA fixture (tests/fixtures/hf/llama-tiny-lora/,
 * scripts/reference/make_lora_fixture.py): one LoRA-GRPO step taken the way every trainer takes
 * it — policyStep (src/rl/policy-step.ts: scoreTokens, the CPU policy loss, backwardFromLogp with
 * AdamW on the 'lora' group) — gives the reference's loss, updated adapters and log-probs after;
 * the base with the adapters off scores as the reference's base; generation packs rows as the
 * lab's generation contract says; bad input is refused without touching the adapters.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { llamaGenerate } from '../../../src/models/hf/llama-cpu-generate';
import { llamaModelFromWeights } from '../../../src/models/hf/llama-cpu-weights';
import { hfBaseGroup } from '../../../src/models/hf/hf-weights';
import { LlamaCpuLanguageModel } from '../../../src/models/hf/llama-lm-cpu';
import {
  createLlamaLora,
  llamaLoraFromParams,
  type LlamaLora,
} from '../../../src/models/hf/llama-lora';
import { readPeftAdapter } from '../../../src/models/hf/peft-adapter';
import { bytesSource } from '../../../src/models/hf/random-access-source';
import type { ModelSpec } from '../../../src/models/model-spec';
import { policyStep } from '../../../src/rl/policy-step';
import { FIXTURE_ROOT, loadFixture } from './load-fixture';
import { maxAbsDiff } from '../../support/expect-close';
import { type LoraGolden, shifted } from '../../support/lora-golden';

const DIR = new URL('llama-tiny-lora/', FIXTURE_ROOT);
const read = (file: string) => readFileSync(new URL(file, DIR));

describe('LlamaCpuLanguageModel', () => {
  let spec: ModelSpec;
  let base: Float32Array;
  let golden: LoraGolden;
  let fixtureLora: LlamaLora;

  /** A fresh model with a copy of the fixture's adapters (each test may train its own). */
  const adapted = () =>
    new LlamaCpuLanguageModel(
      spec,
      base,
      llamaLoraFromParams(spec, fixtureLora.settings, fixtureLora.params.slice()),
    );

  beforeAll(async () => {
    const fixture = await loadFixture('llama-tiny');
    spec = fixture.spec;
    const { layout } = hfBaseGroup(spec, 'f32');
    base = new Float32Array(layout.total);
    for (const e of layout.entries) layout.view(base, e.name).set(fixture.weights.get(e.name)!);
    golden = JSON.parse(read('golden.json').toString('utf8')) as LoraGolden;
    fixtureLora = (
      await readPeftAdapter(
        read('adapter_config.json').toString('utf8'),
        bytesSource(new Uint8Array(read('adapter_model.safetensors'))),
        spec,
      )
    ).lora;
  });

  it("has a frozen 'base' group and a trainable 'lora' group; without adapters, 'base' only", () => {
    const lm = adapted();
    expect(lm.groups.map((g) => [g.name, g.trainable])).toEqual([
      ['base', false],
      ['lora', true],
    ]);
    expect(lm.withoutAdapters().groups.map((g) => g.name)).toEqual(['base']);
  });

  it('scores as the reference with the adapters on, and off in withoutAdapters()', async () => {
    const lm = adapted();
    const reference = lm.withoutAdapters();
    for (const { ids, logprobs, base_logprobs: baseLogprobs } of golden.score) {
      const { tokens, targets } = shifted([ids]);
      const on = await lm.scoreTokens(tokens, targets, 1, ids.length - 1, 1);
      const off = await reference.scoreTokens(tokens, targets, 1, ids.length - 1, 1);
      expect(maxAbsDiff(on.logp, logprobs)).toBeLessThan(1e-5);
      expect(maxAbsDiff(off.logp, baseLogprobs)).toBeLessThan(1e-5);
      expect(maxAbsDiff(on.logp, off.logp)).toBeGreaterThan(1e-3); // the adapter matters
    }
  });

  it("one LoRA-GRPO step through policyStep: the reference's loss, adapters and log-probs after", async () => {
    const { ids, mask, advantages, adamw } = golden.grpo;
    const B = ids.length;
    const T = ids[0]!.length - 1;
    const { tokens, targets } = shifted(ids);
    const lm = adapted();
    const baseBefore = await lm.readParams('base');
    const result = await policyStep(lm, {
      tokens,
      targets,
      rows: B,
      seq: T,
      temperature: 1,
      mask: Float32Array.from(mask.flat()),
      advantages: Float32Array.from(advantages.flatMap((a) => Array<number>(T).fill(a))),
      policyLoss: { clipLow: 0.2, clipHigh: 0.2, aggregation: 'token-mean' },
      aggregation: { mode: 'token-mean' },
      entropyCoef: 0,
      optimizer: {
        lr: adamw.lr,
        beta1: adamw.betas[0],
        beta2: adamw.betas[1],
        eps: adamw.eps,
        weightDecay: adamw.weight_decay,
        maxGradNorm: 0,
      },
    });
    expect(result.skipped).toBeUndefined();
    expect(Math.abs(result.losses!.pgLoss - golden.grpo.loss)).toBeLessThan(1e-6);
    const [step] = await lm.takeMetrics();
    expect(step).toMatchObject({ step: 1, applied: true, clipScale: 1 });

    const lora = await lm.readParams('lora');
    const { layout } = fixtureLora.group;
    for (const [name, want] of Object.entries(golden.grpo.updated)) {
      expect(maxAbsDiff(layout.view(lora, name), want), name).toBeLessThan(1e-7);
    }
    const after = await lm.scoreTokens(tokens, targets, B, T, 1);
    expect(maxAbsDiff(after.logp, golden.grpo.logprobs_after.flat())).toBeLessThan(1e-5);
    // The base is frozen: not one weight moved.
    expect(await lm.readParams('base')).toEqual(baseBefore);
    // AdamW's state is the adapters' own.
    const moments = await lm.readOptimizer('lora');
    expect(moments.m.length).toBe(lora.length);
    expect(moments.m.some((x) => x !== 0)).toBe(true);
  });

  it('generates rows of prompt, new ids and padding, as the family sampler does', async () => {
    const lm = adapted();
    const prompts = [Int32Array.of(1, 5, 9), Int32Array.of(2, 7, 4, 3, 8)];
    const L = 9;
    const pad = 0;
    const out = await lm.generate({
      prompts,
      maxLength: L,
      maxNewTokens: 5,
      stopTokens: [],
      padToken: pad,
      sampling: { temperature: 0 },
      seed: 3,
    });
    // Budgets: min(5, 9 − 3) = 5 and min(5, 9 − 5) = 4.
    const model = llamaModelFromWeights(
      spec,
      new Map(
        hfBaseGroup(spec, 'f32').layout.entries.map((e) => [
          e.name,
          hfBaseGroup(spec, 'f32').layout.view(base, e.name),
        ]),
      ),
    );
    const direct = [5, 4].map(
      (budget, b) =>
        llamaGenerate(model, [prompts[b]!], {
          maxNewTokens: budget,
          temperature: 0,
          lora: fixtureLora,
        }).tokens[0]!,
    );
    expect(Array.from(out.promptLengths)).toEqual([3, 5]);
    expect(Array.from(out.tokens.subarray(0, L))).toEqual([...prompts[0]!, ...direct[0]!, pad]);
    expect(Array.from(out.tokens.subarray(L))).toEqual([...prompts[1]!, ...direct[1]!]);
    expect(Array.from(out.mask)).toEqual([
      ...[0, 0, 0, 1, 1, 1, 1, 1, 0],
      ...[0, 0, 0, 0, 0, 1, 1, 1, 1],
    ]);
  });

  it('refuses bad adapters and a backward without adapters, leaving the adapters as they were', async () => {
    const lm = adapted();
    const before = await lm.readParams('lora');
    expect(() => lm.writeParams(new Float32Array(3), 'lora')).toThrow(/'lora' group's \d+ floats/);
    const nan = before.slice();
    nan[7] = NaN;
    expect(() => lm.writeParams(nan, 'lora')).toThrow(/params.*finite/);
    expect(() => lm.writeParams(before, 'base')).toThrow(/'base'.*(frozen|trainable)/);
    expect(await lm.readParams('lora')).toEqual(before);
    const reference = lm.withoutAdapters();
    await reference.scoreTokens(Int32Array.of(1, 2), Int32Array.of(2, 3), 1, 2, 1);
    await expect(
      reference.backwardFromLogp(new Float32Array(2), undefined, {
        lr: 1e-3,
        beta1: 0.9,
        beta2: 0.999,
        eps: 1e-8,
        weightDecay: 0,
        maxGradNorm: 1,
      }),
    ).rejects.toThrow(/lora/);
  });

  it('LoRA on no module trains nothing: the model stays the base', async () => {
    const lora = createLlamaLora(spec, { rank: 4, alpha: 8, targets: [] }, 1);
    const lm = new LlamaCpuLanguageModel(spec, base, lora);
    expect(lora.params.length).toBe(0);
    const ids = golden.score[0]!.ids;
    const { tokens, targets } = shifted([ids]);
    const T = ids.length - 1;
    const before = await lm.scoreTokens(tokens, targets, 1, T, 1);
    expect(maxAbsDiff(before.logp, golden.score[0]!.base_logprobs)).toBeLessThan(1e-5);
    await lm.backwardFromLogp(new Float32Array(T).fill(-1), undefined, {
      lr: 1,
      beta1: 0.9,
      beta2: 0.999,
      eps: 1e-8,
      weightDecay: 0,
      maxGradNorm: 1,
    });
    const after = await lm.scoreTokens(tokens, targets, 1, T, 1);
    expect(after.logp).toEqual(before.logp);
  });
});
