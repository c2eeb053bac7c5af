import { describe, expect, it, vi } from 'vitest';
import { createRunHost } from '../../src/worker/run-host';
import type { RunMessage, Settings } from '../../src/worker/run-protocol';
import { readShipped, shippedEntry } from '../onnx/shipped';
import { runCatalog } from '../../src/worker/run-spec';

describe('run host: earlier updates kept for the inspector', () => {
  it('keeps a language model’s first update and the one whose mean reward rose most', async () => {
    const messages: RunMessage[] = [];
    // From the shipped reverse start (about 40% greedy): its rewards vary from update to update.
    const api = createRunHost({ flushMs: 0, lm: { readShipped: async (f) => readShipped(f) } });
    const grpo = runCatalog().algorithms.find((a) => a.name === 'grpo')!;
    await api.createRun(
      {
        algo: 'grpo',
        task: 'reverse',
        taskOptions: shippedEntry('reverse').taskOptions as Settings,
        seed: 2,
        config: { ...grpo.defaults, promptsPerUpdate: 4, groupSize: 4 },
        backend: 'cpu',
        sftSteps: 0,
        init: { kind: 'shipped', model: 'reverse' },
      },
      (m) => messages.push(m),
    );
    expect(await api.inspectKept()).toEqual([]);
    for (let i = 0; i < 6; i++) await api.step();
    // The mean reward of each update, as the page received it.
    const means = new Map<number, number>();
    for (const m of messages) {
      if (m.type !== 'update') continue;
      for (const p of m.points) means.set(p.step, p.metrics['reward/mean']!);
    }
    expect([...means.keys()]).toEqual([1, 2, 3, 4, 5, 6]);
    let riseAt: number | undefined;
    let best = 0;
    for (let step = 2; step <= 6; step++) {
      const gain = means.get(step)! - means.get(step - 1)!;
      if (gain > best) [best, riseAt] = [gain, step];
    }

    const kept = await api.inspectKept();
    expect(kept[0]).toMatchObject({ role: 'first', step: 1, item: { kind: 'samples', step: 1 } });
    // This seed's rewards rise somewhere in its six updates (else the test shows nothing).
    expect(riseAt).toBeDefined();
    expect(kept).toHaveLength(2);
    expect(kept[1]).toMatchObject({ role: 'rise', step: riseAt, item: { step: riseAt } });
    expect(kept[1]!.gain).toBeCloseTo(best, 9);
    // The samples are the update's own: their rewards average to the update's mean reward.
    for (const k of kept) {
      if (k.item.kind !== 'samples') throw new Error('samples expected');
      const rewards = k.item.samples.map((s) => s.reward);
      const mean = rewards.reduce((a, b) => a + b, 0) / rewards.length;
      expect(mean).toBeCloseTo(means.get(k.step)!, 5);
    }
    expect(structuredClone(kept)).toEqual(kept);
    await api.dispose();
  }, 120_000);

  it('ends a pause with the last update’s inspection, just before it says paused', async () => {
    const messages: RunMessage[] = [];
    const api = createRunHost({ flushMs: 0, lm: { readShipped: async (f) => readShipped(f) } });
    const grpo = runCatalog().algorithms.find((a) => a.name === 'grpo')!;
    await api.createRun(
      {
        algo: 'grpo',
        task: 'reverse',
        taskOptions: shippedEntry('reverse').taskOptions as Settings,
        seed: 3,
        config: { ...grpo.defaults, promptsPerUpdate: 2, groupSize: 4 },
        backend: 'cpu',
        sftSteps: 0,
        init: { kind: 'shipped', model: 'reverse' },
      },
      (m) => messages.push(m),
    );
    await api.start();
    await vi.waitFor(() => expect(messages.some((m) => m.type === 'update')).toBe(true), {
      timeout: 60_000,
    });
    await api.pause();
    const lastStep = Math.max(
      ...messages.flatMap((m) => (m.type === 'update' ? m.points.map((p) => p.step) : [])),
    );
    const paused = messages.findIndex((m) => m.type === 'status' && m.status === 'paused');
    const sent = messages.findIndex((m) => m.type === 'inspections');
    expect(paused).toBeGreaterThan(0);
    expect(sent).toBe(paused - 1);
    const inspections = messages[sent] as Extract<RunMessage, { type: 'inspections' }>;
    expect(inspections.last).toMatchObject({ kind: 'samples', step: lastStep });
    expect(inspections.earlier).toEqual(await api.inspectKept());
    expect(inspections.earlier[0]).toMatchObject({ role: 'first', step: 1 });
    await api.dispose();
  }, 120_000);

  it('keeps nothing for an environment run', async () => {
    const api = createRunHost({ flushMs: 0 });
    const q = runCatalog().algorithms.find((a) => a.name === 'q-learning')!;
    await api.createRun(
      { algo: 'q-learning', env: 'cliffwalking', seed: 1, config: q.defaults, backend: 'cpu' },
      () => {},
    );
    await api.step();
    expect(await api.inspectKept()).toEqual([]);
    await api.dispose();
  });
});
