import { describe, expect, it } from 'vitest';
import { RunDraft } from '../../src/state/run-draft.svelte';
import { runCatalog } from '../../src/worker/run-spec';

describe('RunDraft: a remembered choice', () => {
  const catalog = runCatalog();
  const task = catalog.tasks.at(-1)!.name;

  it('opens on the remembered algorithm and task', () => {
    const draft = new RunDraft(catalog, { algo: 'grpo', task });
    expect(draft.choice).toEqual({ algo: 'grpo', env: '', task, positions: 'learned' });
    expect(draft.spec).toMatchObject({ algo: 'grpo', task });
  });

  it('falls back to the defaults for names this build does not have', () => {
    const draft = new RunDraft(catalog, { algo: 'no-such-algorithm', task: 'no-such-task' });
    expect(draft.algo).toBe(catalog.algorithms[0]!.name);
    expect(draft.task).toBe(catalog.tasks[0]!.name);
    const tabular = new RunDraft(catalog, { algo: 'q-learning', env: 'no-such-env' });
    const envs = catalog.algorithms.find((a) => a.name === 'q-learning')!.envs;
    expect(tabular.env).toBe(envs[0]);
  });
});

describe('RunDraft: the start a task recommends', () => {
  const catalog = runCatalog();

  it('starts copy from the shipped noisy-copy model (no warm-up), with its task options', () => {
    const draft = new RunDraft(catalog, { algo: 'grpo', task: 'copy' });
    expect(draft.start).toBe('shipped:copy-noisy');
    expect(draft.spec).toMatchObject({
      init: { kind: 'shipped', model: 'copy-noisy' },
      sftSteps: 0,
      taskOptions: { minLength: 3, maxLength: 6, alphabet: 'abcde' },
    });
  });

  it('starts multiply from the shipped multiply model, at the options it was warmed up on', () => {
    const draft = new RunDraft(catalog, { algo: 'grpo', task: 'multiply' });
    expect(draft.start).toBe('shipped:multiply');
    expect(draft.spec.taskOptions).toMatchObject({ minDigits: 2, maxDigits: 2, useTools: true });
  });

  it('starts a task without a recommended model from a new one, with its warm-up', () => {
    const draft = new RunDraft(catalog, { algo: 'grpo', task: 'wordproblem' });
    expect(draft.start).toBe('new');
    expect(draft.spec.sftSteps).toBeGreaterThan(0);
    // And the form says, before Create, what its defaults did (measured), where copy's need not.
    expect(draft.startExpectation).toMatch(/^No start made for RL ships for wordproblem/);
    draft.selectTask('copy');
    expect(draft.startExpectation).toBeUndefined();
  });

  it('starts countdown from its shipped start and says what to expect from it, there only', () => {
    const draft = new RunDraft(catalog, { algo: 'grpo', task: 'countdown' });
    expect(draft.start).toBe('shipped:countdown');
    expect(draft.spec).toMatchObject({
      init: { kind: 'shipped', model: 'countdown' },
      sftSteps: 0,
    });
    expect(draft.spec.config).toMatchObject({ iterations: 2, promptsPerUpdate: 16, lr: 1.5e-3 });
    expect(draft.startExpectation).toMatch(/^From the shipped countdown start/);
    // Measured from that start: a new model's run is another run, and the sentence goes.
    draft.selectStart('new');
    expect(draft.startExpectation).toBeUndefined();
  });

  it("applies the settings the task recommends for each algorithm's run from its start", () => {
    const grpo = new RunDraft(catalog, { algo: 'grpo', task: 'copy' });
    expect(grpo.spec.config).toMatchObject({ iterations: 2, promptsPerUpdate: 16, lr: 1.5e-3 });
    grpo.select('ppo');
    expect(grpo.spec.config).toMatchObject({ promptsPerUpdate: 128, lr: 1e-3 });
    // DPO: more prompts (more pairs an update) at its own lr; β stays TRL's default.
    grpo.select('dpo');
    expect(grpo.spec.config).toMatchObject({ promptsPerUpdate: 32, lr: 1e-3, beta: 0.1 });
    // Another task without them: the algorithm's own defaults (verl's ppo_epochs 1).
    grpo.select('grpo');
    grpo.selectTask('wordproblem');
    expect(grpo.spec.config).toMatchObject({ iterations: 1 });
  });
});
