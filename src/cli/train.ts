/**
 * `npm run train -- --algo=grpo --task=reverse --seed=1 --updates=200 [--out=runs/x.json]`
 * `npm run train -- --algo=q-learning --env=cliffwalking --updates=500`
 * `npm run train -- --algo=grpo --task=copy --init=public/models/copy.ckpt --reward-model --reward-model-prompts=96`
 *
 * Any algorithm of src/rl/registry.ts, headless in Node. Language-model algorithms (--task) run on
 * WebGPU through Dawn where a hardware adapter exists, else on the CPU (cli/backend.ts), and say
 * which; --init=<file>
 * starts from a saved model (checkpoint or ONNX export), otherwise --sft-steps of supervised warm-up come first. The frozen
 * reference (KL term, DPO) runs on our engine, or with --reference=ort on onnxruntime-web. Every setting
 * of the algorithm (and of the task) is a --kebab-case flag generated from its spec; --curriculum
 * [--curriculum-threshold=0.8 --curriculum-patience=5] trains GRPO or PPO through the task's rungs.
 * --reward-model trains a learned reward model after the warm-up (src/worker/reward-model-setup.ts,
 * as the lab's worker does) and rewards its score with --reward-model-weight (1 unless given); its
 * settings are --reward-model-<field> flags of REWARD_MODEL_CONFIG_SPEC (--reward-model-prompts,
 * --reward-model-samples-per-prompt, --reward-model-label-noise, --reward-model-steps,
 * --reward-model-pairs-per-step, --reward-model-lr), refused without the switch. A progress bar
 * and a metrics line every --log-every updates; --out writes a run file the lab can import, with
 * the task options, curriculum and reward-model settings of a language-model run.
 * --retained=<task> keeps a second task (src/rl/retained-task.ts: --ptx-coef trains on its
 * demonstrations, --retained-eval-prompts reports its greedy success); its options are
 * --retained-<option> flags of that task's spec (e.g. --retained=multiply --retained-max-digits=2).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { bytesToBase64 } from '../compare/base64';
import {
  createTokenTask,
  TOKEN_TASK_NAMES,
  TOKEN_TASKS,
  type TokenTaskName,
} from '../envs/token-tasks/registry';
import type { LanguageModel } from '../models/language-model';
import { CharTokenizer } from '../models/tokenizer';
import { LAB_MODEL_SHAPE, type TransformerConfig } from '../models/transformer-config';
import { transformerLayout } from '../models/transformer-params';
import { OpInputError } from '../ops/errors';
import { evaluateTask } from '../rl/evaluate';
import {
  CURRICULUM_CONFIG_SPEC,
  DEFAULT_CURRICULUM_CONFIG,
  type CurriculumConfig,
} from '../rl/curriculum';
import {
  checkConfig,
  checkField,
  configFromFlags,
  kebab,
  type ConfigSpec,
  type FieldSpec,
} from '../util/hyperparams';
import {
  algorithm,
  curriculumAlgorithms,
  retainedAlgorithms,
  rewardModelAlgorithms,
  type EnvName,
  type LmAlgorithm,
} from '../rl/registry';
import {
  DEFAULT_REWARD_MODEL_CONFIG,
  REWARD_MODEL_CONFIG_SPEC,
  type RewardModel,
  type RewardModelConfig,
  type RewardModelReport,
} from '../rl/reward-model';
import {
  MetricSeries,
  RUN_FILE_FORMAT,
  RUN_FILE_VERSION,
  serializeRunFile,
  type RunFile,
} from '../rl/run-file';
import { DEFAULT_SFT_CONFIG, runSft } from '../rl/sft';
import { timedUpdate, type Trainer } from '../rl/trainer';
import { nodeOrtOptions } from '../onnx/ort-node';
import { OrtReferenceModel } from '../onnx/ort-reference-model';
import { readStartingPolicy } from '../onnx/starting-policy';
import { buildRewardModel } from '../worker/reward-model-setup';
import type { RetainedTaskSpec, RunMessage, Settings } from '../worker/run-protocol';
import { curriculumSetup, runTasks } from '../worker/run-tasks';
import { CliArgs } from './args';
import { createLanguageModel, type BackendChoice } from './backend';

/** Metrics shown on the progress line, the first few an algorithm reports. */
const SHOWN = [
  'reward/mean',
  'charts/episodic_return',
  'values/max_delta',
  'policy/changed_states',
  'frac_reward_zero_std',
  'actor/pg_loss',
  'losses/policy_loss',
  'critic/vf_loss',
  'actor/entropy',
  'rewards/accuracies',
];

export async function main(argv: string[]): Promise<number> {
  const args = new CliArgs(argv);
  const name = args.string('algo', 'grpo');
  const algo = algorithm(name);
  const seed = args.number('seed', 1);
  const updates = args.number('updates', 100);
  const logEvery = args.number('log-every', 10);
  const out = args.optional('out');
  const config = {
    ...algo.defaults,
    ...configFromFlags(name, algo.spec, args.all()),
  } as Record<string, number | boolean | string>;
  markUsed(args, algo.spec);

  let trainer: Trainer<Record<string, number | boolean | string>>;
  let label: string;
  let backend = 'CPU';
  let finish: () => Promise<Record<string, number>> = async () => ({});
  let dispose = () => {};
  /** What a language-model run's file records beside its config (as a lab-run file's spec). */
  let recorded: Pick<
    RunFile,
    'taskOptions' | 'curriculum' | 'rewardModel' | 'retained' | 'sftSteps' | 'init' | 'model'
  > = {};
  if (algo.family === 'env') {
    const env = args.string('env', algo.envs[0]!) as EnvName;
    if (!algo.envs.includes(env)) {
      throw new OpInputError(
        'train',
        'env',
        `must be one of ${algo.envs.join(', ')} for ${name}, got '${env}'`,
      );
    }
    args.checkAllUsed();
    trainer = algo.create(env, config, seed);
    label = `${name} on ${env}`;
  } else {
    // Read and checked before the warm-up, so a bad flag costs no training.
    const rewardModelConfig = rewardModelFromFlags(args, algo);
    if (
      rewardModelConfig &&
      'rewardModelWeight' in algo.spec &&
      !args.all().has('reward-model-weight')
    ) {
      // A reward model is trained to be used: weight 1 unless given, as the lab's form does.
      config.rewardModelWeight = 1;
    }
    const lm = await setUpLanguageModel(args, algo, seed);
    const referenceEngine = args.string('reference', 'engine');
    if (referenceEngine !== 'engine' && referenceEngine !== 'ort') {
      throw new OpInputError(
        'train',
        'reference',
        `must be engine or ort, got '${referenceEngine}'`,
      );
    }
    args.checkAllUsed();
    const needsReference = algo.reference === 'always' || Number(config.klCoef ?? 0) > 0;
    let reference: LanguageModel | undefined;
    backend = lm.description;
    if (needsReference && referenceEngine === 'ort') {
      // Node's onnxruntime-web build runs the wasm EP only.
      reference = await OrtReferenceModel.fromParams(
        lm.policy.config,
        await lm.policy.readParams(),
        lm.tokenizer.spec,
        { ...nodeOrtOptions(), executionProviders: ['wasm'] },
      );
      backend += ', reference on onnxruntime-web (wasm)';
    } else if (needsReference) {
      const params = await lm.policy.readParams();
      reference = (await createLanguageModel(lm.choice, lm.policy.config, params)).model;
    }
    let rewardModel: RewardModel | undefined;
    dispose = () => {
      lm.policy.dispose();
      reference?.dispose();
      rewardModel?.model.dispose();
    };
    try {
      if (rewardModelConfig) {
        // The same build as the lab's worker: comparisons of the policy as RL starts, then training.
        rewardModel = await buildRewardModel({
          config: rewardModelConfig,
          policy: lm.policy,
          modelConfig: lm.policy.config,
          make: (modelConfig, params) =>
            createLanguageModel(lm.choice, modelConfig, params).then((r) => r.model),
          tokenizer: lm.tokenizer,
          task: lm.task,
          maxNewTokens: Number(config.maxNewTokens),
          seed,
          emit: rewardModelPrinter(rewardModelConfig),
        });
      }
      trainer = algo.create(
        { ...lm, reference, seed, ...(rewardModel ? { rewardModel } : {}) },
        config,
      );
    } catch (error) {
      dispose(); // e.g. a starting policy that is never right gives no pairs to train on
      throw error;
    }
    recorded = {
      ...lm.recorded,
      ...(rewardModelConfig ? { rewardModel: rewardModelConfig } : {}),
    };
    label = `${name} on ${lm.task.name}`;
    finish = async () => {
      const final = await evaluateTask(lm.policy, lm.tokenizer, lm.task, {
        seed: seed + 1,
        samples: 256,
      });
      return { successRate: final.successRate };
    };
  }

  console.log(`train: ${label}, seed ${seed}, ${updates} updates, on ${backend}`);
  const series = new MetricSeries();
  const started = performance.now();
  for (let u = 1; u <= updates; u++) {
    series.push(await timedUpdate(trainer));
    if (u % logEvery === 0 || u === updates) console.log(progressLine(series, u, updates));
  }
  const seconds = (performance.now() - started) / 1000;
  const summary = { updates, seconds, ...(await finish()) };
  console.log(`done in ${seconds.toFixed(1)} s ${JSON.stringify(summary)}`);
  if (out) {
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(
      out,
      serializeRunFile({
        format: RUN_FILE_FORMAT,
        version: RUN_FILE_VERSION,
        algorithm: name,
        task: label,
        seed,
        backend,
        createdAt: new Date().toISOString(),
        config: trainer.config,
        ...recorded,
        metrics: series.series,
        events: [...trainer.events],
        summary,
      }),
    );
    console.log(`wrote ${out}`);
  }
  dispose();
  return 0;
}

/** The task, the tokenizer and the policy for a language-model algorithm. */
async function setUpLanguageModel(args: CliArgs, algo: LmAlgorithm, seed: number) {
  const taskName = args.string('task', 'reverse');
  if (!(TOKEN_TASK_NAMES as readonly string[]).includes(taskName)) {
    throw new OpInputError(
      'train',
      'task',
      `must be one of ${TOKEN_TASK_NAMES.join(', ')}, got '${taskName}'`,
    );
  }
  const definition = TOKEN_TASKS[taskName as TokenTaskName];
  const taskSpec = definition.spec as ConfigSpec<Settings>;
  const taskOptions = configFromFlags(taskName, taskSpec, args.all()) as Settings;
  markUsed(args, taskSpec);
  const curriculum = curriculumFromFlags(args, algo, Object.keys(taskOptions));
  const retained = retainedFromFlags(args, algo);
  const tasks = runTasks({
    task: taskName,
    taskOptions,
    ...(curriculum ? { curriculum } : {}),
    ...(retained ? { retained } : {}),
  });
  const task = tasks.first;
  const choice = args.string('backend', 'auto') as BackendChoice;
  const init = args.optional('init');
  const sftSteps = args.number('sft-steps', 300);
  const tokenizer = CharTokenizer.createDefault();
  let modelConfig: TransformerConfig = {
    vocab: tokenizer.vocabSize,
    context: Math.min(256, tasks.maxChars + 2 + 8),
    width: args.number('width', LAB_MODEL_SHAPE.width),
    layers: args.number('layers', LAB_MODEL_SHAPE.layers),
    heads: args.number('heads', LAB_MODEL_SHAPE.heads),
    tiedEmbeddings: true,
    valueHead: algo.valueHead,
  };
  let params = transformerLayout(modelConfig).initialize<Float32Array>(seed);
  const initBytes = init ? new Uint8Array(readFileSync(init)) : undefined;
  if (initBytes) {
    // A checkpoint or an ONNX export; the value head follows the algorithm (added or dropped).
    const started = readStartingPolicy(initBytes, {
      tokenizer: tokenizer.spec,
      tokensNeeded: tasks.maxChars + 2,
      valueHead: algo.valueHead,
      seed,
    });
    modelConfig = started.config;
    params = started.params;
  }
  const { model: policy, description } = await createLanguageModel(choice, modelConfig, params);
  if (!init && sftSteps > 0) {
    console.log(`warm-up: ${sftSteps} SFT steps on ${task.name} (--init=<checkpoint> skips this)`);
    const sft = await runSft(policy, tokenizer, task, {
      ...DEFAULT_SFT_CONFIG,
      steps: sftSteps,
      seed,
    });
    console.log(`warm-up done: greedy success ${(sft.final.successRate * 100).toFixed(1)}%`);
  }
  const schedule = curriculumSetup(tasks, curriculum);
  return {
    policy: policy as LanguageModel,
    tokenizer,
    task,
    ...(schedule ? { curriculum: schedule } : {}),
    ...(tasks.retained ? { retained: tasks.retained } : {}),
    description,
    choice,
    // For the run file: the rungs set the options of a run with a curriculum; the lab builds the
    // same model from the same start (the file's bytes, or a fresh one and the warm-up).
    recorded: {
      model: { width: modelConfig.width, layers: modelConfig.layers, heads: modelConfig.heads },
      ...(curriculum ? { curriculum } : { taskOptions }),
      ...(retained ? { retained } : {}),
      ...(init && initBytes
        ? { init: { file: basename(init), bytes: bytesToBase64(initBytes) } }
        : { sftSteps }),
    },
  };
}

/**
 * `--curriculum` (with optional `--curriculum-threshold`, `--curriculum-patience`): train through
 * the task's rungs. Refused for algorithms without one, and beside task option flags (the rungs set
 * the options).
 */
function curriculumFromFlags(
  args: CliArgs,
  algo: LmAlgorithm,
  taskFlags: readonly string[],
): CurriculumConfig | undefined {
  const on = args.optional('curriculum');
  const threshold = args.optional('curriculum-threshold');
  const patience = args.optional('curriculum-patience');
  if (on === undefined && threshold === undefined && patience === undefined) return undefined;
  if (on !== undefined && on !== 'true') {
    throw new OpInputError('train', 'curriculum', `is a switch (--curriculum), got '${on}'`);
  }
  if (!algo.curriculum) {
    throw new OpInputError('train', 'curriculum', `is only for ${curriculumAlgorithms()}`);
  }
  if (taskFlags.length > 0) {
    throw new OpInputError(
      'train',
      'curriculum',
      `sets the task's options rung by rung; leave out --${taskFlags.map(kebab).join(', --')}`,
    );
  }
  const config: CurriculumConfig = {
    threshold: threshold === undefined ? DEFAULT_CURRICULUM_CONFIG.threshold : Number(threshold),
    patience: patience === undefined ? DEFAULT_CURRICULUM_CONFIG.patience : Number(patience),
  };
  checkConfig('curriculum', CURRICULUM_CONFIG_SPEC, config);
  return config;
}

/**
 * `--reward-model` (with optional `--reward-model-<field>` flags, one per field of
 * REWARD_MODEL_CONFIG_SPEC in kebab case; the rest take DEFAULT_REWARD_MODEL_CONFIG): train a
 * learned reward model before RL. Refused for algorithms that cannot use one, and the field flags
 * refused without the switch (they would silently do nothing). Reads every such flag, so
 * checkAllUsed() knows them.
 */
function rewardModelFromFlags(args: CliArgs, algo: LmAlgorithm): RewardModelConfig | undefined {
  const on = args.optional('reward-model');
  const fields = Object.entries(REWARD_MODEL_CONFIG_SPEC) as [keyof RewardModelConfig, FieldSpec][];
  const given = fields
    .map(([key, spec]) => ({ key, spec, flag: `reward-model-${kebab(key)}` }))
    .map((f) => ({ ...f, raw: args.optional(f.flag) }))
    .filter((f): f is typeof f & { raw: string } => f.raw !== undefined);
  if (on === undefined && given.length === 0) return undefined;
  if (on !== undefined && on !== 'true') {
    throw new OpInputError('train', 'reward-model', `is a switch (--reward-model), got '${on}'`);
  }
  if (!algo.rewardModel) {
    throw new OpInputError('train', 'reward-model', `is only for ${rewardModelAlgorithms()}`);
  }
  if (on === undefined) {
    throw new OpInputError(
      'train',
      given[0]!.flag,
      'sets the learned reward model, which only --reward-model trains; add --reward-model',
    );
  }
  const config: RewardModelConfig = { ...DEFAULT_REWARD_MODEL_CONFIG };
  for (const { key, spec, raw } of given) {
    const value = Number(raw);
    // "rewardModel: steps must be an integer in [1, 2000], got 0" (the run file's names).
    checkField('rewardModel', key, spec, value);
    config[key] = value;
  }
  return config;
}

/**
 * `--retained=<task>` with `--retained-<option>` flags from that task's spec: the second task a
 * GRPO or PPO run keeps. Options are checked by the task's FieldSpecs, then by the task itself.
 */
function retainedFromFlags(args: CliArgs, algo: LmAlgorithm): RetainedTaskSpec | undefined {
  const task = args.optional('retained');
  if (task === undefined) return undefined;
  if (!algo.retained) {
    throw new OpInputError('train', 'retained', `is only for ${retainedAlgorithms()}`);
  }
  if (!(TOKEN_TASK_NAMES as readonly string[]).includes(task)) {
    throw new OpInputError(
      'train',
      'retained',
      `must be one of ${TOKEN_TASK_NAMES.join(', ')}, got '${task}'`,
    );
  }
  const spec = TOKEN_TASKS[task as TokenTaskName].spec as ConfigSpec<Settings>;
  // `--retained-max-digits=2` read as the task's own `--max-digits=2` would be.
  const flags = new Map<string, string>();
  for (const key of Object.keys(spec)) {
    const raw = args.optional(`retained-${kebab(key)}`);
    if (raw !== undefined) flags.set(kebab(key), raw);
  }
  const taskOptions = configFromFlags('retained', spec, flags) as Settings;
  createTokenTask(task, taskOptions); // the task's own cross-field rules
  return Object.keys(taskOptions).length === 0 ? { task } : { task, taskOptions };
}

/**
 * Prints the reward model's build: a line as it starts, its progress at most every 10 steps, and
 * the report (pairs, the Bradley–Terry loss first → last, held-out agreement) as one line.
 */
function rewardModelPrinter(config: RewardModelConfig): (message: RunMessage) => void {
  let shown = 0;
  return (message) => {
    if (message.type !== 'reward-model') return;
    const { done, total, report } = message;
    if (report) {
      console.log(rewardModelReportLine(report));
    } else if (done === 0) {
      console.log(
        `reward model: ${config.prompts} prompts × ${config.samplesPerPrompt} answers, right paired ` +
          `with wrong, then ${total} steps of ${config.pairsPerStep} pairs`,
      );
    } else if (done - shown >= 10 && done < total) {
      shown = done;
      console.log(`reward model: step ${done}/${total}`);
    }
  };
}

function rewardModelReportLine(report: RewardModelReport): string {
  const agreement =
    report.heldOutPairs > 0
      ? `${(report.heldOutAccuracy * 100).toFixed(1)}% of ${report.heldOutPairs}`
      : 'n/a (no pair held out)';
  return (
    `reward model: ${report.pairs} pairs, loss ${report.firstLoss.toFixed(3)} → ` +
    `${report.lastLoss.toFixed(3)}, held-out agreement ${agreement}`
  );
}

/** Marks a spec's flags as known, so checkAllUsed() only reports typos. */
function markUsed(args: CliArgs, spec: object): void {
  for (const key of Object.keys(spec)) args.optional(kebab(key));
}

function progressLine(series: MetricSeries, done: number, total: number): string {
  const width = 24;
  const filled = Math.round((done / total) * width);
  const bar = `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
  const shown = SHOWN.filter((k) => k in series.series)
    .slice(0, 5)
    .map((k) => `${k} ${series.series[k]![series.length - 1]!.toFixed(3)}`)
    .join('  ');
  return `${bar} ${done}/${total}  ${shown}`;
}
