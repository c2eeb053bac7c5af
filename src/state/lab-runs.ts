/** The app's one RunManager, wired to real workers; it outlives page navigation. */
import { startLabWorker, startRunWorker } from '../worker/client';
import { RunManager } from './runs.svelte';

let shared: RunManager | undefined;

export function labRuns(): RunManager {
  shared ??= new RunManager({ catalog: startLabWorker(), spawn: startRunWorker });
  return shared;
}
