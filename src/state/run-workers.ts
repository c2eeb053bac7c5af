/**
 * The lab's run workers, one per run: started (watched for death and hangs), given their run to
 * build with their turns at training, and ended. A worker that dies or hangs marks its run failed
 * and hands it back (`lost`); the run keeps its data. RunManager (runs.svelte.ts) decides when.
 */
import { proxy } from 'comlink';
import type { LabRun } from './lab-run.svelte';
import { resumeText } from './run-checkpoints';
import type { RunPort } from './run-port';
import type { RunTurns, TrainingSlots } from './training-slots';
import { guardApi, WorkerFailure } from '../worker/worker-failure';
import { HangWatch, trackCalls, watchRequests } from '../worker/worker-hang';
import type { RunCheckpoint } from '../worker/run-checkpoint';
import type { ReplayPlan, RunMessage } from '../worker/run-protocol';

export interface RunWorkersOptions {
  spawn: () => RunPort;
  /** Turns at training shared by the runs' workers; none: every worker trains freely. */
  slots?: TrainingSlots;
  /**
   * A message its run has just taken in (the manager saves and checkpoints after it, and holds a
   * lesson run to its goal); `before`: the run's updates before the message.
   */
  received(run: LabRun, message: RunMessage, before: number): void;
  /** The run's worker died or hung: the run is marked failed and has no worker any more. */
  lost(run: LabRun): void;
}

export class RunWorkers {
  /** Each worker's turns at training (closed when the worker ends). */
  private readonly turns = new WeakMap<RunPort, RunTurns>();
  /** Each worker's watch for hanging (worker-hang.ts): its messages are signs of life. */
  private readonly hangs = new WeakMap<RunPort, HangWatch>();

  constructor(private readonly options: RunWorkersOptions) {}

  /**
   * Starts a worker for the run. If it dies, or hangs (a call to it gets no sign of life for
   * minutes: worker-hang.ts), its calls (pending or later) reject instead of waiting for ever, and
   * the run is marked failed (lose).
   */
  spawn(run: LabRun): RunPort {
    const spawned = this.options.spawn();
    const failure = new WorkerFailure();
    const failed = (reason: string) => {
      hang.stop();
      if (run.port === port) this.lose(run, port, reason);
      else spawned.terminate(); // a worker being ended (its dispose hung): end it now
      failure.fail(new Error(run.failure === reason && run.error ? run.error : reason));
    };
    const hang = new HangWatch({ onHang: failed });
    const port: RunPort = {
      api: guardApi(trackCalls(spawned.api, hang), failure),
      terminate: () => {
        hang.stop();
        spawned.terminate();
      },
    };
    this.hangs.set(port, hang);
    spawned.onFailure?.(failed);
    run.port = port;
    run.failure = run.note = undefined; // a new worker says its own
    run.status = 'warming';
    return port;
  }

  /**
   * Builds the run in `port`'s worker; `plan`: the saved updates to replay (and `checkpoint`, where
   * they start from), for a run that has trained before.
   */
  async build(
    run: LabRun,
    port: RunPort,
    { plan, checkpoint }: { plan?: ReplayPlan; checkpoint?: RunCheckpoint } = {},
  ) {
    const hang = this.hangs.get(port);
    const listener = proxy((message: RunMessage) => {
      hang?.alive();
      // A refused or dead worker's late messages must not touch the run (or its successor).
      if (run.port !== port) return;
      const before = run.steps;
      run.receive(message);
      this.options.received(run, message, before);
    });
    try {
      const turns = this.options.slots?.forRun();
      if (turns) this.turns.set(port, turns);
      // Its waits for a turn are the page's doing, not silence of its own.
      const watched = turns && hang ? watchRequests(turns, hang) : turns;
      await port.api.createRun(run.spec, listener, plan, checkpoint, watched && proxy(watched));
    } catch (error) {
      if (run.status === 'warming') run.status = 'error';
      throw error;
    }
  }

  /** Frees the worker's model and ends it. */
  async end(port: RunPort): Promise<void> {
    try {
      await port.api.dispose();
    } catch {
      // The worker may already be gone; terminating it is all that is left.
    } finally {
      port.terminate();
      // A worker ended mid-slice or while waiting: its turn goes to the next run.
      this.turns.get(port)?.close();
      this.turns.delete(port);
    }
  }

  /**
   * The run's worker died: the run keeps its metrics, events and checkpoint, says why it stopped,
   * and starting it again brings it back in a fresh worker (from its checkpoint where it has one).
   */
  private lose(run: LabRun, port: RunPort, reason: string): void {
    run.port = undefined;
    port.terminate();
    this.turns.get(port)?.close();
    this.turns.delete(port);
    run.failure = reason;
    run.status = 'error';
    run.phase = undefined;
    run.error =
      `Its worker stopped (${reason}). Its ${run.steps} update${run.steps === 1 ? ' is' : 's are'} ` +
      `kept; Resume brings it back: it ${resumeText(run.steps, run.checkpointStep)}.`;
    this.options.lost(run);
  }
}
