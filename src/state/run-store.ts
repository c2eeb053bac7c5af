/**
 * Runs kept across page loads, in IndexedDB: each run's spec, metric series, events and step
 * count — everything needed to show it again and to bring it back by replay (ReplayPlan). A
 * browser without IndexedDB (or one that refuses it, as some private modes do) gets a store that
 * keeps nothing and says why, so the lab still works.
 */
import type { RunEvent, RunSpec, Settings } from '../worker/run-protocol';

/** One metric of one run: x = update number, y = value (only updates that reported it). */
export interface Series {
  x: number[];
  y: number[];
}

export const STORED_RUN_VERSION = 1;

export interface StoredRun {
  version: typeof STORED_RUN_VERSION;
  id: string;
  label: string;
  color: string;
  spec: RunSpec;
  series: Record<string, Series>;
  events: RunEvent[];
  /** The config in force after the last update. */
  config: Settings;
  /** Updates done. */
  steps: number;
  /** The backend line it last trained on ('CPU — …', the WebGPU adapter), if it ever started. */
  backendLine?: string;
  savedAt: string;
}

export interface RunStorePort {
  /** Why runs are not kept, when they are not (shown in the lab). */
  readonly unavailable?: string;
  list(): Promise<StoredRun[]>;
  save(run: StoredRun): Promise<void>;
  remove(id: string): Promise<void>;
}

const DB_NAME = 'agent-rl-lab';
const STORE = 'runs';

function request<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error ?? new Error('IndexedDB request failed'));
  });
}

function openDb(): Promise<IDBDatabase> {
  const open = indexedDB.open(DB_NAME, 1);
  open.onupgradeneeded = () => {
    if (!open.result.objectStoreNames.contains(STORE)) {
      open.result.createObjectStore(STORE, { keyPath: 'id' });
    }
  };
  return request(open);
}

/** A store that keeps nothing (no IndexedDB here), with the reason. */
export function memorylessStore(unavailable: string): RunStorePort {
  return {
    unavailable,
    list: async () => [],
    save: async () => {},
    remove: async () => {},
  };
}

/** The IndexedDB store, or a memoryless one where IndexedDB cannot be opened. */
export async function openRunStore(): Promise<RunStorePort> {
  if (typeof indexedDB === 'undefined') {
    return memorylessStore('this browser has no IndexedDB: runs last until the page closes');
  }
  let db: IDBDatabase;
  try {
    db = await openDb();
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    return memorylessStore(`IndexedDB refused (${why}): runs last until the page closes`);
  }
  const tx = (mode: IDBTransactionMode) => db.transaction(STORE, mode).objectStore(STORE);
  return {
    async list() {
      const all = (await request(tx('readonly').getAll())) as StoredRun[];
      return all
        .filter((r) => r.version === STORED_RUN_VERSION)
        .sort((a, b) => runNumber(a.id) - runNumber(b.id));
    },
    async save(run) {
      await request(tx('readwrite').put(run));
    },
    async remove(id) {
      await request(tx('readwrite').delete(id));
    },
  };
}

/** The n of 'run-n' (0 for other ids). */
export function runNumber(id: string): number {
  const n = Number(id.replace(/^run-/, ''));
  return Number.isInteger(n) ? n : 0;
}
