/**
 * Worker-side set-up of a language-model run, as `npm run train` does it: the default small
 * transformer (learned or rotary positions, as the spec says), WebGPU in this worker when an
 * adapter exists (else the CPU, saying why), a short supervised warm-up with progress, then the
 * trainer from the registry.
 */
import { acquireForChoice } from '../gpu/backend-choice';
import type { GpuContext } from '../gpu/context';
import { exportTransformerOnnx } from '../onnx/export-transformer';
import type { OrtSessionOptions } from '../onnx/ort-reference';
import { OrtReferenceModel } from '../onnx/ort-reference-model';
import { readStartingPolicy } from '../onnx/starting-policy';
import { describeAdapter, describeUnavailable } from '../gpu/adapter-summary';
import type { LanguageModel } from '../models/language-model';
import { CpuLanguageModel } from '../models/lm-cpu';
import { GpuLanguageModel } from '../models/lm-gpu';
import { CharTokenizer } from '../models/tokenizer';
import {
  LAB_MODEL_SHAPE,
  newRunModelConfig,
  type TransformerConfig,
} from '../models/transformer-config';
import { transformerLayout } from '../models/transformer-params';
import type { LmAlgorithm } from '../rl/registry';
import { DEFAULT_SFT_CONFIG, runSft } from '../rl/sft';
import type { Trainer } from '../rl/trainer';
import { RUN_CHECKPOINT_VERSION, type RunCheckpoint } from './run-checkpoint';
import type { RunMessage, RunSpec, Settings, StartFrom } from './run-protocol';
import { fetchShippedModel, shippedModel } from './shipped-models';
import { SFT_STEPS } from './run-spec';
import { curriculumSetup, runTasks } from './run-tasks';
import type { RewardModel } from '../rl/reward-model';
import {
  buildRewardModel,
  checkRewardModelResume,
  restoreRewardModel,
  saveRewardModel,
} from './reward-model-setup';

export interface LmRun {
  trainer: Trainer<Settings>;
  /** The run's state now (between updates only: it reads the models). */
  checkpoint(): Promise<RunCheckpoint>;
  /** The policy now as an ONNX file (weights by layout name, config and tokenizer inside). */
  exportOnnx(): Promise<Uint8Array>;
  dispose(): void;
}

export interface LmRunOptions {
  /** Where onnxruntime-web comes from for `reference: 'ort'` (Node: nodeOrtOptions()). */
  ort?: Pick<OrtSessionOptions, 'build' | 'wasmPaths'>;
  /** Reads a shipped checkpoint of public/models/ (default: fetched from the page's server). */
  readShipped?: (file: string) => Promise<Uint8Array>;
  /**
   * Awaited after every warm-up step and every reward-model step: where the lab's worker passes
   * its training turn on, so set-up work shares the cores as training does (run-host.ts).
   */
  yieldPoint?: () => Promise<void>;
}

/** What setUpLmRun needs besides the spec and the algorithm. */
export interface LmSetupOptions extends LmRunOptions {
  /** Where the set-up's progress (backend, warm-up, notes) goes. */
  emit: (message: RunMessage) => void;
  /** A checkpoint to start from instead of from the beginning. */
  resume?: RunCheckpoint;
}

/** The bytes a run starts from: a shipped checkpoint, or the file the user picked. */
async function startBytes(
  init: StartFrom,
  readShipped: LmRunOptions['readShipped'] = fetchShippedModel,
): Promise<Uint8Array> {
  if (init.kind === 'file') return init.bytes;
  const model = shippedModel(init.model);
  if (!model) throw new Error(`init.model: no shipped model '${init.model}'`);
  return readShipped(model.file);
}

type MakeModel = (config: TransformerConfig, params: Float32Array) => LanguageModel;

/** The backend for this run's models, and the line the UI shows for it. */
async function pickBackend(choice: RunSpec['backend']) {
  const cpu: MakeModel = (config, params) => new CpuLanguageModel(config, params);
  if (choice === 'cpu') {
    return { make: cpu, kind: 'cpu' as const, line: 'CPU — requested for this run' };
  }
  const found = await acquireForChoice(
    choice,
    "the Backend choice 'WebGPU (any)' or ?backend=webgpu",
  );
  if (!found.ok) {
    return { make: cpu, kind: 'cpu' as const, line: describeUnavailable(found.reason) };
  }
  const gpu: GpuContext = found.gpu;
  return {
    make: ((config, params) => new GpuLanguageModel(gpu, config, params)) as MakeModel,
    kind: 'webgpu' as const,
    line: describeAdapter(gpu.summary),
    gpu,
  };
}

/**
 * Counts the warm-up's optimizer steps as they happen (runSft reports only at evaluations), and
 * awaits `onStep` after each.
 */
function countingSteps(model: LanguageModel, onStep: () => void | Promise<void>): LanguageModel {
  return new Proxy(model, {
    get(target, key) {
      if (key === 'trainCrossEntropy') {
        return async (...args: Parameters<LanguageModel['trainCrossEntropy']>) => {
          await target.trainCrossEntropy(...args);
          await onStep();
        };
      }
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/**
 * Throws unless the checkpoint fits this run's model: one weight per parameter (the moments and the
 * reference have the weights' length: checkpointProblem, checked by the run host), and the
 * reference's weights when the run scores one. Checked before any model is built.
 */
function checkResume(resume: RunCheckpoint, total: number, needsReference: boolean): void {
  const held = resume.policy.params.length;
  if (held !== total) {
    throw new Error(
      `checkpoint: policy.params holds ${held} values; this run's model has ${total} parameters`,
    );
  }
  if (needsReference && !resume.reference) {
    throw new Error('checkpoint: this run scores a reference, and the checkpoint has no reference');
  }
}

/**
 * Builds the run; with `resume`, from a checkpoint instead of from the start: no warm-up, the
 * policy's weights and AdamW state, the reference's weights and the trainer's state all from it.
 */
export async function setUpLmRun(
  spec: RunSpec,
  algo: LmAlgorithm,
  options: LmSetupOptions,
): Promise<LmRun> {
  const { emit, resume } = options;
  const ort = options.ort ?? {};
  const tasks = runTasks(spec);
  const task = tasks.first;
  const tokenizer = CharTokenizer.createDefault();
  let modelConfig: TransformerConfig = newRunModelConfig({
    vocab: tokenizer.vocabSize,
    maxChars: tasks.maxChars,
    shape: LAB_MODEL_SHAPE,
    valueHead: algo.valueHead,
    positions: spec.positions,
  });
  let params: Float32Array;
  if (spec.init) {
    const started = readStartingPolicy(await startBytes(spec.init, options.readShipped), {
      tokenizer: tokenizer.spec,
      tokensNeeded: tasks.maxChars + 2,
      valueHead: algo.valueHead,
      seed: spec.seed,
    });
    modelConfig = started.config;
    params = started.params;
    if (started.note) emit({ type: 'note', text: started.note });
  } else {
    params = transformerLayout(modelConfig).initialize<Float32Array>(spec.seed);
  }
  const needsReference = algo.reference === 'always' || Number(spec.config.klCoef ?? 0) > 0;
  if (resume) {
    checkResume(resume, transformerLayout(modelConfig).total, needsReference);
    if (spec.rewardModel) checkRewardModelResume(resume, modelConfig);
    params = resume.policy.params;
  }
  const backend = await pickBackend(spec.backend);
  emit({ type: 'backend', kind: backend.kind, line: backend.line });
  const total = resume ? 0 : (spec.sftSteps ?? SFT_STEPS.default);
  const policy = backend.make(modelConfig, params);
  if (resume) policy.writeOptimizer(resume.policy);

  if (total > 0) {
    let done = 0;
    let last = 0;
    emit({ type: 'warmup', done, total });
    const counted = countingSteps(policy, () => {
      done += 1;
      // A progress message at most every 100 ms, and the last step always.
      if (done === total || performance.now() - last > 100) {
        last = performance.now();
        emit({ type: 'warmup', done, total });
      }
      return options.yieldPoint?.();
    });
    const sft = await runSft(counted, tokenizer, task, {
      ...DEFAULT_SFT_CONFIG,
      steps: total,
      seed: spec.seed,
    });
    emit({ type: 'warmup', done: total, total, successRate: sft.final.successRate });
  }

  // The frozen reference: the policy as it starts RL (after the warm-up), kept for checkpoints.
  const referenceParams = !needsReference
    ? undefined
    : (resume?.reference ?? (await policy.readParams()));
  let reference: LanguageModel | undefined;
  if (needsReference && spec.reference === 'ort') {
    // onnxruntime-web on its own WebGPU device when this run has one (and the build has the EP),
    // else its wasm EP on the CPU.
    const webgpu = backend.kind === 'webgpu' && ort.build !== 'wasm';
    const ortReference = await OrtReferenceModel.fromParams(
      modelConfig,
      referenceParams!,
      tokenizer.spec,
      { ...ort, executionProviders: webgpu ? ['webgpu', 'wasm'] : ['wasm'] },
    );
    reference = ortReference;
    const engine = ortReference.backend === 'webgpu' ? 'WebGPU' : 'wasm';
    emit({
      type: 'backend',
      kind: backend.kind,
      line: `${backend.line} · reference on onnxruntime-web (${engine})`,
    });
  } else if (needsReference) {
    reference = backend.make(modelConfig, referenceParams!);
  }
  const rewardModelSetup = {
    modelConfig,
    make: backend.make,
    policy,
    tokenizer,
    task,
    maxNewTokens: Number(spec.config.maxNewTokens),
    seed: spec.seed,
    emit,
    ...(options.yieldPoint ? { yieldPoint: options.yieldPoint } : {}),
  };
  let rewardModel: RewardModel | undefined;
  const dispose = () => {
    policy.dispose();
    reference?.dispose();
    rewardModel?.model.dispose();
    backend.gpu?.destroy();
  };
  // Whatever fails from here on — a starting policy never right (no pairs for the reward model),
  // settings the trainer refuses, a refused checkpoint — leaves no model (nor GPU device) behind.
  let trainer: Trainer<Settings>;
  try {
    if (spec.rewardModel && resume?.rewardModel) {
      rewardModel = restoreRewardModel(resume.rewardModel, rewardModelSetup);
    } else if (spec.rewardModel) {
      rewardModel = await buildRewardModel({ ...rewardModelSetup, config: spec.rewardModel });
    }
    const curriculum = curriculumSetup(tasks, spec.curriculum);
    trainer = algo.create(
      {
        policy,
        reference,
        tokenizer,
        task,
        seed: spec.seed,
        ...(curriculum ? { curriculum } : {}),
        ...(tasks.retained ? { retained: tasks.retained } : {}),
        ...(rewardModel ? { rewardModel } : {}),
      },
      spec.config,
    );
    if (resume) {
      if (!trainer.loadState) {
        throw new Error(`checkpoint: ${spec.algo} runs cannot resume from one`);
      }
      trainer.loadState(resume.trainer);
    }
  } catch (error) {
    dispose();
    throw error;
  }
  return {
    trainer,
    async checkpoint() {
      if (!trainer.saveState) throw new Error(`${spec.algo} runs have no checkpoints`);
      const [params, optimizer] = await Promise.all([policy.readParams(), policy.readOptimizer()]);
      return {
        version: RUN_CHECKPOINT_VERSION,
        step: trainer.step,
        backend: backend.kind,
        policy: { params, m: optimizer.m, v: optimizer.v, stats: optimizer.stats },
        ...(referenceParams ? { reference: referenceParams.slice() } : {}),
        ...(rewardModel ? { rewardModel: await saveRewardModel(rewardModel) } : {}),
        trainer: trainer.saveState(),
      };
    },
    async exportOnnx() {
      return exportTransformerOnnx(modelConfig, await policy.readParams(), tokenizer.spec);
    },
    dispose,
  };
}
