/**
 * The CPU actor-critic (CleanRL's PPO Agent): the joint layout and its map to each network's own
 * layout, the seeded init, forward = the two MLPs, and one optimizer step over BOTH networks
 * together — the gradient norm that is clipped is the norm over actor and critic (CleanRL's
 * clip_grad_norm_(agent.parameters())), checked by hand against each network's own gradient.
 */
import { describe, expect, it } from 'vitest';
import { mlpBackward, mlpForward } from '../../src/models/mlp-cpu';
import { initMlp, ppoActorConfig, ppoCriticConfig } from '../../src/models/mlp-params';
import {
  AgentLayout,
  createCpuActorCritic,
  CpuActorCritic,
  initAgent,
  ppoAgentLayout,
} from '../../src/models/mlp-policy';
import type { OptimizerConfig } from '../../src/models/optimizer';
import { OpInputError } from '../../src/ops/errors';
import { gradNorm } from '../../src/ops/nn/grad-norm';
import { randomLogits } from '../support/random';

const adam = (change: Partial<OptimizerConfig> = {}): OptimizerConfig => ({
  lr: 1e-3,
  eps: 1e-5,
  weightDecay: 0,
  maxGradNorm: 0,
  ...change,
});

/** A copy of each network's parameters out of the joint array. */
function split(layout: AgentLayout, joint: Float32Array) {
  const actor = new Float32Array(layout.actor.total);
  const critic = new Float32Array(layout.critic.total);
  layout.scatter(joint, actor, critic);
  return { actor, critic };
}

describe('agent layout', () => {
  const layout = ppoAgentLayout(4, 2);

  it('holds every tensor of both networks, weights first, named actor.* and critic.*', () => {
    const names = layout.joint.entries.map((e) => e.name);
    expect(names).toEqual([
      'actor.l0.w',
      'actor.l1.w',
      'actor.l2.w',
      'critic.l0.w',
      'critic.l1.w',
      'critic.l2.w',
      'actor.l0.b',
      'actor.l1.b',
      'actor.l2.b',
      'critic.l0.b',
      'critic.l1.b',
      'critic.l2.b',
    ]);
    // CleanRL's Agent on CartPole: actor 4·64+64 + 64·64+64 + 64·2+2 = 4610,
    // critic 4·64+64 + 64·64+64 + 64·1+1 = 4545; 9155 parameters in all.
    expect(layout.joint.parameterCount).toBe(9155);
    expect(layout.pieces).toHaveLength(12);
  });

  it('gather then scatter gives back each network exactly; padding stays zero', () => {
    const actor = randomLogits(layout.actor.total, 1, 1);
    const critic = randomLogits(layout.critic.total, 1, 2);
    const joint = new Float32Array(layout.joint.total);
    layout.gather(actor, critic, joint);
    expect(Array.from(layout.joint.view(joint, 'critic.l1.w'))).toEqual(
      Array.from(layout.critic.view(critic, 'l1.w')),
    );
    const back = split(layout, joint);
    for (const e of layout.actor.entries) {
      expect(layout.actor.view(back.actor, e.name)).toEqual(layout.actor.view(actor, e.name));
    }
    for (const e of layout.critic.entries) {
      expect(layout.critic.view(back.critic, e.name)).toEqual(layout.critic.view(critic, e.name));
    }
    const used = new Uint8Array(layout.joint.total);
    for (const e of layout.joint.entries) used.fill(1, e.offset, e.offset + e.size);
    expect(joint.every((x, i) => used[i] || x === 0)).toBe(true);
  });

  it('initAgent: the actor is initMlp(actor, seed), the critic another stream; seeded', () => {
    const joint = initAgent(layout, 7);
    const { actor, critic } = split(layout, joint);
    expect(actor).toEqual(initMlp(ppoActorConfig(4, 2), 7));
    expect(critic).not.toEqual(initMlp(ppoCriticConfig(4), 7));
    // CleanRL's layer_init: biases 0; the critic head has gain 1, the actor head 0.01.
    expect(layout.joint.view(joint, 'critic.l0.b').every((b) => b === 0)).toBe(true);
    expect(initAgent(layout, 7)).toEqual(joint);
    expect(initAgent(layout, 8)).not.toEqual(joint);
  });
});

describe('CpuActorCritic', () => {
  it('forward = the actor and the critic MLPs on the same observations', async () => {
    const agent = createCpuActorCritic(4, 2, 3);
    const layout = agent.agent;
    const { actor, critic } = split(layout, await agent.readParams());
    const obs = randomLogits(5 * 4, 1, 4);
    const out = await agent.forward(obs, 5);
    expect(out.logits).toEqual(mlpForward(layout.actorConfig, layout.actor, actor, obs, 5).out);
    expect(out.values).toEqual(mlpForward(layout.criticConfig, layout.critic, critic, obs, 5).out);
    expect(out.logits).toHaveLength(10);
    expect(out.values).toHaveLength(5);
    // CleanRL's actor head (gain 0.01) starts near uniform: |logits| ≪ 1.
    expect(Math.max(...Array.from(out.logits, Math.abs))).toBeLessThan(0.1);
  });

  it('clips by the norm over BOTH networks, then one Adam step moves every weight by ≈ lr', async () => {
    const agent = createCpuActorCritic(4, 2, 5);
    const layout = agent.agent;
    const before = await agent.readParams();
    const { actor, critic } = split(layout, before);
    const batch = 8;
    const obs = randomLogits(batch * 4, 1, 6);
    const dLogits = randomLogits(batch * 2, 1, 7);
    const dValues = randomLogits(batch, 1, 8);
    // Each network's own gradient, from the MLP's backward pass.
    const fa = mlpForward(layout.actorConfig, layout.actor, actor, obs, batch);
    const fc = mlpForward(layout.criticConfig, layout.critic, critic, obs, batch);
    const ga = mlpBackward(layout.actorConfig, layout.actor, actor, fa.acts, dLogits);
    const gc = mlpBackward(layout.criticConfig, layout.critic, critic, fc.acts, dValues);
    const na = gradNorm(ga);
    const nc = gradNorm(gc);

    await agent.forward(obs, batch);
    const lr = 1e-3;
    const stats = await agent.backward(dLogits, dValues, adam({ lr, maxGradNorm: 0.5 }));
    // The global norm √(‖g_actor‖² + ‖g_critic‖²), and clip coef 0.5 / (norm + 1e-6).
    const norm = Math.sqrt(na * na + nc * nc);
    expect(stats.gradNorm).toBeCloseTo(norm, 4);
    expect(norm).toBeGreaterThan(0.5);
    expect(stats.clipScale).toBeCloseTo(0.5 / (norm + 1e-6), 6);
    expect(stats.applied).toBe(true);
    expect(stats.step).toBe(1);

    // Adam's first step: m̂ = s·g, v̂ = (s·g)², Δp = −lr·s·g / (|s·g| + eps), i.e. ≈ −lr·sign(g)
    // wherever |s·g| ≫ eps = 1e-5; both networks move. (Tolerance 5e-7: f32 rounding of p.)
    const after = split(layout, await agent.readParams());
    let moved = 0;
    for (const [params, old, grads] of [
      [after.actor, actor, ga],
      [after.critic, critic, gc],
    ] as const) {
      for (let i = 0; i < grads.length; i++) {
        const g = grads[i]! * stats.clipScale;
        expect(params[i]! - old[i]!).toBeCloseTo((-lr * g) / (Math.abs(g) + 1e-5), 6);
        if (Math.abs(params[i]! - old[i]!) > 0.9 * lr) moved += 1;
      }
    }
    // Most of the 9155 parameters see a gradient ≫ eps and move by ≈ lr.
    expect(moved).toBeGreaterThan(4000);
  });

  it('a non-finite gradient skips the step: parameters unchanged, step count unchanged', async () => {
    const agent = createCpuActorCritic(4, 2, 9);
    const before = await agent.readParams();
    await agent.forward(randomLogits(8, 1, 1), 2);
    const dLogits = new Float32Array([0.1, NaN, 0.2, 0.3]);
    const stats = await agent.backward(dLogits, new Float32Array(2), adam());
    expect(stats.applied).toBe(false);
    expect(stats.step).toBe(0);
    expect(await agent.readParams()).toEqual(before);
  });

  it('writeParams replaces both networks', async () => {
    const a = createCpuActorCritic(4, 2, 1);
    const b = createCpuActorCritic(4, 2, 2);
    const obs = randomLogits(12, 1, 3);
    b.writeParams(await a.readParams());
    expect(await b.forward(obs, 3)).toEqual(await a.forward(obs, 3));
  });

  it.each<[string, (agent: CpuActorCritic) => Promise<unknown>, RegExp]>([
    [
      'backward before any forward',
      (agent) => agent.backward(new Float32Array(2), new Float32Array(1), adam()),
      /backward needs a forward\(\) first/,
    ],
    [
      'dLogits of the wrong length',
      async (agent) => {
        await agent.forward(new Float32Array(12), 3);
        return agent.backward(new Float32Array(5), new Float32Array(3), adam());
      },
      /dLogits must have batch × actions of the last forward = 6 elements, got 5/,
    ],
    [
      'dValues of the wrong length',
      async (agent) => {
        await agent.forward(new Float32Array(12), 3);
        return agent.backward(new Float32Array(6), new Float32Array(2), adam());
      },
      /dValues must have batch of the last forward = 3 elements, got 2/,
    ],
    [
      'obs of the wrong length',
      (agent) => agent.forward(new Float32Array(10), 3),
      /obs must have batch × inputs = 12 elements, got 10/,
    ],
    [
      'a bad learning rate',
      async (agent) => {
        await agent.forward(new Float32Array(4), 1);
        return agent.backward(new Float32Array(2), new Float32Array(1), adam({ lr: 0 }));
      },
      /lr must be/,
    ],
  ])('rejects %s (OpInputError)', async (_, act, message) => {
    const agent = createCpuActorCritic(4, 2, 1);
    await expect(act(agent)).rejects.toThrow(OpInputError);
    await expect(act(createCpuActorCritic(4, 2, 1))).rejects.toThrow(message);
  });

  it('rejects joint parameters of the wrong length', () => {
    const layout = ppoAgentLayout(4, 2);
    expect(() => new CpuActorCritic(layout, new Float32Array(10))).toThrow(
      new RegExp(`params must have layout.total = ${layout.joint.total} elements, got 10`),
    );
    expect(() => createCpuActorCritic(4, 2, 1).writeParams(new Float32Array(3))).toThrow(
      OpInputError,
    );
  });
});
