/** Starts the lab worker and returns its typed comlink proxy. */
import { wrap, type Remote } from 'comlink';
import type { LabWorkerApi } from './protocol';

export function startLabWorker(): Remote<LabWorkerApi> {
  const worker = new Worker(new URL('./lab.worker.ts', import.meta.url), {
    type: 'module',
    name: 'lab',
  });
  return wrap<LabWorkerApi>(worker);
}
