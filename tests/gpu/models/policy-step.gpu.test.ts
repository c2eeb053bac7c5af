/**
 * The RL step with its loss on the GPU (GpuLanguageModel.policyStep, src/models/policy-step-gpu.ts)
 * against the specification on the CPU (policyStepOnHost through CpuLanguageModel): every loss
 * term on, the updated weights and the optimizer's statistics, the behaviour policy taken from
 * the pass itself, the steps that must stop before their backward, and whole PPO updates. Runs in
 * Node (Dawn) only (vite.config.ts says why).
 *
 * Tolerances as in transformer.gpu.test.ts: f32 on both sides with different summation orders.
 */
import { describe, expect, it, vi } from 'vitest';
import { additionTask } from '../../../src/envs/token-tasks/addition';
import { reverseTask } from '../../../src/envs/token-tasks/reverse';
import type { LanguageModel } from '../../../src/models/language-model';
import { CpuLanguageModel } from '../../../src/models/lm-cpu';
import { GpuLanguageModel } from '../../../src/models/lm-gpu';
import { policyStep, type PolicyStepLosses } from '../../../src/rl/policy-step';
import { createPpoLmTrainer, DEFAULT_PPO_LM_CONFIG } from '../../../src/rl/ppo-lm';
import { testGpu } from '../../support/gpu';
import {
  fullStep,
  STEP_SEQ,
  stepConfig,
  stepParams,
  stepTokenizer,
} from '../../support/policy-step-fixture';
import { maxAbsDiff } from '../../support/random';

const gpu = await testGpu();
const T = STEP_SEQ;

function expectLossesClose(gpuLosses: PolicyStepLosses, cpuLosses: PolicyStepLosses): void {
  const scalar = ['pgLoss', 'klLoss', 'entropy', 'vfLoss', 'vfClipfrac', 'ptxLoss'] as const;
  for (const key of scalar) expect(gpuLosses[key], key).toBeCloseTo(cpuLosses[key]!, 4);
  for (const [key, value] of Object.entries(cpuLosses.pgStats)) {
    expect(gpuLosses.pgStats[key as keyof typeof cpuLosses.pgStats], key).toBeCloseTo(value, 4);
  }
}

describe.skipIf(!gpu)('the RL step on the GPU vs its specification on the CPU', () => {
  const device = gpu!;

  it('every term on (policy, KL, entropy, value, ptx): same losses, statistics and weights, 2 steps', async () => {
    const params = stepParams(21);
    const cpu = new CpuLanguageModel(stepConfig, params);
    const onGpu = new GpuLanguageModel(device, stepConfig, params);
    // The device path must not fall back to the host composition.
    const score = vi.spyOn(onGpu, 'scoreTokens');
    const backward = vi.spyOn(onGpu, 'backwardFromLogp');
    try {
      const { request } = await fullStep(cpu, 4, 3);
      for (let step = 0; step < 2; step++) {
        const a = await policyStep(cpu, request);
        const b = await policyStep(onGpu, request);
        expect(b.skipped).toBeUndefined();
        expectLossesClose(b.losses!, a.losses!);
        expect(a.losses!.pgStats.pg_clipfrac).toBeGreaterThan(0);
      }
      expect(score).not.toHaveBeenCalled();
      expect(backward).not.toHaveBeenCalled();
      const [sa, sb] = [await cpu.takeMetrics(), await onGpu.takeMetrics()];
      expect(sb.map((s) => s.applied)).toEqual([true, true]);
      for (let s = 0; s < 2; s++) {
        expect(sb[s]!.gradNorm).toBeCloseTo(sa[s]!.gradNorm, 4);
        expect(sb[s]!.clipScale).toBeCloseTo(sa[s]!.clipScale, 4);
      }
      const moved = maxAbsDiff(await cpu.readParams(), params);
      expect(moved).toBeGreaterThan(1e-3); // two Adam steps of lr 1e-3
      expect(maxAbsDiff(await onGpu.readParams(), await cpu.readParams())).toBeLessThan(1e-4);
    } finally {
      onGpu.dispose();
    }
  });

  it('without oldLogp: ratio 1, and the log-probs it returns are the CPU’s', async () => {
    const params = stepParams(22);
    const cpu = new CpuLanguageModel(stepConfig, params);
    const onGpu = new GpuLanguageModel(device, stepConfig, params);
    try {
      const { request } = await fullStep(cpu, 3, 2);
      const rest = { ...request };
      delete rest.oldLogp;
      const a = await policyStep(cpu, rest);
      const b = await policyStep(onGpu, rest);
      expect(b.losses!.pgStats.pg_clipfrac).toBe(0);
      expect(b.losses!.pgStats.ppo_kl).toBeCloseTo(0, 7);
      expect(b.logp!.length).toBe(3 * T);
      expect(maxAbsDiff(b.logp!, a.logp!)).toBeLessThan(1e-4);
      expect(maxAbsDiff(await onGpu.readParams(), await cpu.readParams())).toBeLessThan(1e-4);
    } finally {
      onGpu.dispose();
    }
  });

  it('stops before the backward on a non-finite log-prob or loss, leaving weights and optimizer alone', async () => {
    const params = stepParams(23);
    const cpu = new CpuLanguageModel(stepConfig, params);
    const { request } = await fullStep(cpu, 2, 1);
    const broken = params.slice();
    broken[0] = NaN; // the first embedding row: every logit turns NaN
    const nanModel = new GpuLanguageModel(device, stepConfig, broken);
    const onGpu = new GpuLanguageModel(device, stepConfig, params);
    try {
      const nan = await policyStep(nanModel, request);
      expect(nan.skipped).toBe('non-finite log-probs');
      expect(await nanModel.takeMetrics()).toEqual([]);
      const returns = new Float32Array(2 * T).fill(1e30); // (V − R)² overflows f32
      const overflow = await policyStep(onGpu, {
        ...request,
        value: { ...request.value!, returns },
      });
      expect(overflow.skipped).toBe('non-finite loss');
      expect(overflow.losses!.vfLoss).toBe(Infinity);
      expect(await onGpu.takeMetrics()).toEqual([]);
      expect(maxAbsDiff(await onGpu.readParams(), params)).toBe(0);
      expect((await onGpu.readOptimizer()).m.every((x) => x === 0)).toBe(true);
    } finally {
      nanModel.dispose();
      onGpu.dispose();
    }
  });

  it('a PPO update (value head, 2 minibatches × 2 epochs, ptx) matches the CPU backend', async () => {
    const task = reverseTask({ minLength: 2, maxLength: 3 });
    const retained = additionTask({ minDigits: 1, maxDigits: 1 });
    const config = { ...stepConfig, context: 16 };
    const params = stepParams(24, config);
    const ppo = {
      ...DEFAULT_PPO_LM_CONFIG,
      promptsPerUpdate: 4,
      minibatches: 2,
      epochs: 2,
      maxNewTokens: 4,
      entropyCoef: 0.01,
      ptxCoef: 0.5,
      ptxBatch: 3,
    };
    const make = (policy: LanguageModel) =>
      createPpoLmTrainer({ policy, tokenizer: stepTokenizer, task, seed: 8, retained }, ppo);
    const cpu = new CpuLanguageModel(config, params);
    const onGpu = new GpuLanguageModel(device, config, params);
    const backward = vi.spyOn(onGpu, 'backwardFromLogp');
    try {
      const a = await make(cpu).update();
      const b = await make(onGpu).update();
      expect(backward).not.toHaveBeenCalled();
      expect(b['reward/mean']).toBe(a['reward/mean']);
      expect(b['ppo/epochs_run']).toBe(2);
      const keys = [
        'actor/pg_loss',
        'actor/pg_clipfrac',
        'actor/entropy',
        'actor/ptx_loss',
        'critic/vf_loss',
        'critic/vf_clipfrac',
        'actor/grad_norm',
      ];
      for (const key of keys) {
        expect(Number.isFinite(a[key]), key).toBe(true);
        expect(b[key], key).toBeCloseTo(a[key]!, 4);
      }
      expect(maxAbsDiff(await onGpu.readParams(), await cpu.readParams())).toBeLessThan(1e-4);
    } finally {
      onGpu.dispose();
    }
  });
});
