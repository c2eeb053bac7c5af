/**
 * A live change lands at the update after the one on the reader's screen. The worker sends each
 * slow update's metrics as soon as it ends: a flush left to a timer fired only once the next
 * update had freed the thread, so the page showed an update behind and changes made from it
 * landed two or three updates late (measured in the lab: a click at update 8, applied at 11).
 */
import { describe, expect, it } from 'vitest';
import { createRunHost } from '../../src/worker/run-host';
import type { RunMessage, RunSpec } from '../../src/worker/run-protocol';
import { runCatalog } from '../../src/worker/run-spec';

/** PPO on CartPole with 2 epochs: updates of tens of ms, each longer than the 5 ms flush. */
const spec: RunSpec = {
  algo: 'ppo-mlp',
  env: 'cartpole',
  seed: 1,
  config: {
    ...runCatalog().algorithms.find((a) => a.name === 'ppo-mlp')!.defaults,
    updateEpochs: 2,
  },
  backend: 'cpu',
};

/** A message between the page and the worker: delivered once the worker's thread is free. */
const hop = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

describe('run host: live changes while a run trains', () => {
  it('sends each slow update as it ends, and a change made on seeing update n lands at n + 1', async () => {
    const api = createRunHost({ flushMs: 5 });
    const batches: number[][] = [];
    const events: unknown[] = [];
    let change: { seen: number; result: Promise<unknown> } | undefined;
    const listener = (message: RunMessage) => {
      if (message.type !== 'update') return;
      events.push(...message.events);
      if (message.points.length === 0) return;
      const steps = message.points.map((p) => p.step);
      batches.push(steps);
      if (steps.at(-1)! < 2 || change) return;
      // The reader sees update n and changes the learning rate (it reaches the worker as a message).
      const seen = steps.at(-1)!;
      change = { seen, result: hop().then(() => api.setHyperparams({ learningRate: 5e-4 })) };
    };
    await api.createRun(spec, listener);
    await api.start();
    while (batches.length < 5) await new Promise((resolve) => setTimeout(resolve, 10));
    await api.pause();

    // One update a batch: none waited for the next update to be sent.
    expect(batches.slice(0, 5)).toEqual([[1], [2], [3], [4], [5]]);
    expect(change?.seen).toBe(2);
    expect(await change!.result).toEqual({ ok: true, appliesAt: 3 });
    // The chart's marker is drawn at the event's step: the same update.
    expect(events).toEqual([{ step: 3, kind: 'hyperparams', changes: { learningRate: 5e-4 } }]);
    await api.dispose();
  });
});
