/// <reference lib="webworker" />
/** A run worker: hosts one training run (see run-host.ts); the main thread never trains. */
import { expose } from 'comlink';
import { createRunHost } from './run-host';
import type { RunWorkerApi } from './run-protocol';

const api: RunWorkerApi = createRunHost();
expose(api);
