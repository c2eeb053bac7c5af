/**
 * The LoRA worker's API (lora-protocol.ts) as a plain object: lora.worker.ts exposes it to the
 * page; tests call it in-process. Each call to createLoraWorkerApi is one run's worker.
 */
import { transfer } from 'comlink';
import { chatTokenizer } from '../agents/chat-task';
import { createTokenTask } from '../agents/token-task-registry';
import { HfTokenizer } from '../models/hf/hf-tokenizer';
import type { GrpoConfig } from '../rl/grpo-config';
import type { DpoConfig } from '../rl/dpo';
import { LoraGrpoSession, loraDpoConfig, loraGrpoConfig } from '../rl/lora-grpo-session';
import { loraGpuPolicy } from './lora-gpu';
import { LORA_MODULES } from '../models/hf/llama-lora';
import { promptLengthBound } from '../agents/prompt-tokens';
import { shortFingerprint } from '../models/weights-fingerprint';
import {
  loraCheckpointProblem,
  type LoraCheckpoint,
  type LoraRunReport,
  type LoraRunRequest,
  type LoraWorkerApi,
} from './lora-protocol';
import { loraRecipe } from './lora-recipes';
import { RUN_CHECKPOINT_VERSION } from './run-checkpoint';

/** The trainer's settings: the recipe's algorithm, its changes, the request's batch and lr. */
function trainerSettings(request: LoraRunRequest): { grpo: GrpoConfig } | { dpo: DpoConfig } {
  const recipe = loraRecipe(request.recipe ?? 'grpo');
  return recipe.algorithm === 'dpo'
    ? { dpo: loraDpoConfig(request) }
    : { grpo: loraGrpoConfig({ ...request, recipe: recipe.config }) };
}

export function createLoraWorkerApi(): LoraWorkerApi {
  let session: LoraGrpoSession | undefined;
  let opened: LoraRunRequest | undefined;
  let seconds = 0;

  function current(): LoraGrpoSession {
    if (!session) throw new Error('lora worker: open() a run first');
    return session;
  }

  return {
    async open(request: LoraRunRequest) {
      const tokenizer = chatTokenizer(await HfTokenizer.load(request.source, request.tokenizer));
      session?.dispose();
      session = undefined;
      const task = createTokenTask(request.task.name, request.task.options);
      const lora = { rank: request.rank, alpha: request.alpha, targets: [...LORA_MODULES] };
      const { policy, device } =
        request.backend === 'webgpu'
          ? await loraGpuPolicy(
              request,
              lora,
              promptLengthBound(tokenizer, task) + request.maxNewTokens,
            )
          : { policy: undefined, device: 'CPU' };
      session = new LoraGrpoSession({
        spec: request.spec,
        ...(policy ? { policy } : { base: request.base }),
        tokenizer,
        task,
        lora,
        ...trainerSettings(request),
        seed: request.seed,
      });
      opened = request;
      seconds = 0;
      return { parameters: session.parameters, device };
    },
    heldOut: () => current().heldOut(),
    async update(heldOut: boolean): Promise<LoraRunReport> {
      const run = current();
      const started = performance.now();
      const metrics = await run.update();
      seconds += (performance.now() - started) / 1000;
      const change = run.trainer.events.find(
        (e) => e.kind === 'hyperparams' && e.step === run.step,
      );
      return {
        update: run.step,
        // DPO reports the success rate of its samples (see lora-recipes.ts).
        strictAccuracy: metrics['reward/strict_accuracy'] ?? metrics['reward/success_rate'] ?? NaN,
        ...(change?.kind === 'hyperparams' ? { changes: change.changes } : {}),
        ...(heldOut ? { heldOut: await run.heldOut() } : {}),
        seconds,
      };
    },
    async setHyperparams(changes) {
      current().trainer.setHyperparams(changes as Partial<GrpoConfig>);
    },
    async inspect() {
      const inspection = await current().trainer.inspect?.();
      return inspection?.kind === 'samples' ? inspection : null;
    },
    async checkpoint(): Promise<LoraCheckpoint> {
      const run = current();
      const request = opened!;
      const state = await run.state();
      return {
        base: { source: request.source, fingerprint: request.fingerprint },
        lora: { rank: request.rank, alpha: request.alpha, targets: [...LORA_MODULES] },
        run: {
          version: RUN_CHECKPOINT_VERSION,
          step: run.step,
          backend: request.backend,
          policy: { params: state.params, ...state.optimizer },
          trainer: state.trainer,
        },
        seconds,
      };
    },
    async resume(checkpoint: LoraCheckpoint) {
      const run = current();
      const request = opened!;
      const problem = loraCheckpointProblem(checkpoint);
      if (problem) throw new Error(`checkpoint: ${problem}`);
      if (checkpoint.base.fingerprint !== request.fingerprint) {
        throw new Error(
          `checkpoint: its base is ${checkpoint.base.source} (${shortFingerprint(checkpoint.base.fingerprint)}), ` +
            `but the model loaded is ${request.source} (${shortFingerprint(request.fingerprint)}): load the run's model`,
        );
      }
      const { rank, alpha } = checkpoint.lora;
      if (rank !== request.rank || alpha !== request.alpha) {
        throw new Error(
          `checkpoint: its adapters have r = ${rank}, alpha = ${alpha}; this run r = ${request.rank}, alpha = ${request.alpha}`,
        );
      }
      const { params, m, v, stats } = checkpoint.run.policy;
      run.restore({ params, optimizer: { m, v, stats }, trainer: checkpoint.run.trainer });
      seconds = checkpoint.seconds;
    },
    async adapter() {
      const files = await current().adapterFiles(opened!.source);
      return transfer(files, [files.weights.buffer]);
    },
  };
}
