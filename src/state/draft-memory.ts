/**
 * The "New run" form's last algorithm, environment and task, kept in localStorage so that a reload
 * (or the next visit) opens the form where the user left it. Only names are kept; RunDraft checks
 * them against the catalog, so a stale or hand-edited entry falls back to the defaults.
 */
export interface DraftChoice {
  algo: string;
  env: string;
  task: string;
}

export const DRAFT_MEMORY_KEY = 'agent-rl-lab/new-run';

type Store = Pick<Storage, 'getItem' | 'setItem'>;

/** The remembered choice, or {} when there is none, it cannot be read, or storage is blocked. */
export function recallChoice(store: Store | undefined): Partial<DraftChoice> {
  try {
    const raw = store?.getItem(DRAFT_MEMORY_KEY);
    const parsed: unknown = raw ? JSON.parse(raw) : undefined;
    if (typeof parsed !== 'object' || parsed === null) return {};
    const out: Partial<DraftChoice> = {};
    for (const key of ['algo', 'env', 'task'] as const) {
      const value = (parsed as Record<string, unknown>)[key];
      if (typeof value === 'string') out[key] = value;
    }
    return out;
  } catch {
    return {};
  }
}

/** Keeps the choice; a full or blocked storage only costs the memory, never the form. */
export function rememberChoice(store: Store | undefined, choice: DraftChoice): void {
  try {
    store?.setItem(DRAFT_MEMORY_KEY, JSON.stringify(choice));
  } catch {
    // Nothing to do: the form works without the memory.
  }
}
