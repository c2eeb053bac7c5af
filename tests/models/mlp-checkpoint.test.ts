/** MLP actor-critic checkpoints: exact resume, refusals naming the problem. */
import { describe, expect, it } from 'vitest';
import { CheckpointError } from '../../src/models/checkpoint';
import { loadActorCritic, saveActorCritic } from '../../src/models/mlp-checkpoint';
import { CpuActorCritic, initAgent, ppoAgentLayout } from '../../src/models/mlp-policy';
import { randomLogits } from '../support/random';

const optimizer = { lr: 1e-2, weightDecay: 0.01, maxGradNorm: 0.5 };

async function step(model: CpuActorCritic, seed: number): Promise<void> {
  const batch = 8;
  await model.forward(randomLogits(batch * 4, 1, seed), batch);
  await model.backward(
    randomLogits(batch * 2, 1, seed + 1),
    randomLogits(batch, 1, seed + 2),
    optimizer,
  );
}

async function trained(steps: number): Promise<CpuActorCritic> {
  const agent = ppoAgentLayout(4, 2);
  const model = new CpuActorCritic(agent, initAgent(agent, 3));
  for (let i = 0; i < steps; i++) await step(model, 10 * i);
  return model;
}

describe('actor-critic checkpoints', () => {
  it('resumes exactly: 2 steps + save + load + 1 step equals 3 steps straight', async () => {
    const straight = await trained(3);
    const loaded = loadActorCritic(await saveActorCritic(await trained(2), { seed: 3 }));
    expect(loaded.optimizer!.stats[3]).toBe(2);
    const resumed = new CpuActorCritic(loaded.agent, loaded.params);
    resumed.writeOptimizer(loaded.optimizer!);
    await step(resumed, 20);
    expect(await resumed.readParams()).toEqual(await straight.readParams());
  });

  it('refuses a corrupted, truncated or foreign file', async () => {
    const bytes = await saveActorCritic(await trained(1), { seed: 1 });
    const flipped = bytes.slice();
    flipped[flipped.length - 5]! ^= 0x01;
    expect(() => loadActorCritic(flipped)).toThrow(CheckpointError);
    expect(() => loadActorCritic(bytes.slice(0, 40))).toThrow(CheckpointError);
    expect(() => loadActorCritic(new TextEncoder().encode('not a checkpoint at all'))).toThrow(
      CheckpointError,
    );
  });
});
