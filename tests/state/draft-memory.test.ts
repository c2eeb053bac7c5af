import { describe, expect, it } from 'vitest';
import { DRAFT_MEMORY_KEY, recallChoice, rememberChoice } from '../../src/state/draft-memory';

function memoryStore(initial: Record<string, string> = {}) {
  const items = new Map(Object.entries(initial));
  return {
    getItem: (key: string) => items.get(key) ?? null,
    setItem: (key: string, value: string) => void items.set(key, value),
  };
}

describe('draft memory', () => {
  it('gives back what it kept', () => {
    const store = memoryStore();
    const choice = {
      algo: 'grpo',
      env: 'cliffwalking',
      task: 'reverse',
      positions: 'rotary',
    } as const;
    rememberChoice(store, choice);
    expect(recallChoice(store)).toEqual(choice);
  });

  it.each([
    ['nothing kept', undefined, {}],
    ['not JSON', '{algo', {}],
    ['not an object', '"grpo"', {}],
    ['null', 'null', {}],
    ['wrong types dropped', '{"algo":3,"task":"copy","env":null}', { task: 'copy' }],
    ['a known position kind', '{"positions":"learned"}', { positions: 'learned' }],
    ['an unknown position kind dropped', '{"positions":"alibi","task":"copy"}', { task: 'copy' }],
    ['a non-string position kind dropped', '{"positions":["rotary"]}', {}],
  ])('reads %s as %j', (_, raw, expected) => {
    const store = memoryStore(raw === undefined ? {} : { [DRAFT_MEMORY_KEY]: raw });
    expect(recallChoice(store)).toEqual(expected);
  });

  it('survives blocked storage', () => {
    const blocked = {
      getItem: () => {
        throw new Error('SecurityError');
      },
      setItem: () => {
        throw new Error('QuotaExceededError');
      },
    };
    expect(recallChoice(blocked)).toEqual({});
    expect(() =>
      rememberChoice(blocked, { algo: 'a', env: '', task: '', positions: 'learned' }),
    ).not.toThrow();
    expect(recallChoice(undefined)).toEqual({});
  });
});
