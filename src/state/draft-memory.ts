/**
 * The "New run" form's last algorithm, environment, task and a new model's positions, kept in
 * localStorage so that a reload (or the next visit) opens the form where the user left it. Only
 * names are kept; RunDraft checks them against the catalog, so a stale or hand-edited entry falls
 * back to the defaults.
 */
import { POSITION_KINDS, type PositionKind } from '../models/transformer-config';

export interface DraftChoice {
  algo: string;
  env: string;
  task: string;
  positions: PositionKind;
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
    const positions = (parsed as Record<string, unknown>).positions;
    // Only a kind this build knows: anything else leaves the form's default.
    const known = POSITION_KINDS.find((kind) => kind === positions);
    if (known) out.positions = known;
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
