/**
 * The learned reward model on the GPU against its CPU twin: the same transformer with a scalar
 * head, the same comparisons and seed, trained by the same Bradley–Terry steps. Runs in Node (Dawn)
 * only (vite.config.ts says why); fails without an adapter (tests/support/gpu.ts).
 *
 * Tolerances: the first loss is one forward pass of an f32 transformer (~1e-5 apart); after 20
 * AdamW steps the two models have drifted apart by summation order only, so their scores are
 * compared relative to the spread of the scores (std 1 after normalization).
 */
import { describe, expect, it } from 'vitest';
import { CpuLanguageModel } from '../../../src/models/lm-cpu';
import { GpuLanguageModel } from '../../../src/models/lm-gpu';
import { transformerLayout } from '../../../src/models/transformer-params';
import { collectComparisons, trainRewardModel } from '../../../src/rl/reward-model';
import { testGpu } from '../../support/gpu';
import { SCRIPTED_COPY } from '../../support/scripted-policy';

const gpu = await testGpu();
const { tokenizer, task, MAX_NEW, scripted, tinyConfig } = SCRIPTED_COPY;

describe('reward model on the GPU', () => {
  const device = gpu!;

  it('trains as on the CPU: the same losses, held-out accuracy and normalized scores', async () => {
    const config = tinyConfig(true);
    const settings = {
      prompts: 10,
      samplesPerPrompt: 4,
      labelNoise: 0,
      steps: 20,
      pairsPerStep: 8,
      lr: 3e-3,
    };
    const data = await collectComparisons(
      scripted({ wrong: 'eeeee' }),
      tokenizer,
      task,
      settings,
      MAX_NEW,
      7,
    );
    expect(data.pairs).toHaveLength(20);
    const params = transformerLayout(config).initialize<Float32Array>(3);
    const onCpu = await trainRewardModel(new CpuLanguageModel(config, params), data, settings, 7);
    const gpuModel = new GpuLanguageModel(device, config, params);
    try {
      const onGpu = await trainRewardModel(gpuModel, data, settings, 7);
      expect(onGpu.report.pairs).toBe(20);
      expect(onGpu.report.firstLoss).toBeCloseTo(onCpu.report.firstLoss, 4);
      expect(Math.abs(onGpu.report.lastLoss - onCpu.report.lastLoss)).toBeLessThan(5e-3);
      expect(onGpu.report.lastLoss).toBeLessThan(onGpu.report.firstLoss);
      expect(onGpu.report.heldOutAccuracy).toBe(onCpu.report.heldOutAccuracy);
      const rows = data.pairs.flatMap((p) => [data.rows[p.chosen]!, data.rows[p.rejected]!]);
      const [a, b] = await Promise.all([
        onGpu.rewardModel.score(rows),
        onCpu.rewardModel.score(rows),
      ]);
      for (let i = 0; i < rows.length; i++) {
        expect(Math.abs(a[i]! - b[i]!), `row ${i}`).toBeLessThan(1e-2);
      }
    } finally {
      gpuModel.dispose();
    }
  }, 120_000);
});
