/** The app's one RunManager, wired to real workers and IndexedDB; it outlives page navigation. */
import { startLabWorker, startRunWorker } from '../worker/client';
import { lazyRunStore } from './run-store';
import { RunManager } from './runs.svelte';
import { defaultCapacity, TrainingSlots } from './training-slots';

let shared: RunManager | undefined;

export function labRuns(): RunManager {
  if (!shared) {
    // One IndexedDB database, opened on first use: the runs, and the language-model runs'
    // latest checkpoints (so a stored run resumes without replaying every update).
    const store = lazyRunStore();
    shared = new RunManager({
      catalog: startLabWorker(),
      spawn: startRunWorker,
      store,
      checkpoints: store,
      // Runs take turns so that one core stays free for the page (see training-slots.ts).
      slots: new TrainingSlots(defaultCapacity(navigator.hardwareConcurrency)),
    });
    void shared.restore();
  }
  return shared;
}
