/**
 * A checkpoint of a GRPO run on WebGPU, in Chromium: the policy's weights and AdamW moments are
 * read back from GPU buffers, written into a fresh run's buffers, and the resumed run's next
 * update matches the unbroken run's. Without an adapter the file fails (tests/support/gpu.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createRunHost } from '../../src/worker/run-host';
import type { RunCheckpoint } from '../../src/worker/run-checkpoint';
import type { MetricPoint, RunMessage, RunSpec } from '../../src/worker/run-protocol';
import { runCatalog } from '../../src/worker/run-spec';
import { testGpu } from '../support/gpu';

const grpo = runCatalog().algorithms.find((a) => a.name === 'grpo')!;
const spec: RunSpec = {
  algo: 'grpo',
  task: 'copy',
  seed: 6,
  // A small batch keeps the file short on a software adapter; a KL term so a reference is kept.
  config: { ...grpo.defaults, klCoef: 0.1, groupSize: 4, promptsPerUpdate: 2 },
  backend: 'webgpu', // any adapter: the test layer has SwiftShader
  sftSteps: 2,
};
const TIMED = new Set(['timing_s/step', 'perf/tokens_per_s']);
const training = (p: MetricPoint) =>
  Object.fromEntries(Object.entries(p.metrics).filter(([k]) => !TIMED.has(k)));

async function run(updates: number, from?: RunCheckpoint) {
  const messages: RunMessage[] = [];
  const api = createRunHost({ flushMs: 10 });
  await api.createRun(spec, (m) => messages.push(m), undefined, from);
  for (let i = 0; i < updates; i++) await api.step();
  const checkpoint = (await api.checkpoint())!;
  await api.dispose();
  const points = messages.flatMap((m) => (m.type === 'update' ? m.points : []));
  const kind = messages.flatMap((m) => (m.type === 'backend' ? [m.kind] : [])).at(-1);
  return { points, checkpoint, kind };
}

describe('run host in the browser: checkpoints of a WebGPU run', () => {
  let hasGpu = false;
  beforeAll(async () => {
    hasGpu = (await testGpu()) !== undefined; // fails the file without an adapter
  });

  it('resumes from GPU buffers and goes on as the unbroken run', async (ctx) => {
    if (!hasGpu) ctx.skip();
    const unbroken = await run(2);
    expect(unbroken.kind).toBe('webgpu');
    const first = await run(1);
    expect(first.checkpoint.backend).toBe('webgpu');
    expect(first.checkpoint.policy.stats[3]).toBe(2 + 1); // 2 warm-up steps + 1 RL step
    expect(first.checkpoint.policy.m.some((x) => x !== 0)).toBe(true);
    const resumed = await run(1, first.checkpoint);
    expect(resumed.points.map((p) => p.step)).toEqual([2]);
    expect(training(resumed.points[0]!)).toEqual(training(unbroken.points[1]!));
  }, 180_000);
});
