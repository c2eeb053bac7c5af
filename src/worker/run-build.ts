/**
 * A run's trainer built from its spec, with what the run saves through: its checkpoint taker and
 * ONNX exporter (and, for a language model, the model to free). An environment run is built at
 * once; a language model's warm-up and reward model train on the lab's turns. A replay then
 * brings the trainer to the saved update.
 */
import { algorithm } from '../rl/registry';
import type { Trainer } from '../rl/trainer';
import { envCheckpointTaker, resumeEnvRun } from './env-checkpoint';
import { envOnnxExporter } from './env-export';
import { setUpLmRun, type LmRun, type LmRunOptions } from './lm-setup';
import { checkpointProblem, type RunCheckpoint } from './run-checkpoint';
import type { ReplayPlan, RunMessage, RunSpec, Settings } from './run-protocol';
import type { RunTurns } from './run-turns';

/** A built run: the trainer and how to save it and free it. */
export interface BuiltRun {
  trainer: Trainer<Settings>;
  /** Takes a checkpoint (between updates); undefined where the algorithm has none. */
  checkpoint: LmRun['checkpoint'] | undefined;
  /** Exports the model as ONNX; undefined where there is no model to export. */
  exportOnnx: (() => Promise<Uint8Array>) | undefined;
  /** Frees the model (GPU buffers); nothing to free for an environment run. */
  dispose(): void;
  /** Whether the inspector keeps earlier updates of this run (language models). */
  keepsUpdates: boolean;
}

export const macrotask = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** The checks a checkpoint passes before any model is built. */
export function checkCheckpoint(checkpoint: RunCheckpoint, replay: ReplayPlan | undefined): void {
  const problem = checkpointProblem(checkpoint);
  if (problem) throw new Error(`checkpoint: ${problem}`);
  const target = replay?.steps ?? checkpoint.step;
  if (checkpoint.step > target) {
    throw new Error(`checkpoint: taken at update ${checkpoint.step}, after the run's ${target}`);
  }
}

/** What building needs from the host: its messages, its turns, and the language-model options. */
export interface BuildContext {
  emit(message: RunMessage): void;
  turns: RunTurns;
  lm: LmRunOptions | undefined;
}

/** Builds the trainer for `spec`, from `checkpoint` if one is given. */
export async function buildRun(
  spec: RunSpec,
  checkpoint: RunCheckpoint | undefined,
  { emit, turns, lm }: BuildContext,
): Promise<BuiltRun> {
  const algo = algorithm(spec.algo);
  if (algo.family === 'env') {
    const created = algo.create(spec.env as never, spec.config, spec.seed);
    if (checkpoint) resumeEnvRun(created, spec.algo, checkpoint);
    emit({ type: 'backend', kind: 'cpu', line: 'CPU — environment algorithms run on the CPU' });
    return {
      trainer: created,
      checkpoint: envCheckpointTaker(created),
      exportOnnx: envOnnxExporter(created),
      dispose: () => {},
      keepsUpdates: false,
    };
  }
  // The warm-up and a reward model train like a run: on turns, in slices.
  const run = await turns.on((yieldPoint) =>
    setUpLmRun(spec, algo, { ...lm, yieldPoint, emit, resume: checkpoint }),
  );
  return {
    trainer: run.trainer,
    checkpoint: run.checkpoint,
    exportOnnx: run.exportOnnx,
    dispose: run.dispose,
    keepsUpdates: true,
  };
}

/**
 * Brings the run to update `plan.steps` with the recorded live changes (see ReplayPlan), from
 * where it is: update 0, or a checkpoint's step.
 */
export async function replayRun(
  active: Trainer<Settings>,
  plan: ReplayPlan,
  { emit, turns }: BuildContext,
): Promise<void> {
  if (active.step >= plan.steps) return;
  let lastReport = performance.now();
  await turns.on(async (yieldPoint) => {
    for (let step = active.step + 1; step <= plan.steps; step++) {
      for (const change of plan.changes) {
        if (change.step === step) active.setHyperparams(change.changes);
      }
      await active.update();
      if (performance.now() - lastReport > 200 || step === plan.steps) {
        emit({ type: 'replay', done: step, total: plan.steps });
        lastReport = performance.now();
        await macrotask();
      }
      if (step < plan.steps) await yieldPoint();
    }
  });
}
