/**
 * A language-model run in Chromium with its frozen reference on onnxruntime-web's WebGPU EP (the
 * lab's "Reference: onnxruntime-web" choice), against the same run with the reference on our
 * engine. The policy trains on our WebGPU kernels in both, so samples and rewards are the same;
 * only the engine scoring π_ref differs, and the KL it reports must agree within float tolerance.
 * Without an adapter the file fails (tests/support/gpu.ts).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { createRunHost } from '../../src/worker/run-host';
import type { RunMessage, RunSpec } from '../../src/worker/run-protocol';
import { runCatalog } from '../../src/worker/run-spec';
import { testGpu } from '../support/gpu';

const grpo = runCatalog().algorithms.find((a) => a.name === 'grpo')!;

async function trainWith(reference: RunSpec['reference'], updates: number) {
  const messages: RunMessage[] = [];
  const api = createRunHost({ flushMs: 10 });
  await api.createRun(
    {
      algo: 'grpo',
      task: 'copy',
      seed: 5,
      // A small batch keeps the file short on a software adapter.
      config: { ...grpo.defaults, klCoef: 0.1, lr: 3e-3, groupSize: 4, promptsPerUpdate: 2 },
      backend: 'webgpu', // any adapter: the test layer has SwiftShader
      sftSteps: 2,
      reference,
    },
    (m) => messages.push(m),
  );
  for (let i = 0; i < updates; i++) await api.step();
  await api.dispose();
  const points = messages.flatMap((m) => (m.type === 'update' ? m.points : []));
  return {
    kl: points.map((p) => p.metrics['actor/kl_loss']!),
    reward: points.map((p) => p.metrics['reward/mean']!),
    line: messages.flatMap((m) => (m.type === 'backend' ? [m.line] : [])).at(-1)!,
  };
}

describe('run host in the browser: reference on onnxruntime-web (WebGPU EP)', () => {
  let hasGpu = false;
  beforeAll(async () => {
    hasGpu = (await testGpu()) !== undefined; // fails the file without an adapter
  });

  it('reports the KL our engine reports, and names the engine on the backend line', async (ctx) => {
    if (!hasGpu) ctx.skip();
    const ours = await trainWith('engine', 2);
    const ort = await trainWith('ort', 2);
    expect(ort.line).toMatch(/ · reference on onnxruntime-web \(WebGPU\)$/);
    expect(ours.line).not.toMatch(/onnxruntime/);
    expect(ort.reward).toEqual(ours.reward);
    expect(ours.kl[1]).toBeGreaterThan(1e-6);
    for (let i = 0; i < 2; i++) {
      expect(Math.abs(ort.kl[i]! - ours.kl[i]!)).toBeLessThanOrEqual(1e-5 + 1e-3 * ours.kl[i]!);
    }
  }, 180_000);
});
