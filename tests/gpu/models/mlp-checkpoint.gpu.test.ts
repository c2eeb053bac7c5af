/** A GPU actor-critic's checkpoint carries its optimizer state: it resumes on the CPU backend. */
import { describe, expect, it } from 'vitest';
import { loadActorCritic, saveActorCritic } from '../../../src/models/mlp-checkpoint';
import {
  CpuActorCritic,
  GpuActorCritic,
  initAgent,
  ppoAgentLayout,
  type ActorCritic,
} from '../../../src/models/mlp-policy';
import { testGpu } from '../../support/gpu';
import { maxAbsDiff, randomLogits } from '../../support/random';

const gpu = await testGpu();
const optimizer = { lr: 1e-2, weightDecay: 0.01, maxGradNorm: 0.5 };

async function step(model: ActorCritic, seed: number): Promise<void> {
  await model.forward(randomLogits(8 * 4, 1, seed), 8);
  await model.backward(randomLogits(8 * 2, 1, seed + 1), randomLogits(8, 1, seed + 2), optimizer);
}

describe.skipIf(!gpu)('actor-critic checkpoint from the GPU', () => {
  it('saves moments and step; the CPU backend continues from them', async () => {
    const agent = ppoAgentLayout(4, 2);
    const onGpu = new GpuActorCritic(gpu!, agent, initAgent(agent, 5));
    const onCpu = new CpuActorCritic(agent, initAgent(agent, 5));
    try {
      for (let i = 0; i < 2; i++) {
        await step(onGpu, 10 * i);
        await step(onCpu, 10 * i);
      }
      const loaded = loadActorCritic(await saveActorCritic(onGpu, { seed: 5 }));
      const snapshot = await onCpu.readOptimizer();
      expect(loaded.optimizer!.stats[3]).toBe(2);
      expect(maxAbsDiff(loaded.optimizer!.m, snapshot.m)).toBeLessThan(1e-5);
      expect(maxAbsDiff(loaded.params, await onCpu.readParams())).toBeLessThan(2e-5);
    } finally {
      onGpu.dispose();
    }
  });
});
