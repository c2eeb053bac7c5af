/**
 * The LoRA-GRPO panel's run outlives a reload: paused, it is stored (both checkpoints, the
 * lines, the base's fingerprint); a new page's state finds it paused and, given the same model,
 * goes on to the very adapters an unbroken run ends with. Another model is refused by its
 * fingerprint, and a damaged record is ignored. The workers run in-process (lora-api.ts, the
 * code the Web Worker exposes).
 */
import type { Remote } from 'comlink';
import { beforeAll, describe, expect, it } from 'vitest';
import { directoryFiles } from '../../src/cli/file-source';
import { loadLmModel } from '../../src/cli/lm-model';
import type { HfTokenizerFiles } from '../../src/models/hf/hf-tokenizer';
import type { ModelSpec } from '../../src/models/model-spec';
import { memoryLoraRunStore, type LoraRunStorePort } from '../../src/state/lora-run-store';
import {
  LORA_TASKS,
  LoraTrainState,
  type TrainingInputsSource,
} from '../../src/state/lora-train.svelte';
import { createTokenTask } from '../../src/agents/token-task-registry';
import { readTokenizerFiles } from '../../src/state/model-load';
import { createLoraWorkerApi } from '../../src/worker/lora-api';
import type { LoraWorkerApi } from '../../src/worker/lora-protocol';
import { LORA_RECIPES, loraRecipe } from '../../src/worker/lora-recipes';
import { loraRunExport } from '../../src/compare/lora-run-export';

const MODEL = 'public/models/hf/tiny-chat';
let spec: ModelSpec;
let params: Float32Array;
let tokenizerFiles: HfTokenizerFiles;

beforeAll(async () => {
  const loaded = await loadLmModel(MODEL);
  spec = loaded.model.spec;
  params = loaded.params;
  const files = directoryFiles(MODEL);
  tokenizerFiles = await readTokenizerFiles(files);
  await files.close();
});

/** The model as the page reads it: a fresh copy of the weights each time (they are moved). */
const inputs =
  (change?: (base: Float32Array) => void): TrainingInputsSource =>
  async () => {
    const base = params.slice();
    change?.(base);
    return { source: 'tiny-chat', spec, base, tokenizerFiles };
  };

/** In-process workers; `afterUpdate` is told each update the run's worker finishes. */
function trainState(
  store: LoraRunStorePort,
  afterUpdate?: (update: number) => void,
  clock?: { now: () => number; saveEveryMs?: number },
) {
  let started = 0;
  const train: LoraTrainState = new LoraTrainState({
    store,
    key: 'test',
    ...clock,
    startWorker: () => {
      const api = createLoraWorkerApi();
      const isRun = started++ % 2 === 0;
      const update: LoraWorkerApi['update'] = async (heldOut) => {
        const report = await api.update(heldOut);
        if (isRun) afterUpdate?.(report.update);
        return report;
      };
      return { api: { ...api, update } as unknown as Remote<LoraWorkerApi>, terminate: () => {} };
    },
  });
  train.form = {
    task: 'addition-reversed',
    recipe: 'grpo',
    rank: 4,
    lr: 5e-3,
    promptsPerUpdate: 2,
    updates: 4,
    seed: 2,
  };
  return train;
}

const withoutSeconds = (lines: LoraTrainState['lines']) =>
  lines.map(({ seconds: _, ...line }) => line);

describe('LoraTrainState across a reload', () => {
  it('pauses, is stored, and goes on in a new page to the unbroken run’s adapters', async () => {
    const unbroken = trainState(memoryLoraRunStore());
    await unbroken.start(inputs(), 'cpu');
    expect(unbroken.status).toBe('done');
    const want = await unbroken.adapter();
    // The last update, token by token, in the model's tokens: 2 prompts × 8 answers.
    const inspection = unbroken.inspection!;
    expect(inspection.step).toBe(4);
    expect(inspection.samples).toHaveLength(16);
    for (const sample of inspection.samples) {
      const trained = sample.tokens.filter((t) => t.trained).map((t) => t.text);
      expect(trained.length).toBeGreaterThan(0);
      expect(trained.join('')).toContain(sample.completion.trim());
    }

    const store = memoryLoraRunStore();
    let first: LoraTrainState | undefined = undefined;
    first = trainState(store, (update) => update === 2 && first!.pause());
    await first.start(inputs(), 'cpu');
    expect(first.status).toBe('paused');
    expect(first.step).toBe(2);
    const saved = await store.load('test');
    expect(saved?.checkpoints.map((c) => c.run.step)).toEqual([2, 2]);
    expect(saved?.fingerprint).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(saved?.finished).toBe(false);

    const reloaded = trainState(store);
    reloaded.form = { ...reloaded.form, updates: 99, lr: 1 }; // the stored form wins
    await reloaded.restoreSaved();
    expect(reloaded.status).toBe('paused');
    expect(reloaded.step).toBe(2);
    expect(reloaded.savedBase).toEqual({ source: 'tiny-chat', fingerprint: saved!.fingerprint });
    expect(reloaded.form.updates).toBe(4);
    // The adapters download from the stored checkpoint before any worker runs.
    expect((await reloaded.adapter())?.weights.length).toBe(want!.weights.length);

    await reloaded.resume(inputs(), 'cpu');
    expect(reloaded.error).toBeUndefined();
    expect(reloaded.status).toBe('done');
    expect(reloaded.step).toBe(4);
    const got = await reloaded.adapter();
    expect(got!.weights).toEqual(want!.weights);
    expect(got!.config).toBe(want!.config);
    expect(withoutSeconds(reloaded.lines)).toEqual(withoutSeconds(unbroken.lines));
    expect((await store.load('test'))?.finished).toBe(true);
  }, 120_000);

  it('is stored at each held-out check and whenever 30 s have passed since its last store', async () => {
    const memory = memoryLoraRunStore();
    const stored: number[] = [];
    const store: LoraRunStorePort = {
      ...memory,
      save: async (key, run) => {
        stored.push(run.checkpoints[0]!.run.step);
        await memory.save(key, run);
      },
    };
    // Each update takes 20 s on this clock: a store after update 2 (40 s), then at the end (4,
    // its held-out check); a reload at update 3 would lose one update, not three.
    let ms = 0;
    const train = trainState(store, () => (ms += 20_000), { now: () => ms });
    await train.start(inputs(), 'cpu');
    expect(train.status).toBe('done');
    expect(stored).toEqual([2, 4]);
    // Without the clock's rule (an hour between stores) only the check at the end stores it.
    stored.length = 0;
    await trainState(store, () => (ms += 20_000), { now: () => ms, saveEveryMs: 3_600_000 }).start(
      inputs(),
      'cpu',
    );
    expect(stored).toEqual([4]);
  }, 120_000);

  it('refuses to go on with another model, keeping the paused run as it was', async () => {
    const store = memoryLoraRunStore();
    let first: LoraTrainState | undefined = undefined;
    first = trainState(store, (update) => update === 1 && first!.pause());
    await first.start(inputs(), 'cpu');
    const before = await store.load('test');

    const reloaded = trainState(store);
    await reloaded.restoreSaved();
    await reloaded.resume(
      inputs((base) => (base[100] = base[100]! + 0.5)),
      'cpu',
    );
    expect(reloaded.status).toBe('paused');
    expect(reloaded.error).toMatch(
      /trained on tiny-chat \(sha256:[0-9a-f]{12}\); the model loaded is tiny-chat \(sha256:[0-9a-f]{12}\): load the run's model/,
    );
    expect(reloaded.step).toBe(1);
    const after = await store.load('test');
    expect(after?.savedAt).toBe(before?.savedAt);

    // The right model then goes on.
    await reloaded.resume(inputs(), 'cpu');
    expect(reloaded.status).toBe('done');
  }, 120_000);

  it('ignores a damaged record, and discard forgets a stored run', async () => {
    const store = memoryLoraRunStore();
    let first: LoraTrainState | undefined = undefined;
    first = trainState(store, (update) => update === 1 && first!.pause());
    await first.start(inputs(), 'cpu');
    const record = (await store.load('test'))!;
    const damaged = structuredClone(record);
    damaged.checkpoints[1]!.run.policy.m = new Float32Array(3);
    await store.save('test', damaged);
    const reloaded = trainState(store);
    await reloaded.restoreSaved();
    expect(reloaded.status).toBe('idle');
    expect(reloaded.lines).toEqual([]);

    await store.save('test', record);
    const again = trainState(store);
    await again.restoreSaved();
    expect(again.status).toBe('paused');
    await again.discard();
    expect(again.status).toBe('idle');
    expect(await store.load('test')).toBeUndefined();
  }, 120_000);
});

describe('LoraTrainState live changes', () => {
  it('changes the run’s lr from the next update on, keeps it across a reload, refuses a bad one', async () => {
    const oneStore = memoryLoraRunStore();
    const oneUpdate = trainState(oneStore);
    oneUpdate.form = { ...oneUpdate.form, updates: 1 };
    await oneUpdate.start(inputs(), 'cpu');
    const afterOne = (await oneStore.load('test'))!.checkpoints[0]!.run.policy.params;

    const store = memoryLoraRunStore();
    let train: LoraTrainState | undefined = undefined;
    const errors: (string | undefined)[] = [];
    train = trainState(store, (update) => {
      if (update === 1) {
        void train!
          .setLearningRate(-1)
          .then(() => errors.push(train!.error))
          .then(() => train!.setLearningRate(1e-12))
          .then(() => errors.push(train!.error));
      }
      if (update === 3) train!.pause();
    });
    await train.start(inputs(), 'cpu');
    expect(train.status).toBe('paused');
    expect(errors[0]).toMatch(/lr must be a number in \(0, 1\]/);
    expect(errors[1]).toBeUndefined();
    // lr 1e-12 from update 2 on: the adapters stay (to 1e-9) where update 1 left them.
    const paused = (await store.load('test'))!.checkpoints[0]!.run.policy.params;
    expect(paused.length).toBe(afterOne.length);
    let drift = 0;
    for (let i = 0; i < paused.length; i++) {
      drift = Math.max(drift, Math.abs(paused[i]! - afterOne[i]!));
    }
    expect(drift).toBeLessThan(1e-9);
    const change = { step: 2, values: { lr: 1e-12 }, text: 'lr 1e-12' };
    expect(train.changes).toEqual([change]);
    // The form keeps the lr the run started with; the run says the one it has now.
    expect(train.form.lr).toBe(5e-3);
    expect(train.changedLr).toEqual({ value: 1e-12, step: 2 });

    const reloaded = trainState(store);
    expect(reloaded.changedLr).toBeUndefined();
    await reloaded.restoreSaved();
    expect(reloaded.changes).toEqual([change]);
    expect(reloaded.changedLr).toEqual({ value: 1e-12, step: 2 });
    expect(reloaded.holdsWorkers).toBe(false);
  }, 120_000);

  it('names the setting and its range for a refused value, and the run goes on', async () => {
    let train: LoraTrainState | undefined = undefined;
    let refused: string | undefined;
    train = trainState(memoryLoraRunStore(), (update) => {
      if (update === 1) {
        void train!.setLearningRate(Number.NaN).then(() => (refused = train!.error));
      }
    });
    train.form = { ...train.form, updates: 2 };
    await train.start(inputs(), 'cpu');
    expect(refused).toMatch(/lr must be a number in \(0, 1\], got NaN/);
    expect(train.status).toBe('done');
    expect(train.changes).toEqual([]);
  }, 120_000);
});

describe('LORA_TASKS', () => {
  it.each(LORA_TASKS.map((t) => [t.id, t] as const))(
    '%s builds with its options and its samples verify',
    (_, entry) => {
      const task = createTokenTask(entry.name, { ...entry.options });
      let state = 7;
      const random = () => (state = (state * 16807) % 2147483647) / 2147483647;
      for (let i = 0; i < 20; i++) {
        const sample = task.sample(random);
        expect(task.verify(sample, sample.answer)).toBe(1);
      }
      // Its run exports to TRL and verl with the task's reward.
      const exported = loraRunExport(
        {
          lr: 1e-4,
          promptsPerUpdate: 2,
          groupSize: 8,
          maxNewTokens: entry.maxNewTokens,
          task: { name: entry.name, options: { ...entry.options } },
        },
        { rank: 8, alpha: 16, targets: 'all-linear' },
      );
      expect(exported.ok, exported.ok ? '' : JSON.stringify(exported)).toBe(true);
    },
  );
});

describe('LORA_RECIPES', () => {
  it.each(LORA_RECIPES.map((r) => [r.id, r] as const))(
    '%s trains with its settings, and its TRL/verl export says so',
    async (id, recipe) => {
      const api = createLoraWorkerApi();
      const base = params.slice();
      await api.open({
        source: 'tiny-chat',
        spec,
        base,
        fingerprint: 'sha256:test',
        tokenizer: tokenizerFiles,
        task: { name: 'addition', options: { maxDigits: 1 } },
        recipe: id,
        rank: 2,
        alpha: 4,
        lr: 5e-3,
        promptsPerUpdate: 2,
        groupSize: 4,
        maxNewTokens: 4,
        seed: 1,
        backend: 'cpu',
      });
      const report = await api.update(false);
      expect(report.update).toBe(1);
      const { config, algorithm } = (await api.checkpoint()).run.trainer;
      expect(algorithm).toBe(recipe.algorithm);
      expect(config).toMatchObject(recipe.config);
      expect(report.strictAccuracy).toBeGreaterThanOrEqual(0);
      const out = loraRunExport(
        {
          lr: 5e-3,
          promptsPerUpdate: 2,
          groupSize: 4,
          maxNewTokens: 4,
          recipe: id,
          task: { name: 'addition', options: {} },
        },
        { rank: 2, alpha: 4, targets: 'all-linear' },
      );
      if (!out.ok) throw new Error(out.reason);
      if (id === 'dpo') {
        // verl has no DPO trainer; TRL's DPOTrainer takes the adapters as peft_config.
        expect(out.verl.ok).toBe(false);
        if (!out.trl.ok) throw new Error(out.trl.reason);
        const script = out.trl.files.find((f) => f.name.endsWith('.py'))!.text;
        expect(script).toContain('DPOConfig(');
        expect(script).toContain('peft_config');
        return;
      }
      if (!out.verl.ok) throw new Error('no verl export');
      const verl = out.verl.files.find((f) => f.name.endsWith('.sh'))!.text;
      const estimator = { rloo: 'rloo', 'reinforce++-baseline': 'reinforce_plus_plus_baseline' };
      expect(verl).toContain(
        `algorithm.adv_estimator=${estimator[id as keyof typeof estimator] ?? 'grpo'}`,
      );
      // TRL has no REINFORCE++: its export says so instead of writing another algorithm.
      expect(out.trl.ok).toBe(id !== 'reinforce++-baseline');
      if (!out.trl.ok) return;
      const script = out.trl.files.find((f) => f.name.endsWith('.py'))!.text;
      expect(script).toContain(id === 'rloo' ? 'RLOOConfig(' : 'GRPOConfig(');
      if (id === 'dr-grpo') expect(script).toMatch(/loss_type="dr_grpo"/);
      if (id === 'dapo') expect(script).toMatch(/epsilon_high=0\.28/);
    },
    60_000,
  );

  it('an unknown recipe is refused by name', async () => {
    expect(() => loraRecipe('ppo')).toThrow(
      /recipe must be one of grpo, dr-grpo, dapo, rloo, reinforce\+\+-baseline, dpo, got "ppo"/,
    );
  });
});
