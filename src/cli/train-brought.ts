/**
 * A training run on a brought model for `npm run train -- --model=DIR`: the folder's weights as
 * the frozen base, fresh LoRA adapters (PEFT's initialisation, seeded by --seed) as the only
 * trainable group, the folder's tokenizer with its chat template framing the task's prompts, and
 * the KL reference (when an algorithm needs one) the same model with its adapters off — no second
 * copy of the weights. It trains on the GPU (src/models/hf/llama-lm-gpu.ts, the base in f16 or f32
 * storage) or on the CPU (llama-lm-cpu.ts), as --backend picks. At every ending the adapters are written to --adapter-out in PEFT's
 * layout, which `npm run lm -- score --adapter=DIR` and PEFT read.
 */
import { join } from 'node:path';
import { chatTokenizer } from '../agents/chat-task';
import { acquireForChoice, describeAdapter, type BackendChoice } from '../gpu';
import type { LlamaCpuModel } from '../models/hf/llama-cpu-weights';
import { type GpuWeightStorage, llamaGpuWeightsFromCpu } from '../models/hf/llama-gpu-weights';
import { planLoraMicroBatches, planLoraTraining } from '../models/hf/lora-train-plan';
import { formatBytes } from '../models/hf/memory-plan';
import { promptLengthBound } from '../agents/prompt-tokens';
import { errorText } from '../util/error-text';
import { LlamaCpuLanguageModel } from '../models/hf/llama-lm-cpu';
import { LlamaGpuLanguageModel } from '../models/hf/llama-lm-gpu';
import { createLlamaLora, llamaLoraFromParams, type LlamaLora } from '../models/hf/llama-lora';
import {
  ADAPTER_CONFIG_FILE,
  ADAPTER_WEIGHTS_FILE,
  adapterConfigText,
  adapterWeightsBytes,
} from '../models/hf/peft-adapter';
import { FlagError } from './args';
import { loadLmAdapter, loadLmModel, loadLmTokenizer } from './lm-model';
import {
  readTrainingState,
  trainingStateBytes,
  TRAINING_STATE_FILE,
  type LoraTrainingState,
} from './lora-training-state';
import { shortFingerprint, weightsFingerprint } from '../models/weights-fingerprint';
import { modelFolder, modelName, type ModelSource } from './model-source';
import { writeAtomically } from './output-file';
import { finalSuccess, type PreparedRun } from './prepared-run';
import type { Config, LmFlags } from './train-flags';
import type { BroughtModelFlags } from './train-brought-flags';

export async function setUpBroughtRun(
  flags: { name: string; seed: number; config: Config },
  run: LmFlags,
  brought: BroughtModelFlags,
): Promise<PreparedRun> {
  if (run.algo.valueHead) {
    throw new FlagError(
      'algo',
      `--algo=${flags.name} needs a value head, which a brought model does not have; ` +
        'use grpo (or its settings: Dr. GRPO, DAPO, RLOO, REINFORCE++) or dpo',
    );
  }
  const dir = await modelFolder(brought.source);
  const name = modelName(brought.source);
  const { model, params } = await loadLmModel(dir);
  const tokenizer = await loadLmTokenizer(dir);
  let chat;
  try {
    chat = chatTokenizer(tokenizer);
  } catch (error) {
    throw new FlagError('model', `--model=${name}: ${(error as Error).message}`);
  }
  const saved = brought.resume ? await savedRun(brought.resume, model.spec) : undefined;
  // Fingerprinted only where a state is read or written (a 0.5B model's weights are 2 GB).
  const fingerprint = saved || brought.adapterOut ? await weightsFingerprint(params) : undefined;
  if (saved && saved.state.base.fingerprint !== fingerprint) {
    throw new FlagError(
      'resume',
      `--resume=${brought.resume}: trained on ${saved.state.base.source} (${shortFingerprint(saved.state.base.fingerprint)}), ` +
        `but --model=${name} has other weights (${shortFingerprint(fingerprint!)})`,
    );
  }
  const seed = saved ? saved.state.seed : flags.seed;
  const lora = saved ? saved.lora : createLlamaLora(model.spec, brought.lora, seed);
  const task = run.tasks.first;
  const needed = promptLengthBound(chat, task) + 1;
  if (needed > model.spec.context) {
    throw new FlagError(
      'task',
      `'${task.name}' needs a context of ${needed} tokens in ${name}'s chat template (its prompt, ` +
        `with any tools, calls and results, and an answer); the model's is ${model.spec.context}`,
    );
  }
  // One step's rows: the prompts and their answers, at most the template's prompt and the answer.
  const step = {
    batch:
      Number(flags.config.promptsPerUpdate ?? 1) *
      Number(flags.config.groupSize ?? flags.config.samplesPerPrompt ?? 1),
    seq: Math.min(
      model.spec.context,
      promptLengthBound(chat, task) + Number(flags.config.maxNewTokens ?? 0),
    ),
  };
  const { policy, backend, adapters, release } = await broughtPolicy(
    run.backend,
    { storage: brought.storage, microBatch: brought.microBatch, step },
    model,
    params,
    lora,
  );
  const needsReference = run.algo.reference === 'always' || Number(flags.config.klCoef ?? 0) > 0;
  const reference = needsReference ? policy.withoutAdapters() : undefined;
  const trainer = run.algo.create(
    { policy, tokenizer: chat, task, seed, ...(reference ? { reference } : {}) },
    flags.config,
  );
  if (saved) resumeTrainer(trainer, policy, saved.state, flags, brought.resume!);
  const started = performance.now();
  const { rank, alpha, targets } = lora.settings;
  const parameters = lora.params.length;
  return {
    trainer,
    label: `${flags.name} on ${task.name}, LoRA r = ${rank}, alpha = ${alpha} on ${targets.join(', ') || 'no module'} (${parameters} trainable parameters) of ${name}`,
    backend,
    finish: finalSuccess(policy, chat, task, { seed: flags.seed + 1, samples: run.evalSamples }),
    dispose: () => {
      reference?.dispose();
      release();
    },
    recorded: {},
    ...(brought.adapterOut
      ? {
          saveExtra: async () => {
            const line = saveAdapter(brought.adapterOut!, await adapters(), brought.source);
            const state = trainingStateBytes({
              base: { source: name, fingerprint: fingerprint! },
              seed,
              optimizer: await policy.readOptimizer('lora'),
              trainer: trainer.saveState!(),
              seconds: (saved?.state.seconds ?? 0) + (performance.now() - started) / 1000,
            });
            writeAtomically(join(brought.adapterOut!, TRAINING_STATE_FILE), state, 'adapter-out');
            return `${line} and the optimizer's and trainer's state (${TRAINING_STATE_FILE}), from which --resume goes on`;
          },
        }
      : {}),
  };
}

/** A saved run in `dir` (--resume): its PEFT adapter and the state beside it. */
async function savedRun(
  dir: string,
  spec: LlamaCpuModel['spec'],
): Promise<{ lora: LlamaLora; state: LoraTrainingState }> {
  const lora = await loadLmAdapter(dir, spec, 'resume');
  return { lora, state: await readTrainingState(dir, lora.params.length) };
}

/**
 * Brings the trainer and the adapters' AdamW state to the saved run's: the trainer's part first
 * (it checks everything before it changes anything). The saved run keeps its settings: where
 * this command's differ, a line says which.
 */
function resumeTrainer(
  trainer: PreparedRun['trainer'],
  policy: LlamaCpuLanguageModel | LlamaGpuLanguageModel,
  state: LoraTrainingState,
  flags: { seed: number; config: Config },
  dir: string,
): void {
  try {
    trainer.loadState!(state.trainer);
    policy.writeOptimizer(state.optimizer, 'lora');
  } catch (error) {
    throw new FlagError('resume', `--resume=${dir}: ${errorText(error)}`);
  }
  const differ = Object.entries(state.trainer.config)
    .filter(([key, value]) => key in flags.config && flags.config[key] !== value)
    .map(([key, value]) => `${key} ${String(value)} (flags: ${String(flags.config[key])})`);
  if (state.seed !== flags.seed) differ.unshift(`seed ${state.seed} (flags: ${flags.seed})`);
  console.log(
    `resume: from update ${state.trainer.step} of ${dir}` +
      (differ.length ? `; the saved run keeps its settings: ${differ.join(', ')}` : ''),
  );
}

/**
 * The model to train: on the GPU (Dawn) where --backend asks for it or, with auto, where a hardware
 * adapter exists — the base stored as `storage`, a step in micro-batches of --micro-batch
 * sequences, or of the most whose buffers fit the device's binding (the plan is printed) — else on
 * the CPU (f32). `adapters()` reads the trained adapters back; `release()` frees the model and its
 * device.
 */
async function broughtPolicy(
  choice: BackendChoice,
  gpuOptions: {
    storage: GpuWeightStorage;
    microBatch: number | undefined;
    step: { batch: number; seq: number };
  },
  model: LlamaCpuModel,
  params: Float32Array,
  lora: LlamaLora,
): Promise<{
  policy: LlamaCpuLanguageModel | LlamaGpuLanguageModel;
  backend: string;
  adapters: () => Promise<LlamaLora>;
  release: () => void;
}> {
  const onCpu = (why: string) => {
    const policy = new LlamaCpuLanguageModel(model.spec, params, lora);
    return {
      policy,
      backend: `CPU (${why})`,
      adapters: async () => lora, // trained in place
      release: () => policy.dispose(),
    };
  };
  if (choice === 'cpu') return onCpu('requested');
  const found = await acquireForChoice(choice, '--backend=webgpu');
  if (!found.ok) {
    if (choice === 'webgpu') {
      throw new FlagError('backend', `--backend=webgpu, but no adapter: ${found.reason.message}`);
    }
    const why = found.reason.code === 'fallback-adapter' ? '' : 'no WebGPU adapter: ';
    return onCpu(`${why}${found.reason.message}`);
  }
  const { gpu } = found;
  const { storage, step } = gpuOptions;
  let plan;
  try {
    const request = { storage, lora: lora.settings, ...step, limits: gpu.summary.limits };
    plan =
      gpuOptions.microBatch === undefined
        ? planLoraMicroBatches(model.spec, { ...request, budgetBytes: Number.MAX_SAFE_INTEGER })
        : planLoraTraining(model.spec, {
            ...request,
            microBatch: Math.min(gpuOptions.microBatch, step.batch),
          });
  } catch (error) {
    gpu.destroy();
    throw new FlagError(
      'micro-batch',
      `a training step does not fit this GPU: ${errorText(error)}`,
    );
  }
  const micro = plan.microBatch < step.batch ? { microBatch: plan.microBatch } : {};
  const weights = llamaGpuWeightsFromCpu(gpu, model, storage);
  const policy = new LlamaGpuLanguageModel(gpu, weights, lora, micro);
  const slices = plan.microBatch < step.batch ? `, ${plan.microBatch} sequences at a time` : '';
  return {
    policy,
    backend: `${describeAdapter(gpu.summary)}, base stored as ${storage}${slices}; a step needs ${formatBytes(plan.totalBytes)} (activations ${formatBytes(plan.activationBytes)}, logits ${formatBytes(plan.logitBytes)})`,
    adapters: async () =>
      llamaLoraFromParams(model.spec, lora.settings, await policy.readParams('lora')),
    release: () => {
      policy.dispose();
      gpu.destroy();
    },
  };
}

/**
 * Writes the adapters as PEFT saves them, naming the base model as PEFT loads it (the folder, or
 * the Hub id and its revision); returns what to print.
 */
function saveAdapter(dir: string, lora: LlamaLora, base: ModelSource): string {
  writeAtomically(join(dir, ADAPTER_WEIGHTS_FILE), adapterWeightsBytes(lora), 'adapter-out');
  const config =
    base.kind === 'folder'
      ? adapterConfigText(lora.settings, base.dir)
      : adapterConfigText(lora.settings, base.id, base.revision === 'main' ? null : base.revision);
  writeAtomically(join(dir, ADAPTER_CONFIG_FILE), config, 'adapter-out');
  return `wrote the adapter to ${dir} (${ADAPTER_CONFIG_FILE}, ${ADAPTER_WEIGHTS_FILE})`;
}
