/**
 * `npm run train -- --algo=grpo --task=reverse --seed=1 --updates=200 [--out=runs/x.json]`
 * `npm run train -- --algo=q-learning --env=cliffwalking --updates=500`
 * `npm run train -- --algo=grpo --task=copy --init=public/models/copy.ckpt --reward-model --reward-model-prompts=96`
 *
 * Any algorithm of src/rl/registry.ts, headless in Node. Language-model algorithms (--task) run on
 * WebGPU through Dawn where a hardware adapter exists, else on the CPU (cli/backend.ts), and say
 * which; --init=<file>
 * starts from a saved model (checkpoint or ONNX export), otherwise --sft-steps of supervised warm-up come first
 * on a new model of --width, --layers, --heads and --positions=learned|rotary (RoPE, base 10,000;
 * refused beside --init, whose model keeps its own). The frozen
 * reference (KL term, DPO) runs on our engine, or with --reference=ort on onnxruntime-web. Every setting
 * of the algorithm (and of the task) is a --kebab-case flag generated from its spec; --curriculum
 * [--curriculum-threshold=0.8 --curriculum-patience=5] trains GRPO or PPO through the task's rungs.
 * --reward-model trains a learned reward model after the warm-up (src/worker/reward-model-setup.ts,
 * as the lab's worker does) and rewards its score with --reward-model-weight (1 unless given); its
 * settings are --reward-model-<field> flags of REWARD_MODEL_CONFIG_SPEC (--reward-model-prompts,
 * --reward-model-samples-per-prompt, --reward-model-label-noise, --reward-model-steps,
 * --reward-model-pairs-per-step, --reward-model-lr), refused without the switch. A progress bar
 * and a metrics line every --log-every updates; --out writes a run file the lab can import, with
 * the task options, curriculum and reward-model settings of a language-model run. --out is checked
 * before training (cli/output-file.ts: a regular file or nothing, never the --init file) with
 * --updates held to what the lab's import takes (cli/run-file-budget.ts), and the file is written atomically every --save-every seconds and on every
 * ending: done (exit 0), unhealthy (exit 1), an error (rethrown), Ctrl-C (exit 130) or SIGTERM
 * (143). Flags are read and checked first (cli/train-flags.ts), with the ranges the lab's
 * run-file import uses.
 * --retained=<task> keeps a second task (src/rl/retained-task.ts: --ptx-coef trains on its
 * demonstrations, --retained-eval-prompts reports its greedy success); its options are
 * --retained-<option> flags of that task's spec (e.g. --retained=multiply --retained-max-digits=2).
 */
import { statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { bytesToBase64 } from '../util/base64';
import {
  CLI_RUN_FORMAT,
  CLI_RUN_VERSION,
  MetricSeries,
  parseRunFile,
  writeCliRunFile,
  type RecordedModel,
} from '../compare/run-file';
import type { LanguageModel } from '../models/language-model';
import { CharTokenizer } from '../models/tokenizer';
import {
  newRunModelConfig,
  rotaryBaseOf,
  usesRotary,
  type TransformerConfig,
} from '../models/transformer-config';
import { transformerLayout } from '../models/transformer-params';
import { nodeOrtOptions } from '../onnx/ort-node';
import { OrtReferenceModel } from '../onnx/ort-reference-model';
import { readStartingPolicy } from '../onnx/starting-policy';
import type { RewardModel, RewardModelConfig, RewardModelReport } from '../rl/reward-model';
import { DEFAULT_SFT_CONFIG, runSft } from '../rl/sft';
import { timedUpdate } from '../rl/trainer';
import { buildRewardModel } from '../worker/reward-model-setup';
import type { RunMessage } from '../worker/run-protocol';
import { runCatalog } from '../worker/run-spec';
import { curriculumSetup } from '../worker/run-tasks';
import { FlagError } from './args';
import { createLanguageModel } from './backend';
import { modelFileError, readModelFile } from './model-file';
import { prepareOutput, writeAtomically } from './output-file';
import { checkRunFileBudget, metricsBound } from './run-file-budget';
import { finalSuccess, type PreparedRun } from './prepared-run';
import { setUpBroughtRun } from './train-brought';
import { readTrainFlags, type LmFlags, type TrainFlags } from './train-flags';
import { errorText } from '../util/error-text';

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
  const flags = readTrainFlags(argv);
  // Before any training: a folder, a device, a link, the --init file itself or an unwritable
  // parent fails now, not after the last update.
  const init = flags.run.family === 'lm' ? flags.run.init : undefined;
  if (flags.out) {
    prepareOutput(flags.out, 'out', init ? [{ flag: 'init', path: init }] : []);
    // The run file copies the --init model: its size counts against the lab's import limit.
    const bytes = init ? sizeOf(init) : undefined;
    if (init && bytes !== undefined)
      checkRunFileBudget(flags.name, flags.updates, { path: init, bytes });
  }
  const run =
    flags.run.family === 'env' ? setUpEnvRun(flags, flags.run) : await setUpLmRun(flags, flags.run);
  try {
    return await train(flags, run);
  } finally {
    run.dispose();
  }
}

/** A file's size, or undefined when it cannot be stat'ed (its reader then says why). */
function sizeOf(path: string): number | undefined {
  try {
    return statSync(path).size;
  } catch {
    return undefined;
  }
}

function setUpEnvRun(
  flags: TrainFlags,
  run: Extract<TrainFlags['run'], { family: 'env' }>,
): PreparedRun {
  return {
    trainer: run.algo.create(run.env, flags.config, flags.seed),
    label: `${flags.name} on ${run.env}`,
    backend: 'CPU',
    finish: async () => ({}),
    dispose: () => {},
    recorded: {},
  };
}

/** How a run ended: its exit code, and what its file's summary says. */
type Ending =
  { status: 'done' } | { status: 'unhealthy' | 'interrupted' | 'error'; reason: string };

/**
 * The update loop. The run file is written on every way out — done, unhealthy (its event is the
 * most useful record of what went wrong), an error, Ctrl-C — and every `--save-every` seconds in
 * between, so no ending loses the updates made.
 */
async function train(flags: TrainFlags, run: PreparedRun): Promise<number> {
  const { trainer, updates, logEvery } = { ...run, ...flags };
  console.log(
    `train: ${run.label}, seed ${flags.seed}, ${updates} updates, on ${run.backend}` +
      (flags.out ? `; run file ${flags.out}, saved every ${flags.saveEvery} s and at the end` : ''),
  );
  const series = new MetricSeries();
  const started = performance.now();
  let lastSave = started;
  let interrupted: NodeJS.Signals | undefined;
  // The first Ctrl-C ends the run after this update and keeps it; the handler is gone after it,
  // so a second one quits at once as usual.
  // SIGTERM (a scheduler's or `kill`'s stop) is kept the same way.
  const onInterrupt = (signal: NodeJS.Signals) => {
    interrupted = signal;
    console.log(`\ninterrupted (${signal}): ending after this update and writing the run file`);
  };
  process.once('SIGINT', onInterrupt);
  process.once('SIGTERM', onInterrupt);
  let ending: Ending = { status: 'done' };
  let overBound = false;
  let failure: unknown;
  const save = (summary: Record<string, number | string>) => {
    if (!flags.out) return '';
    const text = runFileText(flags, run, series, summary);
    writeAtomically(flags.out, text);
    return text;
  };
  try {
    for (let u = 1; u <= updates; u++) {
      series.push(await timedUpdate(trainer));
      const reported = Object.keys(series.series).length;
      if (flags.out && !overBound && reported > metricsBound(flags.name)) {
        overBound = true;
        console.log(
          `warning: ${flags.name} reports ${reported} metrics per update, more than the ` +
            `${metricsBound(flags.name)} the --updates budget assumes; the lab may refuse ${flags.out}`,
        );
      }
      // A CPU trainer's update may never leave the microtask queue; one macrotask turn lets a
      // pending SIGINT reach its handler.
      await new Promise((resolve) => setImmediate(resolve));
      if (u % logEvery === 0 || u === updates) console.log(progressLine(series, u, updates));
      if (!trainer.health.healthy) {
        ending = { status: 'unhealthy', reason: trainer.health.reason ?? 'unhealthy' };
        break;
      }
      if (interrupted) {
        const reason = `${interrupted} after update ${u} of ${updates}`;
        ending = { status: 'interrupted', reason };
        break;
      }
      if (flags.out && u < updates && performance.now() - lastSave >= flags.saveEvery * 1000) {
        try {
          save({ updates: u, seconds: (performance.now() - started) / 1000, status: 'running' });
        } catch (error) {
          // Training goes on; the final write tries again and reports its own failure.
          console.log(`warning: could not save ${flags.out}: ${errorText(error)}`);
        }
        lastSave = performance.now();
      }
    }
  } catch (error) {
    failure = error;
    ending = { status: 'error', reason: errorText(error).slice(0, 1000) };
  } finally {
    process.off('SIGINT', onInterrupt);
    process.off('SIGTERM', onInterrupt);
  }
  const seconds = (performance.now() - started) / 1000;
  const summary = {
    updates: series.length,
    seconds,
    ...(ending.status === 'done'
      ? await run.finish()
      : { status: ending.status, reason: ending.reason }),
  };
  if (ending.status === 'done')
    console.log(`done in ${seconds.toFixed(1)} s ${JSON.stringify(summary)}`);
  else console.log(`stopped (${ending.status}) after ${series.length} updates: ${ending.reason}`);
  if (flags.out) {
    let text: string;
    try {
      text = save(summary);
    } catch (error) {
      // The target or its folder changed under the run (a folder replaced by a file): the
      // updates made are kept in a file of their own, and the one-line refusal says where.
      throw rescue(flags.out, runFileText(flags, run, series, summary), error);
    }
    console.log(`wrote ${flags.out}`);
    warnIfLabRefuses(flags.out, text);
  }
  if (run.saveExtra) console.log(await run.saveExtra());
  if (failure !== undefined) throw failure;
  if (ending.status === 'done') return 0;
  // The shell's codes for a process ended by SIGINT (128 + 2) and SIGTERM (128 + 15).
  if (ending.status === 'interrupted') return interrupted === 'SIGTERM' ? 143 : 130;
  return 1;
}

function runFileText(
  flags: TrainFlags,
  run: PreparedRun,
  series: MetricSeries,
  summary: Record<string, number | string>,
): string {
  return writeCliRunFile({
    format: CLI_RUN_FORMAT,
    version: CLI_RUN_VERSION,
    algorithm: flags.name,
    task: run.label,
    seed: flags.seed,
    backend: run.backend,
    createdAt: new Date().toISOString(),
    config: run.trainer.config,
    ...run.recorded,
    metrics: series.series,
    events: [...run.trainer.events],
    summary,
  });
}

/** The CLI reads its own file with the lab's importer, so a file the lab would refuse says so. */
function warnIfLabRefuses(path: string, text: string): void {
  try {
    parseRunFile(text, runCatalog());
  } catch (error) {
    console.log(`warning: the lab's import refuses ${path}: ${errorText(error)}`);
  }
}

/**
 * The error to report when the run file could not be written to `out`: the same run is written
 * to the system's temporary folder first, and the message names that copy.
 */
function rescue(out: string, text: string, error: unknown): FlagError {
  const copy = join(tmpdir(), `agent-rl-lab-run.${process.pid}.${basename(out).slice(0, 100)}`);
  let saved: string;
  try {
    writeAtomically(copy, text, 'out');
    saved = `the run was saved to ${copy} instead`;
  } catch {
    saved = `no copy could be saved in ${tmpdir()} either`;
  }
  return new FlagError('out', `${errorText(error)}; ${saved}`);
}

/** A language-model run: model, warm-up or starting file, reference, reward model, trainer. */
async function setUpLmRun(flags: TrainFlags, run: LmFlags): Promise<PreparedRun> {
  if (run.model) return setUpBroughtRun(flags, run, run.model);
  const { config, seed, name } = flags;
  const lm = await setUpLanguageModel(run, seed);
  let backend = lm.description;
  const needsReference = run.algo.reference === 'always' || Number(config.klCoef ?? 0) > 0;
  let reference: LanguageModel | undefined;
  let rewardModel: RewardModel | undefined;
  const dispose = () => {
    lm.policy.dispose();
    reference?.dispose();
    rewardModel?.model.dispose();
  };
  try {
    if (needsReference && run.reference === 'ort') {
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
      reference = (await createLanguageModel(run.backend, lm.policy.config, params)).model;
    }
    if (run.rewardModel) {
      // The same build as the lab's worker: comparisons of the policy as RL starts, then training.
      rewardModel = await buildRewardModel({
        config: run.rewardModel,
        policy: lm.policy,
        modelConfig: lm.policy.config,
        make: (modelConfig, params) =>
          createLanguageModel(run.backend, modelConfig, params).then((r) => r.model),
        tokenizer: lm.tokenizer,
        task: lm.task,
        maxNewTokens: Number(config.maxNewTokens),
        seed,
        emit: rewardModelPrinter(run.rewardModel),
      });
    }
    const trainer = run.algo.create(
      { ...lm, reference, seed, ...(rewardModel ? { rewardModel } : {}) },
      config,
    );
    return {
      trainer,
      label: `${name} on ${lm.task.name}`,
      backend,
      finish: finalSuccess(lm.policy, lm.tokenizer, lm.task, {
        seed: seed + 1,
        samples: run.evalSamples,
      }),
      dispose,
      recorded: { ...lm.recorded, ...(run.rewardModel ? { rewardModel: run.rewardModel } : {}) },
    };
  } catch (error) {
    dispose(); // e.g. a starting policy that is never right gives no pairs to train on
    throw error;
  }
}

/** The model as the run file records it: trunk, positions, and the base of rotary ones. */
function recordedModel(config: TransformerConfig): RecordedModel {
  const { width, layers, heads } = config;
  return usesRotary(config)
    ? { width, layers, heads, positions: 'rotary', rotaryBase: rotaryBaseOf(config) }
    : { width, layers, heads, positions: 'learned' };
}

/** The task, the tokenizer and the policy for a language-model algorithm. */
async function setUpLanguageModel(run: LmFlags, seed: number) {
  const { tasks, curriculum, retained, taskOptions, init, sftSteps } = run;
  const task = tasks.first;
  const tokenizer = CharTokenizer.createDefault();
  let modelConfig: TransformerConfig = newRunModelConfig({
    vocab: tokenizer.vocabSize,
    maxChars: tasks.maxChars,
    shape: run.shape,
    valueHead: run.algo.valueHead,
    positions: run.positions,
  });
  let params = transformerLayout(modelConfig).initialize<Float32Array>(seed);
  const initBytes = init
    ? readModelFile(init, 'init', 'a checkpoint (.ckpt) or an ONNX export (.onnx)')
    : undefined;
  if (initBytes) {
    // A checkpoint or an ONNX export; the value head follows the algorithm (added or dropped).
    let started: ReturnType<typeof readStartingPolicy>;
    try {
      started = readStartingPolicy(initBytes, {
        tokenizer: tokenizer.spec,
        tokensNeeded: tasks.maxChars + 2,
        valueHead: run.algo.valueHead,
        seed,
      });
    } catch (error) {
      // A truncated or damaged file is the user's input: one line naming --init, no stack.
      throw modelFileError(error, 'init', init!);
    }
    modelConfig = started.config;
    params = started.params;
    // The lab shows this note on the run card; the command line must not drop it either.
    if (started.note) console.warn(`note (--init=${init}): ${started.note}`);
  }
  const { model: policy, description } = await createLanguageModel(
    run.backend,
    modelConfig,
    params,
  );
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
    policy,
    tokenizer,
    task,
    ...(schedule ? { curriculum: schedule } : {}),
    ...(tasks.retained ? { retained: tasks.retained } : {}),
    description,
    // For the run file: the rungs set the options of a run with a curriculum; the lab builds the
    // same model from the same start (the file's bytes, or a fresh one and the warm-up).
    recorded: {
      model: recordedModel(modelConfig),
      ...(curriculum ? { curriculum } : { taskOptions }),
      ...(retained ? { retained } : {}),
      ...(init && initBytes
        ? { init: { file: basename(init), bytes: bytesToBase64(initBytes) } }
        : { sftSteps }),
    },
  };
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
