/**
 * PPO on CartPole goes on from a checkpoint exactly: a trainer built fresh, given another's state
 * (through JSON, as a file carries it) and its network's weights and AdamW state, gives the same
 * metrics and weights, update for update, as the one that never stopped — episodes that straddle
 * the checkpoint, a live change and the annealed learning rate included. A bad state is refused
 * and changes nothing.
 */
import { describe, expect, it } from 'vitest';
import { CartPole } from '../../src/envs/cartpole';
import { createPpo, type PpoTrainer } from '../../src/rl/ppo';
import { DEFAULT_PPO_CONFIG } from '../../src/rl/ppo-config';
import type { Metrics, TrainerState } from '../../src/rl/trainer';

/** 4 envs × 32 steps, 2 minibatches, 2 epochs; annealed over 8 updates. */
const config = {
  ...DEFAULT_PPO_CONFIG,
  numEnvs: 4,
  numSteps: 32,
  numMinibatches: 2,
  updateEpochs: 2,
  totalTimesteps: 8 * 128,
};
const make = () => createPpo(() => new CartPole(), config, 7);
/** SPS measures time, not training. */
const training = (m: Metrics) =>
  Object.fromEntries(Object.entries(m).filter(([k]) => k !== 'charts/SPS'));

async function updates(trainer: PpoTrainer, n: number) {
  const out: Metrics[] = [];
  for (let i = 0; i < n; i++) out.push(training(await trainer.update()));
  return out;
}

async function snapshotOf(trainer: PpoTrainer) {
  const [params, optimizer] = await Promise.all([
    trainer.network.readParams(),
    trainer.network.readOptimizer(),
  ]);
  const state: TrainerState = JSON.parse(JSON.stringify(trainer.saveState()));
  return { params, optimizer, state };
}

describe('PPO on CartPole, resumed from a checkpoint', () => {
  it('trains on exactly as the run that never stopped', async () => {
    const straight = make();
    await updates(straight, 3);
    straight.setHyperparams({ entCoef: 0.02 }); // live, applied at update 4
    await updates(straight, 1);
    const saved = await snapshotOf(straight);
    expect(saved.state.env!.globalStep).toBe(4 * 128);
    const expected = await updates(straight, 3);

    const resumed = make();
    resumed.loadState(saved.state);
    resumed.network.writeOptimizer(saved.optimizer);
    resumed.network.writeParams(saved.params);
    expect(resumed.step).toBe(4);
    expect(resumed.config.entCoef).toBe(0.02);
    expect(resumed.events).toEqual(straight.events);
    expect(await updates(resumed, 3)).toEqual(expected);
    expect(await resumed.network.readParams()).toEqual(await straight.network.readParams());
    // Episodes ended across the checkpoint: their returns count the steps before it.
    expect(expected.some((m) => m['charts/episodic_return'] !== undefined)).toBe(true);
  }, 30_000);

  it('differs without the environments: the check above can fail', async () => {
    const straight = make();
    await updates(straight, 2);
    const saved = await snapshotOf(straight);
    const expected = await updates(straight, 2);
    // The same weights, AdamW state and control, but the envs fresh from their seeds.
    const fresh = make();
    const env = fresh.saveState().env!;
    fresh.loadState({ ...saved.state, env: { ...saved.state.env!, vector: env.vector } });
    fresh.network.writeOptimizer(saved.optimizer);
    fresh.network.writeParams(saved.params);
    expect(await updates(fresh, 2)).not.toEqual(expected);
  }, 30_000);

  it.each([
    ['no envs', (s: TrainerState) => ({ ...s, env: undefined }), /trainer\.env is missing/],
    [
      'a bad sub-env',
      (s: TrainerState) => {
        const vector = structuredClone(s.env!.vector) as { envs: { env: { steps: number } }[] };
        vector.envs[3]!.env.steps = -1;
        return { ...s, env: { ...s.env!, vector } };
      },
      /sub-env 3: .*snapshot\.steps must be an integer in \[0, 500\], got -1/,
    ],
    [
      'observations of another size',
      (s: TrainerState) => ({ ...s, env: { ...s.env!, nextObs: [0, 0] } }),
      /nextObs must be 16 finite numbers/,
    ],
    [
      'a config out of range',
      (s: TrainerState) => ({ ...s, config: { ...s.config, learningRate: -1 } }),
      /learningRate/,
    ],
    [
      'another algorithm',
      (s: TrainerState) => ({ ...s, algorithm: 'grpo' }),
      /taken from a grpo run, not ppo-mlp/,
    ],
  ])(
    'refuses %s and changes nothing',
    async (_name, spoil, message) => {
      const source = make();
      await updates(source, 2);
      const { state } = await snapshotOf(source);
      const target = make();
      await updates(target, 1);
      const before = JSON.stringify(target.saveState());
      expect(() => target.loadState(spoil(state) as TrainerState)).toThrow(message);
      expect(JSON.stringify(target.saveState())).toBe(before);
    },
    30_000,
  );
});
