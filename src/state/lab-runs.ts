/** The app's one RunManager, wired to real workers and IndexedDB; it outlives page navigation. */
import { startLabWorker, startRunWorker } from '../worker/client';
import { openRunStore, type RunStorePort } from './run-store';
import { RunManager } from './runs.svelte';

let shared: RunManager | undefined;

/** The IndexedDB store, opened on first use. */
function lazyStore(): RunStorePort {
  let opened: Promise<RunStorePort> | undefined;
  let note: string | undefined;
  const store = () =>
    (opened ??= openRunStore().then((s) => {
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
  };
}

export function labRuns(): RunManager {
  if (!shared) {
    shared = new RunManager({
      catalog: startLabWorker(),
      spawn: startRunWorker,
      store: lazyStore(),
    });
    void shared.restore();
  }
  return shared;
}
