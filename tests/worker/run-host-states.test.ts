import { describe, expect, it } from 'vitest';
import { createRunHost } from '../../src/worker/run-host';
import type { RunMessage, RunSpec } from '../../src/worker/run-protocol';
import { runCatalog } from '../../src/worker/run-spec';

const defaults = (algo: string) => runCatalog().algorithms.find((a) => a.name === algo)!.defaults;

const tabular: RunSpec = {
  algo: 'q-learning',
  env: 'cliffwalking',
  seed: 1,
  config: defaults('q-learning'),
  backend: 'cpu',
};

function host() {
  const messages: RunMessage[] = [];
  const api = createRunHost({ flushMs: 50 });
  const statuses = () => messages.flatMap((m) => (m.type === 'status' ? [m.status] : []));
  return { api, messages, statuses, listener: (m: RunMessage) => messages.push(m) };
}

describe('run host states, as the commands see them', () => {
  it('created: commands that need a trainer are refused until the run is built', async () => {
    const { api } = host();
    await expect(api.start()).rejects.toThrow('no run: call createRun() first');
    await expect(api.step()).rejects.toThrow('no run: call createRun() first');
    expect(await api.setHyperparams({ epsilon: 0.2 })).toEqual({
      ok: false,
      error: 'no run: call createRun() first',
    });
    expect(await api.inspect()).toBeNull();
    expect(await api.checkpoint()).toBeNull();
  });

  it('a refused spec leaves the host created: a good one may follow', async () => {
    const { api, listener, statuses } = host();
    await expect(api.createRun({ ...tabular, seed: -1 }, listener)).rejects.toThrow('seed');
    expect(statuses()).toEqual([]);
    await api.createRun(tabular, listener);
    expect(statuses()).toEqual(['warming', 'idle']);
    await api.dispose();
  });

  it('warming: a second run is refused while the first is built', async () => {
    const { api, listener } = host();
    const first = api.createRun(
      {
        ...tabular,
        algo: 'grpo',
        env: undefined,
        task: 'copy',
        sftSteps: 2,
        config: defaults('grpo'),
      },
      listener,
    );
    await expect(api.createRun(tabular, listener)).rejects.toThrow(
      'this worker already hosts a run',
    );
    await first;
    await expect(api.createRun(tabular, listener)).rejects.toThrow(
      'this worker already hosts a run',
    );
    await api.dispose();
  }, 60_000);

  it('warming, then disposed: the model built for nothing is freed and no idle is sent', async () => {
    const { api, listener, statuses } = host();
    const created = api.createRun(
      {
        algo: 'grpo',
        task: 'copy',
        seed: 1,
        sftSteps: 2,
        config: defaults('grpo'),
        backend: 'cpu',
      },
      listener,
    );
    await api.dispose();
    await expect(created).rejects.toThrow('the run was disposed while it was built');
    expect(statuses()).toEqual(['warming']);
  }, 60_000);

  it('training, pausing, paused: a second pause returns, start resumes, step waits for pause', async () => {
    const { api, listener, statuses } = host();
    await api.createRun(tabular, listener);
    await api.start();
    await api.start(); // already training: nothing more
    await expect(api.step()).rejects.toThrow('pause the run before stepping it');
    const pausing = api.pause();
    await api.pause(); // pausing already: returns at once
    await pausing;
    expect(statuses()).toEqual(['warming', 'idle', 'running', 'paused']);
    await api.step(); // paused: steps are allowed
    await api.start();
    await api.pause();
    expect(statuses().slice(-2)).toEqual(['running', 'paused']);
    await api.dispose();
  });

  it('a start that comes in while pausing waits for the pause, then trains again', async () => {
    const { api, listener, statuses } = host();
    await api.createRun(tabular, listener);
    await api.start();
    await new Promise((resolve) => setTimeout(resolve, 30));
    await Promise.all([api.pause(), api.start()]);
    expect(statuses().slice(-3)).toEqual(['running', 'paused', 'running']);
    await api.pause();
    await api.dispose();
  });

  it('disposed: no command reaches a trainer, and no run can be built again', async () => {
    const { api, listener } = host();
    await api.createRun(tabular, listener);
    await api.step();
    await api.dispose();
    await api.dispose(); // twice is harmless
    await expect(api.start()).rejects.toThrow('no run: call createRun() first');
    expect(await api.inspect()).toBeNull();
    await expect(api.createRun(tabular, listener)).rejects.toThrow(
      "this worker's run was disposed",
    );
  });
});
