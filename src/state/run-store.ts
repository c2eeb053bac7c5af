/**
 * Runs kept across page loads, in IndexedDB: each run's spec, metric series, events and step
 * count — everything needed to show it again and to bring it back by replay (ReplayPlan) — and,
 * for language-model runs, the latest checkpoint (run-checkpoint.ts), which spares most of that
 * replay. A browser without IndexedDB (or one that refuses it, as some private modes do) gets a
 * store that keeps nothing and says why, so the lab still works.
 */
import { checkpointFromRecord, RUN_CHECKPOINT_VERSION } from '../worker/run-checkpoint';
import type { LessonGoal } from './lesson-goal';
import type { CheckpointStorePort } from './run-checkpoints';
import {
  type Inspection,
  type KeptInspection,
  type RunEvent,
  type RunSpec,
  type Settings,
} from '../worker/run-protocol';
import { errorText } from '../util/error-text';

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
  /**
   * The lesson widget that opened it ('lesson-id#widget-id'), if one did: the widget shows this
   * run again when the reader comes back, after a reload too.
   */
  origin?: string;
  /** A lesson run's check and budget (lesson-goal.ts), and the update its check first passed at. */
  goal?: LessonGoal;
  checkPassedAt?: number;
  /** Its last update's samples (kept-inspection.ts, bounded), for the inspector once stored. */
  inspection?: Inspection;
  /** Earlier updates kept for the inspector (LabRun.kept), each bounded like `inspection`. */
  kept?: KeptInspection[];
  savedAt: string;
}

export interface RunStorePort {
  /** Why runs are not kept, when they are not (shown in the lab). */
  readonly unavailable?: string;
  list(): Promise<StoredRun[]>;
  save(run: StoredRun): Promise<void>;
  remove(id: string): Promise<void>;
}

/** The runs and their checkpoints, in one database. */
export type RunStore = RunStorePort & CheckpointStorePort;

export const DB_NAME = 'agent-rl-lab';
/** 1: runs. 2: + checkpoints (an upgrade adds the store and keeps the runs). */
export const DB_VERSION = 2;
const STORE = 'runs';
/** Key: the run's id (out of line); value: its RunCheckpoint. */
const CHECKPOINTS = 'checkpoints';
/** Index on [version, step]: a checkpoint's step is read without its weights. */
const BY_STEP = 'version-step';

function request<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error ?? new Error('IndexedDB request failed'));
  });
}

/** Creates whichever store is missing: a database of version 1 keeps its runs. */
function upgrade(db: IDBDatabase): void {
  if (!db.objectStoreNames.contains(STORE)) db.createObjectStore(STORE, { keyPath: 'id' });
  if (!db.objectStoreNames.contains(CHECKPOINTS)) {
    db.createObjectStore(CHECKPOINTS).createIndex(BY_STEP, ['version', 'step']);
  }
}

/** How long an open may stay blocked by another tab before the lab goes on without storage. */
const BLOCKED_MS = 3000;

async function openDb(): Promise<IDBDatabase> {
  const open = indexedDB.open(DB_NAME, DB_VERSION);
  open.onupgradeneeded = () => upgrade(open.result);
  const db = await new Promise<IDBDatabase>((resolve, reject) => {
    let gaveUp = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    // Blocked: another tab holds an older version open. A tab of this lab closes it at once (see
    // onversionchange below), once its transaction in flight ends; an older lab's tab never
    // does, and waiting on it would leave the lab without its runs.
    open.onblocked = () => {
      timer ??= setTimeout(() => {
        gaveUp = true;
        reject(new Error('another tab of the lab holds an older version open: close it, reload'));
      }, BLOCKED_MS);
    };
    request(open).then(
      (opened) => {
        clearTimeout(timer);
        if (gaveUp) opened.close();
        else resolve(opened);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      },
    );
  });
  // A newer lab in another tab upgrades the database: let it (this tab's next save then fails
  // with a note instead of blocking that tab).
  db.onversionchange = () => db.close();
  return db;
}

/** A store that keeps nothing (no IndexedDB here), with the reason. */
export function memorylessStore(unavailable: string): RunStore {
  return {
    unavailable,
    list: async () => [],
    save: async () => {},
    remove: async () => {},
    saveCheckpoint: async () => {},
    loadCheckpoint: async () => undefined,
    removeCheckpoint: async () => {},
    checkpointSteps: async () => new Map(),
  };
}

/** The IndexedDB store, or a memoryless one where IndexedDB cannot be opened. */
export async function openRunStore(): Promise<RunStore> {
  if (typeof indexedDB === 'undefined') {
    return memorylessStore('this browser has no IndexedDB: runs last until the page closes');
  }
  let db: IDBDatabase;
  try {
    db = await openDb();
  } catch (error) {
    const why = errorText(error);
    return memorylessStore(`IndexedDB refused (${why}): runs last until the page closes`);
  }
  const tx = (mode: IDBTransactionMode, store = STORE) =>
    db.transaction(store, mode).objectStore(store);
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
    /** The run and its checkpoint, in one transaction. */
    async remove(id) {
      const both = db.transaction([STORE, CHECKPOINTS], 'readwrite');
      both.objectStore(STORE).delete(id);
      await request(both.objectStore(CHECKPOINTS).delete(id));
    },
    async saveCheckpoint(id, checkpoint) {
      await request(tx('readwrite', CHECKPOINTS).put(checkpoint, id));
    },
    async loadCheckpoint(id) {
      return checkpointFromRecord(await request(tx('readonly', CHECKPOINTS).get(id)));
    },
    async removeCheckpoint(id) {
      await request(tx('readwrite', CHECKPOINTS).delete(id));
    },
    async checkpointSteps() {
      const index = tx('readonly', CHECKPOINTS).index(BY_STEP);
      const only = IDBKeyRange.bound(
        [RUN_CHECKPOINT_VERSION, 0],
        [RUN_CHECKPOINT_VERSION, Infinity],
      );
      const steps = new Map<string, number>();
      // A key cursor walks the index alone: no checkpoint's weights are read.
      const cursor = index.openKeyCursor(only);
      await new Promise<void>((resolve, reject) => {
        cursor.onerror = () => reject(cursor.error ?? new Error('IndexedDB cursor failed'));
        cursor.onsuccess = () => {
          const at = cursor.result;
          if (!at) return resolve();
          const step = (at.key as [number, number])[1];
          if (typeof at.primaryKey === 'string') steps.set(at.primaryKey, step);
          at.continue();
        };
      });
      return steps;
    },
  };
}

/**
 * The IndexedDB store, opened on first use (the lab's RunManager is built before anything is
 * read); `unavailable` is known once it has been opened.
 */
export function lazyRunStore(open: () => Promise<RunStore> = openRunStore): RunStore {
  let opened: Promise<RunStore> | undefined;
  let note: string | undefined;
  const store = () =>
    (opened ??= open().then((s) => {
      note = s.unavailable;
      return s;
    }));
  return {
    get unavailable() {
      return note;
    },
    list: async () => (await store()).list(),
    save: async (run) => (await store()).save(run),
    remove: async (id) => (await store()).remove(id),
    saveCheckpoint: async (id, checkpoint) => (await store()).saveCheckpoint(id, checkpoint),
    loadCheckpoint: async (id) => (await store()).loadCheckpoint(id),
    removeCheckpoint: async (id) => (await store()).removeCheckpoint(id),
    checkpointSteps: async () => (await store()).checkpointSteps(),
  };
}

/** The n of 'run-n' (0 for other ids). */
export function runNumber(id: string): number {
  const n = Number(id.replace(/^run-/, ''));
  return Number.isInteger(n) ? n : 0;
}
