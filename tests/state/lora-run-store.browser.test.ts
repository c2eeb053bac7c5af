/**
 * The LoRA panel's store in Chromium's IndexedDB: a run saved, read back after the database is
 * opened again (its float arrays intact), replaced, removed; a record that does not fit is read
 * as none.
 */
import { describe, expect, it } from 'vitest';
import {
  openLoraRunStore,
  storedLoraRun,
  type StoredLoraRun,
} from '../../src/state/lora-run-store';
import { RUN_CHECKPOINT_VERSION } from '../../src/worker/run-checkpoint';
import type { LoraCheckpoint } from '../../src/worker/lora-protocol';
import { tinyLlamaSpec } from '../support/tiny-llama-specs';

const FINGERPRINT = `sha256:${'0f'.repeat(32)}`;

function checkpoint(step: number, shift: number): LoraCheckpoint {
  return {
    base: { source: 'org/model', fingerprint: FINGERPRINT },
    lora: { rank: 2, alpha: 4, targets: ['q_proj'] },
    run: {
      version: RUN_CHECKPOINT_VERSION,
      step,
      backend: 'cpu',
      policy: {
        params: new Float32Array([0.5 + shift, -1.25, 3]),
        m: new Float32Array([0.01, 0.02, 0.03]),
        v: new Float32Array([1e-4, 2e-4, 3e-4]),
        stats: new Float32Array([0.1, 1, 1, step]),
      },
      trainer: {
        algorithm: 'grpo',
        step,
        config: { lr: 5e-3 },
        events: [],
        health: { healthy: true },
        skippedInARow: 0,
        random: { prompts: step * 2 },
      },
    },
    seconds: 1.5,
  };
}

function record(step: number): StoredLoraRun {
  const line = (label: string) => ({
    label,
    batch: { x: [1, 2].slice(0, step), y: [0.25, 0.5].slice(0, step) },
    heldOut: { x: [0], y: [0.125] },
    seconds: 1.5,
  });
  return storedLoraRun({
    form: { task: 'addition', rank: 2, updates: 10 },
    source: 'org/model',
    spec: tinyLlamaSpec('llama'),
    fingerprint: FINGERPRINT,
    parameters: 3,
    lines: [line('LoRA-GRPO'), line('control')],
    checkpoints: [checkpoint(step, 0), checkpoint(step, 1)],
    finished: false,
  });
}

describe('openLoraRunStore (IndexedDB)', () => {
  it('keeps a run across a re-open, replaces and removes it', async () => {
    const first = await openLoraRunStore();
    expect(first.unavailable).toBeUndefined();
    await first.save('k', record(1));
    await first.save('k', record(2));
    const again = await openLoraRunStore();
    const loaded = await again.load('k');
    expect({ ...loaded, savedAt: '' }).toEqual({ ...record(2), savedAt: '' });
    expect(loaded!.checkpoints[1]!.run.policy.params).toBeInstanceOf(Float32Array);
    expect(Array.from(loaded!.checkpoints[1]!.run.policy.params)).toEqual([1.5, -1.25, 3]);
    await again.remove('k');
    expect(await again.load('k')).toBeUndefined();
  });

  it('reads a record that does not fit as none', async () => {
    const store = await openLoraRunStore();
    const bad = record(2);
    bad.checkpoints[0]!.run.step = 1; // the two checkpoints disagree
    await store.save('bad', bad);
    expect(await store.load('bad')).toBeUndefined();
    await store.remove('bad');
  });
});
