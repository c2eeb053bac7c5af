/**
 * The LoRA-GRPO panel's run, kept across page loads in IndexedDB (a database of its own,
 * `agent-rl-lab-lora`, so the lab's run store keeps its version): the form it ran with, both
 * charts' lines, and the run's and the control's checkpoints — adapters, their AdamW state and
 * the trainer's — with the base model named by its source and weights fingerprint. The base's
 * weights are never stored: to go on, the reader loads the same model again, and a model whose
 * fingerprint differs is refused. One record per key (the panel keeps its latest run).
 *
 * A record comes back from an earlier visit, maybe an older lab: storedLoraRunFrom checks every
 * part and gives undefined for one that does not fit, which the panel then ignores.
 */
import { readModelSpec, type ModelSpec } from '../models/model-spec';
import { errorText } from '../util/error-text';
import { isRecord } from '../util/json-checks';
import { loraCheckpointProblem, type LoraCheckpoint } from '../worker/lora-protocol';

export const STORED_LORA_RUN_VERSION = 1;

/** The key the "Bring a model" page keeps its run under. */
export const MODELS_PAGE_LORA_KEY = 'models-panel';

/** One line of the chart: batch strict accuracy per update, held-out success at its checks. */
export interface StoredLoraLine {
  label: string;
  batch: { x: number[]; y: number[] };
  heldOut: { x: number[]; y: number[] };
  seconds: number;
}

export interface StoredLoraRun {
  version: typeof STORED_LORA_RUN_VERSION;
  /** The panel's form when the run started (task id, rank, lr, prompts, updates, seed). */
  form: Record<string, number | string>;
  /** The base model: its name for people, its architecture (to write the adapter's files). */
  source: string;
  spec: ModelSpec;
  fingerprint: string;
  parameters: number;
  device?: string;
  /** The run's line, then the control's. */
  lines: StoredLoraLine[];
  /** The run's checkpoint, then the control's, both at the same update. */
  checkpoints: LoraCheckpoint[];
  /** Every update of the form done. */
  finished: boolean;
  savedAt: string;
}

export interface LoraRunStorePort {
  /** Why runs are not kept, when they are not. */
  readonly unavailable?: string;
  load(key: string): Promise<StoredLoraRun | undefined>;
  save(key: string, run: StoredLoraRun): Promise<void>;
  remove(key: string): Promise<void>;
}

const isNumbers = (value: unknown): value is number[] =>
  Array.isArray(value) && value.every((x) => typeof x === 'number');

function seriesProblem(value: unknown, name: string): string | undefined {
  if (!isRecord(value) || !isNumbers(value.x) || !isNumbers(value.y)) {
    return `${name} must hold numbers x and y`;
  }
  return value.x.length === value.y.length ? undefined : `${name}: x and y differ in length`;
}

/** The record of a run as it is now, stamped with this version and the time. */
export function storedLoraRun(run: Omit<StoredLoraRun, 'version' | 'savedAt'>): StoredLoraRun {
  return { version: STORED_LORA_RUN_VERSION, ...run, savedAt: new Date().toISOString() };
}

/** What is wrong with `value` as a stored run of this version, or undefined. Never throws. */
export function storedLoraRunProblem(value: unknown): string | undefined {
  if (!isRecord(value)) return 'is not an object';
  if (value.version !== STORED_LORA_RUN_VERSION) return `version ${String(value.version)}`;
  const { form, source, spec, fingerprint, parameters, lines, checkpoints, finished } = value;
  if (!isRecord(form)) return 'form must be an object';
  if (typeof source !== 'string' || typeof fingerprint !== 'string') {
    return 'source and fingerprint must be text';
  }
  try {
    readModelSpec(spec);
  } catch (error) {
    return `spec: ${errorText(error)}`;
  }
  if (!Number.isInteger(parameters)) return 'parameters must be a whole number';
  if (typeof finished !== 'boolean') return 'finished must be true or false';
  if (!Array.isArray(lines) || lines.length !== 2) return 'lines must be the run and its control';
  for (const [i, line] of lines.entries()) {
    if (!isRecord(line) || typeof line.label !== 'string' || typeof line.seconds !== 'number') {
      return `lines[${i}] must have a label and seconds`;
    }
    const problem =
      seriesProblem(line.batch, `lines[${i}].batch`) ??
      seriesProblem(line.heldOut, `lines[${i}].heldOut`);
    if (problem) return problem;
  }
  if (!Array.isArray(checkpoints) || checkpoints.length !== 2) {
    return 'checkpoints must be the run and its control';
  }
  for (const [i, checkpoint] of checkpoints.entries()) {
    const problem = loraCheckpointProblem(checkpoint);
    if (problem) return `checkpoints[${i}]: ${problem}`;
    if (checkpoint.base.fingerprint !== fingerprint) {
      return `checkpoints[${i}] belongs to another base`;
    }
  }
  const steps = checkpoints.map((c: LoraCheckpoint) => c.run.step);
  if (steps[0] !== steps[1]) return 'the two checkpoints are at different updates';
  return undefined;
}

/** `value` as a stored run, or undefined (with no throw) when it is not one. */
export function storedLoraRunFrom(value: unknown): StoredLoraRun | undefined {
  return storedLoraRunProblem(value) === undefined ? (value as StoredLoraRun) : undefined;
}

/** A store that keeps runs in memory only (tests, and the page without IndexedDB). */
export function memoryLoraRunStore(unavailable?: string): LoraRunStorePort {
  const runs = new Map<string, StoredLoraRun>();
  return {
    ...(unavailable ? { unavailable } : {}),
    load: async (key) => storedLoraRunFrom(structuredClone(runs.get(key))),
    save: async (key, run) => void runs.set(key, structuredClone(run)),
    remove: async (key) => void runs.delete(key),
  };
}

export const LORA_DB_NAME = 'agent-rl-lab-lora';
const LORA_DB_VERSION = 1;
const RUNS = 'runs';

function request<T>(req: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error ?? new Error('IndexedDB request failed'));
  });
}

/** The IndexedDB store, or one that keeps runs only until the page closes (and says why). */
export async function openLoraRunStore(): Promise<LoraRunStorePort> {
  if (typeof indexedDB === 'undefined') {
    return memoryLoraRunStore('this browser has no IndexedDB: the run lasts until the page closes');
  }
  let db: IDBDatabase;
  try {
    const open = indexedDB.open(LORA_DB_NAME, LORA_DB_VERSION);
    open.onupgradeneeded = () => {
      if (!open.result.objectStoreNames.contains(RUNS)) open.result.createObjectStore(RUNS);
    };
    db = await request(open);
  } catch (error) {
    return memoryLoraRunStore(
      `IndexedDB refused (${errorText(error)}): the run lasts until the page closes`,
    );
  }
  db.onversionchange = () => db.close();
  const store = (mode: IDBTransactionMode) => db.transaction(RUNS, mode).objectStore(RUNS);
  return {
    load: async (key) => storedLoraRunFrom(await request(store('readonly').get(key))),
    save: async (key, run) => void (await request(store('readwrite').put(run, key))),
    remove: async (key) => void (await request(store('readwrite').delete(key))),
  };
}
