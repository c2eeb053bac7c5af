/** REINFORCE on tabular softmax policies: hand-worked updates, learning, variance, determinism. */
import { describe, expect, it } from 'vitest';
import { ContextualBandit, KArmedBandit } from '../../src/envs/bandits';
import { CartPole } from '../../src/envs/cartpole';
import type { Env, Info, Space, StepResult } from '../../src/envs/types';
import { OpInputError } from '../../src/ops/errors';
import {
  createReinforce,
  DEFAULT_REINFORCE_CONFIG,
  discountedReturns,
  REINFORCE_CONFIG_SPEC,
  type ReinforceBaseline,
  type ReinforceConfig,
  type ReinforceTrainer,
} from '../../src/rl/reinforce';

const config = (change: Partial<ReinforceConfig> = {}): ReinforceConfig => ({
  ...DEFAULT_REINFORCE_CONFIG,
  ...change,
});

/**
 * A corridor 0 – 1 – 2 – 3: start at 0, action 1 moves right, action 0 moves left (a wall at 0);
 * reaching 3 pays 1 and terminates; never truncates (the trainer's maxEpisodeSteps cuts it).
 */
class Corridor implements Env<number, number> {
  readonly id = 'Corridor-4';
  readonly observationSpace: Space = { kind: 'discrete', n: 4 };
  readonly actionSpace: Space = { kind: 'discrete', n: 2 };
  private s = 0;
  reset(): { obs: number; info: Info } {
    this.s = 0;
    return { obs: 0, info: {} };
  }
  step(action: number): StepResult<number> {
    this.s = Math.max(0, this.s + (action === 1 ? 1 : -1));
    const done = this.s === 3;
    return { obs: this.s, reward: done ? 1 : 0, terminated: done, truncated: false, info: {} };
  }
}

/** The first trainer seed whose first batch of two pulls takes both arms (and that batch). */
async function firstMixedBatch(change: Partial<ReinforceConfig>) {
  for (let seed = 0; seed < 100; seed++) {
    const env = new KArmedBandit({ qStar: [0, 1], rewardStd: 0 });
    const trainer = createReinforce(env, config({ batchEpisodes: 2, lr: 1, ...change }), seed);
    const metrics = await trainer.update();
    const actions = trainer.lastBatch.map((ep) => ep.actions[0]);
    if (actions[0] !== actions[1]) return { trainer, metrics };
  }
  throw new Error('no seed below 100 pulled both arms'); // each seed does with probability ½
}

describe('discountedReturns', () => {
  it('accumulates returns-to-go backwards', () => {
    // r = [1, 0, 2], γ = 0.5: G₂ = 2; G₁ = 0 + 0.5·2 = 1; G₀ = 1 + 0.5·1 = 1.5.
    expect(Array.from(discountedReturns([1, 0, 2], 0.5))).toEqual([1.5, 1, 2]);
    // γ = 1: suffix sums 3, 2, 2; γ = 0: the rewards themselves.
    expect(Array.from(discountedReturns([1, 0, 2], 1))).toEqual([3, 2, 2]);
    expect(Array.from(discountedReturns([1, 0, 2], 0))).toEqual([1, 0, 2]);
    expect(discountedReturns([], 0.9)).toHaveLength(0);
    expect(() => discountedReturns([1], 1.5)).toThrow(/gamma must be in \[0, 1\], got 1.5/);
  });
});

describe('REINFORCE, one update worked by hand', () => {
  // Two arms, q* = [0, 1], no noise, N = 2 pulls that took arm 0 once and arm 1 once, lr = 1.
  // The policy starts uniform: π = [½, ½], log π = −ln 2, ∇log π(a) = onehot(a) − [½, ½].
  //   arm 0: r = 0, ∇log π = [½, −½];   arm 1: r = 1, ∇log π = [−½, ½].

  it("baseline 'none': A = G", async () => {
    // g₀ = 0·[½, −½] = [0, 0]; g₁ = 1·[−½, ½]; ḡ = [−¼, ¼] → θ = [−0.25, 0.25].
    // pg_loss = −½(0·(−ln 2) + 1·(−ln 2)) = ½ ln 2.
    // grad_variance = (‖g₀ − ḡ‖² + ‖g₁ − ḡ‖²)/(2 − 1) = (⅛ + ⅛)/1 = 0.25.
    // grad_norm = ‖[−¼, ¼]‖ = √(1/8) = 0.353553…; regret: arm 0 costs 1 − 0 = 1 → 1/2 per episode.
    const { trainer, metrics } = await firstMixedBatch({ baseline: 'none' });
    expect(Array.from(trainer.policy.logits)).toEqual([-0.25, 0.25]);
    expect(metrics['actor/pg_loss']).toBeCloseTo(Math.LN2 / 2, 15);
    expect(metrics['actor/grad_variance']).toBeCloseTo(0.25, 15);
    expect(metrics['actor/grad_norm']).toBeCloseTo(Math.sqrt(1 / 8), 15);
    expect(metrics['actor/entropy']).toBeCloseTo(Math.LN2, 15);
    expect(metrics['charts/episodic_return']).toBe(0.5);
    expect(metrics['charts/episodic_length']).toBe(1);
    expect(metrics['charts/env_steps']).toBe(2);
    expect(metrics['charts/regret']).toBe(0.5);
    expect(metrics['charts/cumulative_regret']).toBe(1);
    expect(metrics['charts/optimal_action_rate']).toBe(0.5);
    expect(metrics['actor/lr']).toBe(1);
    expect(metrics['critic/vf_loss']).toBeUndefined();
  });

  it("baseline 'mean': A = G − ½", async () => {
    // b = (0 + 1)/2 = ½: A = [−½, ½]. g₀ = −½·[½, −½] = [−¼, ¼]; g₁ = ½·[−½, ½] = [−¼, ¼].
    // Both estimates agree: grad_variance = 0; θ = [−0.25, 0.25] as before.
    // pg_loss = −½(−½·(−ln 2) + ½·(−ln 2)) = 0.
    const { trainer, metrics } = await firstMixedBatch({ baseline: 'mean' });
    expect(Array.from(trainer.policy.logits)).toEqual([-0.25, 0.25]);
    expect(metrics['actor/grad_variance']).toBe(0);
    expect(metrics['actor/pg_loss']).toBeCloseTo(0, 15);
  });

  it("baseline 'value': A = G − V(s), then V moves valueLr of the way", async () => {
    // V(0) = 0 at first, so the step equals 'none': θ = [−0.25, 0.25].
    // vf_loss = ½·mean((0 − 0)², (1 − 0)²) = ½·½ = 0.25; V(0) ← 0 + 0.5·mean(0, 1) = 0.25.
    const { trainer, metrics } = await firstMixedBatch({ baseline: 'value', valueLr: 0.5 });
    expect(Array.from(trainer.policy.logits)).toEqual([-0.25, 0.25]);
    expect(metrics['critic/vf_loss']).toBe(0.25);
    expect(Array.from(trainer.values)).toEqual([0.25]);
  });

  it('follows the entropy gradient −π_b(log π_b + H) when advantages are zero', async () => {
    // Three arms all paying exactly 1 with the 'mean' baseline: every A = 1 − 1 = 0, so only the
    // entropy bonus moves θ. θ = [0, ln 2, ln 3] → π = [1/6, 1/3, 1/2],
    // H = (1/6) ln 6 + (1/3) ln 3 + (1/2) ln 2 = 1.0114043.
    //   ∂H/∂θ₀ = −(1/6)(ln(1/6) + H) = −(1/6)(−1.7917595 + 1.0114043) = 0.1300592
    //   ∂H/∂θ₁ = −(1/3)(−1.0986123 + 1.0114043) = 0.0290693
    //   ∂H/∂θ₂ = −(1/2)(−0.6931472 + 1.0114043) = −0.1591285
    // Each of the N = 4 one-step episodes adds ∇H; the batch mean is ∇H itself. With lr = 1 and
    // entropyCoef = 0.1: Δθ = [0.01300592, 0.00290693, −0.01591285].
    const env = new KArmedBandit({ qStar: [1, 1, 1], rewardStd: 0 });
    const trainer = createReinforce(
      env,
      config({ baseline: 'mean', lr: 1, entropyCoef: 0.1, batchEpisodes: 4 }),
      0,
    );
    trainer.policy.logits.set([0, Math.LN2, Math.log(3)]);
    const metrics = await trainer.update();
    const theta = trainer.policy.logits;
    expect(theta[0]).toBeCloseTo(0.01300592, 7);
    expect(theta[1]! - Math.LN2).toBeCloseTo(0.00290693, 7);
    expect(theta[2]! - Math.log(3)).toBeCloseTo(-0.01591285, 7);
    expect(metrics['actor/entropy']).toBeCloseTo(1.0114043, 7);
    expect(metrics['actor/pg_loss']).toBe(0);
    expect(metrics['actor/grad_variance']).toBe(0);
    // ‖0.1·∇H‖ = 0.1·√(0.1300592² + 0.0290693² + 0.1591285²)
    //          = 0.1·√(0.0169154 + 0.0008450 + 0.0253219) = 0.1·√0.0430823 = 0.1·0.2075628
    expect(metrics['actor/grad_norm']).toBeCloseTo(0.02075628, 7);
  });
});

describe('REINFORCE learns', () => {
  const qStar = [0.2, -0.5, 1.0, 0.4, -0.1]; // best arm 2; the runner-up (0.4) is 0.6 behind

  for (const baseline of ['none', 'mean', 'value'] as const) {
    it(`picks the best of 5 arms with baseline '${baseline}' (> 0.9) in 60 × 16 pulls`, async () => {
      const env = new KArmedBandit({ qStar });
      const trainer = createReinforce(env, config({ baseline, lr: 0.5, valueLr: 0.2 }), 1);
      let first = 0;
      let metrics = {} as Record<string, number>;
      for (let u = 0; u < 60; u++) {
        metrics = await trainer.update();
        if (u === 0) first = metrics['charts/optimal_action_rate']!;
      }
      expect(trainer.policy.probs(0)[env.optimalArm]).toBeGreaterThan(0.9);
      expect(metrics['charts/optimal_action_rate']).toBeGreaterThan(first);
      expect(metrics['charts/cumulative_regret']).toBeGreaterThan(0);
      expect(metrics['actor/entropy']).toBeLessThan(Math.log(5) / 2);
    });
  }

  it('learns each context its own best arm (contextual bandit)', async () => {
    const means = [
      [0, 1, 0.5],
      [2, -1, 0],
      [0, 0, 3],
    ];
    const env = new ContextualBandit({ means });
    const trainer = createReinforce(env, config({ baseline: 'value', lr: 0.5, valueLr: 0.2 }), 2);
    for (let u = 0; u < 80; u++) await trainer.update();
    for (let c = 0; c < 3; c++) {
      expect(trainer.policy.probs(c)[env.optimalArm(c)]).toBeGreaterThan(0.8);
    }
    // V(c) approaches the best mean of each context under a near-greedy policy: 1, 2, 3.
    expect(trainer.values[2]).toBeGreaterThan(2);
  });

  it('walks a 4-state corridor to its goal: returns-to-go over several steps', async () => {
    const trainer = createReinforce(
      new Corridor(),
      config({ baseline: 'value', gamma: 0.9, lr: 1, valueLr: 0.2, maxEpisodeSteps: 30 }),
      3,
    );
    const first = await trainer.update();
    let last = first;
    for (let u = 0; u < 60; u++) last = await trainer.update();
    expect(last['charts/episodic_length']).toBeLessThan(first['charts/episodic_length']!);
    expect(last['charts/episodic_length']).toBeLessThan(4); // 3 is optimal
    for (let s = 0; s < 3; s++) expect(trainer.policy.probs(s)[1]).toBeGreaterThan(0.9);
    // Under the near-optimal policy V(s) ≈ γ^(2−s): 0.81, 0.9, 1.
    expect(trainer.values[2]).toBeGreaterThan(0.8);
    expect(first['charts/regret']).toBeUndefined(); // no regret info from this env
  });

  it('cuts episodes at maxEpisodeSteps', async () => {
    // Left-only corridor walks never reach the goal: with θ pushing hard left, every episode
    // runs the full 5 steps.
    const trainer = createReinforce(new Corridor(), config({ maxEpisodeSteps: 5 }), 0);
    for (let s = 0; s < 4; s++) trainer.policy.logits.set([30, -30], s * 2);
    const metrics = await trainer.update();
    expect(metrics['charts/episodic_length']).toBe(5);
    expect(trainer.lastBatch.every((ep) => ep.actions.length === 5)).toBe(true);
  });
});

describe('REINFORCE gradient variance: baselines reduce it', () => {
  it('the mean baseline lowers the spread of per-episode estimates (S&B Fig. 2.5 setup)', async () => {
    // 5 arms with q* ~ N(4, 1) (rewards far from 0, as in S&B Fig. 2.5), N = 32, first 5 updates.
    // Without a baseline each estimate is r·(onehot(a) − π) with r ≈ 4: ‖g_i‖² ∝ E[r²] ≈ 18;
    // with b = mean reward it is ∝ Var(r) ≈ 2. Value baseline: V(0) must first learn ≈ 4.
    const seeds = [0, 1, 2, 3, 4, 5, 6, 7];
    const average = async (baseline: ReinforceBaseline) => {
      const perSeed: number[] = [];
      for (const seed of seeds) {
        const env = new KArmedBandit({ arms: 5, qStarMean: 4, seed });
        const trainer = createReinforce(
          env,
          config({ baseline, batchEpisodes: 32, lr: 0.05, valueLr: 0.5 }),
          seed,
        );
        let sum = 0;
        for (let u = 0; u < 5; u++) sum += (await trainer.update())['actor/grad_variance']!;
        perSeed.push(sum / 5);
      }
      return perSeed;
    };
    const none = await average('none');
    const mean = await average('mean');
    const value = await average('value');
    const avg = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    console.log(
      `actor/grad_variance (mean of 5 updates, ${seeds.length} seeds): ` +
        `none ${avg(none).toFixed(3)}, mean ${avg(mean).toFixed(3)}, value ${avg(value).toFixed(3)}`,
    );
    seeds.forEach((_, i) => expect(mean[i]).toBeLessThan(none[i]!));
    expect(avg(mean)).toBeLessThan(avg(none) / 3);
    expect(avg(value)).toBeLessThan(avg(none));
  });
});

describe('REINFORCE run control', () => {
  const run = async (seed: number) => {
    const trainer = createReinforce(new KArmedBandit({ seed: 5 }), config(), seed);
    const history = [];
    for (let u = 0; u < 4; u++) history.push(await trainer.update());
    return { history, logits: Array.from(trainer.policy.logits) };
  };

  it('is deterministic: same seed → same metrics and policy, another seed → different', async () => {
    const a = await run(9);
    expect(await run(9)).toEqual(a);
    expect((await run(10)).history).not.toEqual(a.history);
  });

  it('applies live changes at the next update and records them', async () => {
    const trainer: ReinforceTrainer = createReinforce(new KArmedBandit(), config(), 0);
    await trainer.update();
    trainer.setHyperparams({ lr: 0.3, baseline: 'value' });
    expect(trainer.config.lr).toBe(DEFAULT_REINFORCE_CONFIG.lr); // not yet
    const metrics = await trainer.update();
    expect(metrics['actor/lr']).toBe(0.3);
    expect(metrics['critic/vf_loss']).toBeDefined();
    expect(trainer.step).toBe(2);
    expect(trainer.events).toEqual([
      { step: 2, kind: 'hyperparams', changes: { lr: 0.3, baseline: 'value' } },
    ]);
    expect(trainer.health).toEqual({ healthy: true });
  });

  it('refuses bad configs, settings and envs, naming the field and the range', () => {
    const env = new KArmedBandit();
    expect(() => createReinforce(env, config({ lr: 0 }))).toThrow(OpInputError);
    expect(() => createReinforce(env, config({ lr: 0 }))).toThrow(
      /reinforce: lr must be a number in \(0, 1000\], got 0/,
    );
    expect(() => createReinforce(env, config({ gamma: 1.1 }))).toThrow(/gamma .*\[0, 1\]/);
    expect(() => createReinforce(env, config({ batchEpisodes: 2.5 }))).toThrow(/batchEpisodes/);
    expect(() =>
      createReinforce(env, config({ baseline: 'median' as unknown as ReinforceBaseline })),
    ).toThrow(/baseline must be one of 'none', 'mean', 'value'/);
    expect(() => createReinforce(env, config(), -1)).toThrow(/seed/);
    const cartpole = new CartPole() as unknown as Env<number, number>;
    expect(() => createReinforce(cartpole, config())).toThrow(
      /reinforce: env must have discrete observation and action spaces.*CartPole-v1 with box/,
    );
    const trainer = createReinforce(env, config());
    expect(() => trainer.setHyperparams({ entropyCoef: -1 })).toThrow(/entropyCoef .*\[0, 100\]/);
    expect(() => trainer.setHyperparams({ maxEpisodeSteps: 10 })).toThrow(/cannot change/);
    expect(() => trainer.setHyperparams({ clip: 1 } as Partial<ReinforceConfig>)).toThrow(
      /not a setting/,
    );
  });

  it('documents every config field', () => {
    for (const key of Object.keys(DEFAULT_REINFORCE_CONFIG)) {
      expect(REINFORCE_CONFIG_SPEC[key as keyof ReinforceConfig].doc.length).toBeGreaterThan(10);
    }
  });
});
