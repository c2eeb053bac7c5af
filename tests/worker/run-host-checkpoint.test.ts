/**
 * Checkpoints of language-model runs, through the run host as the lab uses it: a run resumed from
 * a checkpoint at update k goes on exactly as the run that never stopped (same metrics, update
 * for update, on the CPU), with the live changes made before k and a curriculum's level; a
 * checkpoint older than the stored run is topped up by replay; a checkpoint that does not fit is
 * refused with the reason.
 */
import { describe, expect, it } from 'vitest';
import type { RunCheckpoint } from '../../src/worker/run-checkpoint';
import type { RunSpec, Settings } from '../../src/worker/run-protocol';
import { runCatalog } from '../../src/worker/run-spec';
import {
  cartPoleSpec,
  checkpointAt,
  copySpec,
  defaults,
  host,
  steps,
  straight,
  training,
} from './checkpoint-runs';

describe('language-model runs resume from a checkpoint exactly where they stopped', () => {
  it.each(['grpo', 'ppo', 'dpo'] as const)(
    '%s: updates 4–5 after a checkpoint at 3 equal the straight run’s',
    async (algo) => {
      const spec = copySpec(algo);
      const expected = await straight(spec, 5);
      const checkpoint = await checkpointAt(spec, 3);
      expect(checkpoint.step).toBe(3);
      expect(checkpoint.backend).toBe('cpu');
      expect(checkpoint.trainer.algorithm).toBe(algo);
      // DPO always scores a reference; GRPO and PPO here have klCoef 0 and none.
      expect(checkpoint.reference !== undefined).toBe(algo === 'dpo');

      const { api, messages, points, listener } = host();
      await api.createRun(spec, listener, undefined, checkpoint);
      // No warm-up and no replay: the run is at update 3 at once.
      expect(messages.some((m) => m.type === 'warmup' || m.type === 'replay')).toBe(false);
      await steps(api, 2);
      expect(points().map((p) => p.step)).toEqual([4, 5]);
      expect(points().map((p) => training(p.metrics))).toEqual(expected.slice(3));
      await api.dispose();
    },
    120_000,
  );

  it('keeps a live change made before the checkpoint, and its event', async () => {
    const spec = copySpec('grpo', { klCoef: 0.1 });
    const change: [number, Settings] = [2, { lr: 5e-4, temperature: 0.8 }];
    const expected = await straight(spec, 4, change);
    const checkpoint = await checkpointAt(spec, 2, change);
    expect(checkpoint.trainer.config.lr).toBe(5e-4);
    expect(checkpoint.trainer.events).toEqual([
      { step: 2, kind: 'hyperparams', changes: { lr: 5e-4, temperature: 0.8 } },
    ]);
    expect(checkpoint.reference).toBeInstanceOf(Float32Array); // klCoef > 0: a reference

    const { api, messages, points, listener } = host();
    await api.createRun(spec, listener, undefined, checkpoint);
    const ready = messages.filter((m) => m.type === 'update').at(-1)!;
    expect(ready.type === 'update' && ready.config.lr).toBe(5e-4);
    await steps(api, 2);
    expect(points().map((p) => training(p.metrics))).toEqual(expected.slice(2));
    await api.dispose();
  }, 120_000);

  it('tops an older checkpoint up by replay to the stored run’s update', async () => {
    const spec = copySpec('grpo');
    const expected = await straight(spec, 5);
    const checkpoint = await checkpointAt(spec, 2);
    const { api, messages, points, listener } = host();
    await api.createRun(spec, listener, { steps: 4, changes: [] }, checkpoint);
    const replays = messages.flatMap((m) => (m.type === 'replay' ? [m] : []));
    expect(replays.at(-1)).toEqual({ type: 'replay', done: 4, total: 4 });
    expect(replays[0]!.done).toBeGreaterThanOrEqual(3); // updates 3–4 only
    await api.step();
    expect(points().map((p) => p.step)).toEqual([5]);
    expect(training(points()[0]!.metrics)).toEqual(expected[4]);
    await api.dispose();
  }, 120_000);

  it('brings a curriculum back at its level and streak, and trains on that rung', async () => {
    const spec: RunSpec = {
      algo: 'grpo',
      task: 'copy',
      seed: 2,
      sftSteps: 2,
      curriculum: { threshold: 0.5, patience: 3 },
      config: { ...defaults('grpo'), promptsPerUpdate: 2, groupSize: 2 },
      backend: 'cpu',
    };
    const checkpoint = await checkpointAt(spec, 2);
    // Two updates of a barely warmed-up model: still on the first rung, no streak.
    expect(checkpoint.trainer.curriculum).toEqual({ level: 0, streak: 0 });
    // The same run two rungs up (copy rung 2: 5–10 letters of a–j, then ":"), as a later checkpoint holds it.
    const later = {
      ...checkpoint,
      trainer: { ...checkpoint.trainer, curriculum: { level: 2, streak: 1 } },
    };
    const { api, listener } = host();
    await api.createRun(spec, listener, undefined, later);
    await api.step();
    const inspection = await api.inspect();
    const prompts = inspection?.kind === 'samples' ? inspection.samples.map((s) => s.prompt) : [];
    expect(prompts.length).toBeGreaterThan(0);
    for (const prompt of prompts) expect(prompt).toMatch(/^[a-j]{5,10}:$/);
    expect((await api.checkpoint())!.trainer.curriculum!.level).toBe(2);
    await api.dispose();
  }, 120_000);
});

describe('checkpoints that do not fit are refused with the reason', () => {
  let good: RunCheckpoint | undefined;
  const grpo = copySpec('grpo');
  const goodCheckpoint = async () => (good ??= await checkpointAt(grpo, 1));

  it.each<[string, (c: RunCheckpoint) => [RunSpec, RunCheckpoint, number?]]>([
    ['another version', (c) => [grpo, { ...c, version: 2 as 1 }]],
    ['a step after the stored run', (c) => [grpo, c, 0]],
    ['a trainer at another step', (c) => [grpo, { ...c, trainer: { ...c.trainer, step: 7 } }]],
    [
      'another algorithm',
      (c) => [copySpec('grpo'), { ...c, trainer: { ...c.trainer, algorithm: 'dpo' } }],
    ],
    [
      'weights of another model',
      (c) => [grpo, { ...c, policy: { ...c.policy, params: c.policy.params.slice(1) } }],
    ],
    ['a random stream missing', (c) => [grpo, { ...c, trainer: { ...c.trainer, random: {} } }]],
    [
      'a config out of range',
      (c) => [grpo, { ...c, trainer: { ...c.trainer, config: { ...c.trainer.config, lr: -1 } } }],
    ],
  ])(
    '%s',
    async (_name, make) => {
      const [spec, bad, replaySteps] = make(await goodCheckpoint());
      const { api, listener } = host();
      const replay = replaySteps === undefined ? undefined : { steps: replaySteps, changes: [] };
      await expect(api.createRun(spec, listener, replay, bad)).rejects.toThrow(
        /checkpoint|grpo: lr/,
      );
      await api.dispose();
    },
    60_000,
  );

  it('refuses one for an environment run, whose checkpoint() is null', async () => {
    const spec: RunSpec = {
      algo: 'q-learning',
      env: 'cliffwalking',
      seed: 1,
      config: defaults('q-learning'),
      backend: 'cpu',
    };
    const { api, listener } = host();
    await expect(api.createRun(spec, listener, undefined, await goodCheckpoint())).rejects.toThrow(
      'checkpoint: q-learning runs resume by replay only',
    );
    const fresh = host();
    await fresh.api.createRun(spec, fresh.listener);
    await fresh.api.step();
    expect(await fresh.api.checkpoint()).toBeNull();
    await fresh.api.dispose();
    await api.dispose();
  });
});

describe('PPO on CartPole resumes from a checkpoint, its environments mid-episode', () => {
  it('is the one environment algorithm whose runs keep checkpoints', () => {
    const algorithms = runCatalog().algorithms;
    const kept = algorithms.filter((a) => a.checkpoints).map((a) => a.name);
    const languageModels = algorithms.filter((a) => a.family === 'lm').map((a) => a.name);
    expect(kept.sort()).toEqual([...languageModels, 'ppo-mlp'].sort());
  });

  it('updates 4–6 after a checkpoint at 3 equal the straight run’s', async () => {
    const spec = cartPoleSpec();
    const expected = await straight(spec, 6, [2, { entCoef: 0.03 }]);
    const checkpoint = await checkpointAt(spec, 3, [2, { entCoef: 0.03 }]);
    expect(checkpoint.step).toBe(3);
    expect(checkpoint.trainer.algorithm).toBe('ppo-mlp');
    expect(checkpoint.trainer.env!.globalStep).toBe(3 * 4 * 32);

    const { api, messages, points, listener } = host();
    await api.createRun(spec, listener, undefined, checkpoint);
    expect(messages.some((m) => m.type === 'replay')).toBe(false);
    await steps(api, 3);
    expect(points().map((p) => p.step)).toEqual([4, 5, 6]);
    expect(points().map((p) => training(p.metrics))).toEqual(expected.slice(3));
    await api.dispose();
  });

  it('tops an older checkpoint up by replay, and refuses a language model’s', async () => {
    const spec = cartPoleSpec();
    const expected = await straight(spec, 5);
    const { api, messages, points, listener } = host();
    await api.createRun(spec, listener, { steps: 4, changes: [] }, await checkpointAt(spec, 2));
    // From update 2 to 4: the last replay message says 4 of 4.
    expect(messages.filter((m) => m.type === 'replay').at(-1)).toEqual({
      type: 'replay',
      done: 4,
      total: 4,
    });
    await steps(api, 1);
    expect(points().map((p) => training(p.metrics))).toEqual([expected[4]]);
    await api.dispose();

    const other = host();
    await expect(
      other.api.createRun(spec, other.listener, undefined, await checkpointAt(copySpec('grpo'), 1)),
    ).rejects.toThrow(/checkpoint: taken from a grpo run, not ppo-mlp|policy\.params holds/);
    await other.api.dispose();
  });
});

describe('a run with a learned reward model', () => {
  // A small reward model: 8 prompts × 4 answers of the shipped copy model, 3 steps of 4 pairs.
  const spec: RunSpec = {
    ...copySpec('grpo', { correctWeight: 0, rewardModelWeight: 1 }),
    rewardModel: {
      prompts: 8,
      samplesPerPrompt: 4,
      labelNoise: 0,
      steps: 3,
      pairsPerStep: 4,
      lr: 1e-3,
    },
  };

  it('keeps it in its checkpoints, and resumes without training it again', async () => {
    const expected = await straight(spec, 3);
    const checkpoint = await checkpointAt(spec, 1);
    const kept = checkpoint.rewardModel!;
    expect(kept.params).toBeInstanceOf(Float32Array);
    // The policy's weights plus the scalar head (64 weights and a bias, each tensor aligned).
    expect(kept.params.length).toBeGreaterThan(checkpoint.policy.params.length + 64);
    expect(kept.std).toBeGreaterThan(0);

    const { api, messages, points, listener } = host();
    await api.createRun(spec, listener, undefined, checkpoint);
    expect(messages.some((m) => m.type === 'reward-model')).toBe(false);
    await steps(api, 2);
    expect(points().map((p) => training(p.metrics))).toEqual(expected.slice(1));
    await api.dispose();
  }, 120_000);

  it.each<[string, (c: RunCheckpoint) => RunCheckpoint, RegExp]>([
    [
      'a checkpoint without one',
      ({ rewardModel: _, ...rest }) => rest,
      /this run has a reward model, and the checkpoint has none/,
    ],
    [
      'one of another size',
      (c) => ({ ...c, rewardModel: { ...c.rewardModel!, params: c.rewardModel!.params.slice(1) } }),
      /rewardModel\.params holds \d+ values; this run's reward model has \d+ parameters/,
    ],
    [
      'a normalization that is not a number',
      (c) => ({ ...c, rewardModel: { ...c.rewardModel!, std: 0 } }),
      /rewardModel\.std must be a finite number > 0, got 0/,
    ],
  ])(
    'refuses %s',
    async (_what, spoil, message) => {
      const good = await checkpointAt(spec, 1);
      const { api, listener } = host();
      await expect(api.createRun(spec, listener, undefined, spoil(good))).rejects.toThrow(message);
      await api.dispose();
    },
    60_000,
  );
});
