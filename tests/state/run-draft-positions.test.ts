/**
 * The new-run form's positions choice (RunDraft.positions): learned unless picked, in the spec
 * only for a rotary new model, and out of it for a start from weights, which brings its own.
 * (Beside tests/state/run-draft.test.ts, which covers the rest of the draft.)
 */
import { describe, expect, it } from 'vitest';
import { RunDraft } from '../../src/state/run-draft.svelte';
import { checkRunSpec, runCatalog } from '../../src/worker/run-spec';

describe('RunDraft: a new model’s positions', () => {
  const catalog = runCatalog();

  /** A grpo draft on reverse from a new model (reverse's recommended start is a shipped one). */
  function newModelDraft(): RunDraft {
    const draft = new RunDraft(catalog, { algo: 'grpo', task: 'reverse' });
    draft.selectStart('new');
    return draft;
  }

  it('is learned by default, and its spec reads as before (no positions field)', () => {
    const draft = newModelDraft();
    expect(draft.positions).toBe('learned');
    expect('positions' in draft.spec).toBe(false);
  });

  it('puts rotary positions in the spec of a new model, a spec the worker accepts', () => {
    const draft = newModelDraft();
    draft.positions = 'rotary';
    expect(draft.spec.positions).toBe('rotary');
    expect(checkRunSpec(draft.spec)).toEqual([]);
    // Learned again: the field goes, as in a spec from before.
    draft.positions = 'learned';
    expect('positions' in draft.spec).toBe(false);
  });

  it('leaves positions out for a start from weights, and keeps the choice for a new model', () => {
    const draft = newModelDraft();
    draft.positions = 'rotary';
    draft.selectStart('shipped:reverse');
    expect(draft.spec.init).toEqual({ kind: 'shipped', model: 'reverse' });
    expect('positions' in draft.spec).toBe(false);
    draft.selectStart('file');
    expect('positions' in draft.spec).toBe(false);
    draft.selectStart('new');
    expect(draft.spec.positions).toBe('rotary');
  });

  it('has no positions for an environment algorithm', () => {
    const draft = new RunDraft(catalog, { algo: 'q-learning', env: 'cliffwalking' });
    draft.positions = 'rotary';
    expect('positions' in draft.spec).toBe(false);
  });

  it('starts from a remembered choice (draft-memory.ts) and gives it back to be remembered', () => {
    const draft = new RunDraft(catalog, { algo: 'grpo', task: 'reverse', positions: 'rotary' });
    draft.selectStart('new');
    expect(draft.spec.positions).toBe('rotary');
    expect(draft.choice.positions).toBe('rotary');
    draft.positions = 'learned';
    expect(draft.choice.positions).toBe('learned');
  });
});
