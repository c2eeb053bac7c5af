/**
 * Runs on the CPU through the run host, as the lab drives them, for the checkpoint tests: a small
 * copy spec (and PPO on CartPole), a run straight through, and a run stopped for a checkpoint.
 */
import { expect } from 'vitest';
import { createRunHost } from '../../src/worker/run-host';
import type { MetricPoint, RunMessage, RunSpec, Settings } from '../../src/worker/run-protocol';
import { runCatalog } from '../../src/worker/run-spec';
import { readShipped } from '../onnx/shipped';

export const defaults = (algo: string): Settings =>
  runCatalog().algorithms.find((a) => a.name === algo)!.defaults;

/** Small batches from the shipped copy model: a few updates in a second or two on the CPU. */
export function copySpec(algo: 'grpo' | 'ppo' | 'dpo', config: Settings = {}): RunSpec {
  const small: Settings = {
    ppo: { promptsPerUpdate: 8, minibatches: 2 },
    grpo: { promptsPerUpdate: 2, groupSize: 4 },
    dpo: { promptsPerUpdate: 2, samplesPerPrompt: 4 },
  }[algo];
  return {
    algo,
    task: 'copy',
    taskOptions: { minLength: 3, maxLength: 6, alphabet: 'abcde' },
    init: { kind: 'shipped', model: 'copy' },
    sftSteps: 0,
    seed: 3,
    config: { ...defaults(algo), ...small, ...config },
    backend: 'cpu',
  };
}

/** PPO on CartPole with a small batch (4 envs × 32 steps): an update in a few milliseconds. */
export function cartPoleSpec(): RunSpec {
  const config = { numEnvs: 4, numSteps: 32, numMinibatches: 2, updateEpochs: 2 };
  return {
    algo: 'ppo-mlp',
    env: 'cartpole',
    seed: 5,
    config: { ...defaults('ppo-mlp'), ...config },
    backend: 'cpu',
  };
}

/** Metrics that measure time, not training: they differ between any two runs. */
const TIMED = new Set(['timing_s/step', 'perf/tokens_per_s', 'charts/SPS']);

export function training(metrics: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(metrics).filter(([k]) => !TIMED.has(k)));
}

/** A host with its messages; `points()` are the updates' metrics streamed so far. */
export function host() {
  const messages: RunMessage[] = [];
  const api = createRunHost({
    flushMs: 1,
    lm: { readShipped: async (file) => readShipped(file) },
  });
  const points = (): MetricPoint[] =>
    messages.flatMap((m) => (m.type === 'update' ? m.points : []));
  return { api, messages, points, listener: (m: RunMessage) => messages.push(m) };
}

export async function steps(api: ReturnType<typeof host>['api'], n: number): Promise<void> {
  for (let i = 0; i < n; i++) await api.step();
}

/** Runs `spec` for `total` updates without stopping; returns each update's training metrics. */
export async function straight(spec: RunSpec, total: number, change?: [number, Settings]) {
  const { api, points, listener } = host();
  await api.createRun(spec, listener);
  for (let u = 1; u <= total; u++) {
    if (change?.[0] === u)
      expect(await api.setHyperparams(change[1])).toEqual({ ok: true, appliesAt: u });
    await api.step();
  }
  const out = points().map((p) => training(p.metrics));
  await api.dispose();
  return out;
}

/** Runs `spec` for `at` updates and takes a checkpoint. */
export async function checkpointAt(spec: RunSpec, at: number, change?: [number, Settings]) {
  const { api, listener } = host();
  await api.createRun(spec, listener);
  for (let u = 1; u <= at; u++) {
    if (change?.[0] === u) await api.setHyperparams(change[1]);
    await api.step();
  }
  const checkpoint = (await api.checkpoint())!;
  await api.dispose();
  return checkpoint;
}
