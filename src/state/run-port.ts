/**
 * What the lab's run state needs of the workers: a run worker (the comlink proxy in the app, a
 * fake in tests) and the catalog with its spec checks (the lab worker in the app).
 */
import type { RunCheckpoint } from '../worker/run-checkpoint';
import type {
  FieldError,
  ReplayPlan,
  RunCatalog,
  RunMessage,
  RunSpec,
  RunWorkerApi,
  TrainingTurns,
} from '../worker/run-protocol';

/** What the manager needs of a run worker (the comlink proxy in the app, a fake in tests). */
export interface RunPort {
  api: Omit<RunWorkerApi, 'createRun'> & {
    createRun(
      spec: RunSpec,
      listener: (message: RunMessage) => void,
      replay?: ReplayPlan,
      checkpoint?: RunCheckpoint,
      turns?: TrainingTurns,
    ): Promise<void>;
  };
  terminate(): void;
  /**
   * Calls `listener` once if the worker dies (src/worker/worker-failure.ts): its calls would never
   * settle. None: the worker is not watched.
   */
  onFailure?(listener: (reason: string) => void): void;
}

/** Where the catalog and spec checks come from (the lab worker in the app). */
export interface CatalogPort {
  runCatalog(): Promise<RunCatalog>;
  checkRunSpec(spec: RunSpec): Promise<FieldError[]>;
}
