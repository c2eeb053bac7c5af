/**
 * `npm run build:models [-- --only=reverse,copy] [--out=public/models] [--steps-scale=1]
 *                                   [--progress-samples=1] [--manifest=src/models/shipped-manifest.json]
 *                                   [--positions=learned|rotary]`
 *
 * The shipped starting points: small transformers warmed up by supervised fine-tuning (SFT) on the
 * lessons' token tasks, so a lesson starts RL at once instead of waiting for SFT. Deterministic:
 * fixed seeds, fixed step counts, the CPU backend (single-threaded float32 in JavaScript), so a
 * rebuild reproduces every file byte for byte (checked here; on another Node version Math.exp and
 * Math.tanh, which JavaScript does not pin to the last bit, could move the last bits).
 *
 * For each model of MODELS, in public/models/:
 *   <name>.ckpt  our checkpoint format (lm-checkpoint.ts): weights, config, tokenizer, step, seed,
 *                and the recipe in meta. Weights only, no AdamW moments: RL starts a fresh
 *                optimizer (as verl and TRL do after SFT), and the file is a third of the size.
 *   <name>.onnx  the same weights as ONNX (export-transformer.ts), metadata alike.
 * and, in src/models/shipped-manifest.json (bundled by the app): per model the task and its options, the config, the SFT recipe, the greedy
 * success rate on EVAL_PROMPTS fixed prompts, and bytes + sha256 of both files
 * (tests/onnx/shipped-models.test.ts checks every entry against the files). A model warmed up on
 * a mixture of agent tasks (`mix`) also lists every part with its share and greedy success.
 *
 * Config (the lab's small model): width 64, 2 layers, 4 heads, tied embeddings, value head on (so
 * PPO can start from the same file; GRPO ignores it), context = task.maxChars + 10 (the longest
 * part of a mixed warm-up, or `contextChars` when more), at most 256.
 *
 * And `tiny-chat` (scripts/build-tiny-chat.ts): a Llama-family model in Hugging Face's file layout
 * with its own BPE tokenizer and chat template, in public/models/hf/tiny-chat/, listed under
 * `hfModels` in the manifest with its files' bytes and sha256 (tests/models/hf/tiny-chat.test.ts).
 * `--only=tiny-chat` builds it alone; the other models' files and entries are left as they are.
 *
 * --only builds a subset (the manifest keeps the other entries as they are); --steps-scale
 * multiplies every step count (a quick look at timing; the manifest records the steps used);
 * --progress-samples=64 prints a greedy success rate every 50 steps (for choosing step counts;
 * the weights do not change); --positions builds with learned or rotary positions whatever the
 * plan says (to compare the two; write such builds elsewhere with --out and --manifest).
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { CliArgs, FlagError } from '../src/cli/args';
import { readBoundedFile } from '../src/cli/model-file';
import { prepareOutput, writeAtomically } from '../src/cli/output-file';
import {
  createTokenTask,
  TOKEN_TASKS,
  type TokenTaskName,
} from '../src/agents/token-task-registry';
import { encodeCheckpoint } from '../src/models/checkpoint';
import { layoutToTensors } from '../src/models/layout-tensors';
import { TRANSFORMER_KIND } from '../src/models/lm-checkpoint';
import { CpuLanguageModel } from '../src/models/lm-cpu';
import { CharTokenizer } from '../src/models/tokenizer';
import {
  POSITION_KINDS,
  type PositionKind,
  type TransformerConfig,
} from '../src/models/transformer-config';
import { transformerLayout } from '../src/models/transformer-params';
import { exportTransformerOnnx } from '../src/onnx/export-transformer';
import { evaluateTask } from '../src/rl/evaluate';
import { DEFAULT_SFT_CONFIG, runSft, type SftConfig, type SftProgress } from '../src/rl/sft';
import { isAgentTask, type AgentTask } from '../src/agents/agent-task';
import { mixedAgentTask } from '../src/agents/mixed-task';
import { shoppingDifficultyLevels, shoppingTask } from '../src/agents/tasks/shopping';
import type { TokenTask } from '../src/envs/token-tasks/types';
import type { CharsetTask } from '../src/envs/token-tasks/shared';
import { noisyDemonstrations, type DemoNoise } from '../src/rl/noisy-demonstrations';
import {
  buildTinyChat,
  TINY_CHAT_FILES,
  TINY_CHAT_NAME,
  type TinyChatEntry,
} from './build-tiny-chat';

/** Characters of the shopping curriculum's top rung: a model that starts it must hold them. */
const SHOPPING_TOP_RUNG_CHARS = shoppingTask(shoppingDifficultyLevels.at(-1)!).maxChars;

/** Every option, defaults filled in: the manifest stays exact if a task's defaults change later. */
function fullOptions(task: TokenTaskName, options: Record<string, unknown>) {
  return { ...TOKEN_TASKS[task].defaults, ...options } as Record<string, unknown>;
}

/** The task the warm-up trains on: the plan's own, or the mixture of it and `mix`. */
function warmUpTask(plan: ModelPlan, own: TokenTask): TokenTask {
  if (plan.demoNoise !== undefined) {
    if (isAgentTask(own) || !('answerChars' in own) || plan.mix) {
      throw new Error(`${plan.name}: demoNoise is for single-turn tasks without a mix`);
    }
    return noisyDemonstrations(own as CharsetTask, plan.demoNoise);
  }
  if (!plan.mix) return own;
  const parts = [
    { task: own, weight: 1 },
    ...plan.mix.map((p) => ({ task: createTokenTask(p.task, p.options), weight: p.weight })),
  ];
  const agents = parts.filter((p): p is { task: AgentTask; weight: number } => isAgentTask(p.task));
  if (agents.length !== parts.length)
    throw new Error(`${plan.name}: only agent tasks can be mixed`);
  return mixedAgentTask(`${plan.name} warm-up`, agents);
}

/** Greedy success is measured on this many prompts, drawn with EVAL_SEED (the same for all). */
export const EVAL_PROMPTS = 256;
export const EVAL_SEED = 20_251_202;
export const MANIFEST_VERSION = 1;
/** Where the manifest lives, from the repository root: bundled by the app, read by the tests. */
export const SHIPPED_MANIFEST = 'src/models/shipped-manifest.json';

export interface ShippedRecipe {
  /** SFT optimizer steps. */
  steps: number;
  /**
   * Mixed or noisy warm-ups: SFT steps on the plan's own task alone (clean demonstrations) before
   * the `steps` on the mixture or the noisy demonstrations, so a skill the clean ones teach
   * (copying a tool's result, reversing a string) is learned before demonstrations of the same
   * prompts answered another way join in.
   */
  ownFirstSteps?: number;
  /** Sequences per step. */
  batchSize: number;
  /** AdamW learning rate (other optimizer settings: DEFAULT_SFT_CONFIG.optimizer). */
  lr: number;
  /** Seed of the initial weights and of the training prompts. */
  seed: number;
}

interface ModelPlan {
  /** File stem in public/models/. */
  name: string;
  task: TokenTaskName;
  options: Record<string, unknown>;
  recipe: ShippedRecipe;
  /**
   * Agent tasks only: more tasks in the warm-up, each with its share of the samples (the plan's
   * own task has weight 1). The model then knows several tasks, and a lesson can train one by RL
   * while it watches another (the retained task).
   */
  mix?: readonly WarmUpPart[];
  /** Characters the context must hold when more than the tasks' own (a curriculum's top rung). */
  contextChars?: number;
  /**
   * Single-turn tasks: the warm-up imitates a noisy demonstrator that replaces answer characters
   * at random (src/rl/noisy-demonstrations.ts), so the start samples right answers rarely but
   * has them within reach: room and signal for RL.
   */
  demoNoise?: DemoNoise;
  /** How the lessons sample from this start: pass@1 and pass@G are measured so. */
  rlSampling: { temperature: number; groupSize: number };
  /** How the model knows positions; learned (GPT-2's wpe) when absent. */
  positions?: PositionKind;
}

interface WarmUpPart {
  task: TokenTaskName;
  options: Record<string, unknown>;
  weight: number;
}

/**
 * The lessons' tasks. Options: the lab's defaults (what a lesson's form starts with; also what
 * bench:learn trains), multiply at its first curriculum rung. Steps were chosen so that the whole
 * build stays near ten minutes on two busy cores and every model starts RL with a success rate
 * well between 0 and 1 (GRPO learns nothing from groups that all fail or all succeed).
 */
export const MODELS: readonly ModelPlan[] = [
  {
    name: 'reverse',
    task: 'reverse',
    options: { minLength: 3, maxLength: 6, alphabet: 'abcde' },
    recipe: { steps: 200, batchSize: 32, lr: 3e-3, seed: 1 },
    rlSampling: { temperature: 1, groupSize: 8 },
  },
  {
    name: 'copy',
    task: 'copy',
    options: { minLength: 3, maxLength: 6, alphabet: 'abcde' },
    recipe: { steps: 300, batchSize: 32, lr: 3e-3, seed: 1 },
    rlSampling: { temperature: 1, groupSize: 8 },
  },
  {
    // The learning lessons' start: copy warmed up on demonstrations that are wholly right 30% of
    // the time whatever their length (letters replaced at random, more often in short answers).
    // It writes the right letter most often at every position but samples a whole right answer
    // about one time in four, and 8 samples of a prompt hold a right one for 7 prompts in 8: RL
    // against the verifier sharpens it. With 30% of the letters replaced in every answer (the
    // previous start) a 3-letter demonstration was right 44% of the time and a 6-letter one 19%:
    // pass@1 was as low (0.23) but pass@8 0.75, long prompts giving all-wrong groups.
    // Seed 2: with seed 1 this recipe never learned to copy in 1,500 steps (loss 1.25, greedy
    // 0.8%); seeds 2, 3 and 4 all did (greedy 95%, 98%, 93%; pass@1 0.26, 0.25, 0.29; pass@8
    // 0.875, 0.879, 0.906; bench/results/2026-12-05T21-05-00Z-copy-noisy-start-variants.json).
    // 1,500 steps: the loss reaches the noise's floor.
    name: 'copy-noisy',
    task: 'copy',
    options: { minLength: 3, maxLength: 6, alphabet: 'abcde' },
    demoNoise: { wholeAnswerRight: 0.3 },
    recipe: { steps: 1500, batchSize: 32, lr: 3e-3, seed: 2 },
    rlSampling: { temperature: 1, groupSize: 8 },
  },
  {
    // The lab's reverse start for RL, made as copy-noisy is (demonstrations wholly right 30% of
    // the time at every length), after 2,000 clean steps that teach reversing first: greedy
    // 96.5%, pass@1 0.33, pass@8 0.95. From noisy demonstrations alone (1,500 steps, seed 1) the
    // model never learned to reverse (loss 1.32, greedy 0.8%); after 400 clean steps (greedy 75%
    // then) the noisy 1,000 left greedy 44.5%, pass@1 0.12, pass@8 0.51.
    name: 'reverse-noisy',
    task: 'reverse',
    options: { minLength: 3, maxLength: 6, alphabet: 'abcde' },
    demoNoise: { wholeAnswerRight: 0.3 },
    recipe: { ownFirstSteps: 2000, steps: 600, batchSize: 32, lr: 3e-3, seed: 1 },
    rlSampling: { temperature: 1, groupSize: 8 },
  },
  {
    // The lab's sort start for RL, made as reverse-noisy is (sorting is learned from clean
    // demonstrations by about step 800): greedy 99.6%, pass@1 0.36, pass@8 0.97.
    name: 'sort-noisy',
    task: 'sort',
    options: { minLength: 3, maxLength: 6, alphabet: 'abcde' },
    demoNoise: { wholeAnswerRight: 0.3 },
    recipe: { ownFirstSteps: 2000, steps: 600, batchSize: 32, lr: 3e-3, seed: 1 },
    rlSampling: { temperature: 1, groupSize: 8 },
  },
  {
    name: 'addition',
    task: 'addition',
    options: { minDigits: 1, maxDigits: 2, reverseAnswer: false },
    recipe: { steps: 400, batchSize: 32, lr: 3e-3, seed: 1 },
    rlSampling: { temperature: 1, groupSize: 8 },
  },
  {
    // The lab's addition start for RL. Sums written least significant digit first (the task's
    // reverseAnswer option: a run from it takes the model's options), 2,000 clean steps (greedy
    // 97% then), then demonstrations wholly right 40% of the time: greedy 90.6%, pass@1 0.30,
    // pass@8 0.875. Sums written as usual were not learned well enough for it: 3,000 clean steps
    // reached 80–89% greedy, and after 600 noisy steps (30% wholly right) pass@1 was 0.09 and
    // pass@8 0.50 (1,500 noisy steps alone: 0.06 / 0.35). At 30% wholly right the
    // reversed sums gave pass@8 0.785 (2,000 clean steps) and 0.715 (3,000).
    name: 'addition-noisy',
    task: 'addition',
    options: { minDigits: 1, maxDigits: 2, reverseAnswer: true },
    demoNoise: { wholeAnswerRight: 0.4 },
    recipe: { ownFirstSteps: 2000, steps: 600, batchSize: 32, lr: 3e-3, seed: 1 },
    rlSampling: { temperature: 1, groupSize: 8 },
  },
  {
    // The lab's countdown start: clean demonstrations (the sampler's reference expressions). Not
    // noisy ones: with every character of an expression at stake they leave too few right
    // answers for RL (the recipes tried: docs/cli.md).
    name: 'countdown',
    task: 'countdown',
    options: {},
    recipe: { steps: 5000, batchSize: 32, lr: 3e-3, seed: 1 },
    rlSampling: { temperature: 1, groupSize: 8 },
  },
  {
    // The tool-use capstone's start: two-digit factors, and a demonstrator that calls the
    // calculator on half the problems and answers from memory on the other half (the same
    // prompts, weights 1 : 1). The model knows the call syntax and how to copy a result, but not
    // that a call pays: from its weights it is right on almost no two-digit product. Sampled at
    // 0.85 it calls in 0.28 of episodes, so one answer in four is right and 8 samples of a
    // problem hold a right one for 4 problems in 5: room to learn, and groups with signal.
    // With 1–2 digit factors (weights 1 : 3) the products of two one-digit factors, a quarter of
    // the prompts, were answered from memory 60% of the time: success started at 0.25 on average
    // but at 0.45 on an update whose 8 prompts drew many of them, and pass@8 was 0.60.
    // The calc demonstrations come first alone (400 steps), then the mixture (800). Trained on
    // the mixture from the start, the model copied four-digit results (469 of 476 sampled
    // episodes whose call returned the product) but not three-digit ones (14 of 86: the first two
    // digits, then a wrong one), which capped RL near 0.9. Not positions: with rotary positions
    // it copied 10 of 89. Calc demonstrations alone copy 375 of 376; learned first, the copying
    // survives the mixture: 88 of 88 and 465 of 468 (bench/learn/result-copy.ts, 256 prompts × 8
    // at 0.85), and pass@8 rises from 0.81 to 0.90.
    name: 'multiply',
    task: 'multiply',
    options: { minDigits: 2, maxDigits: 2, useTools: true },
    mix: [
      { task: 'multiply', options: { minDigits: 2, maxDigits: 2, useTools: false }, weight: 1 },
    ],
    recipe: { ownFirstSteps: 400, steps: 800, batchSize: 16, lr: 3e-3, seed: 1 },
    rlSampling: { temperature: 0.85, groupSize: 8 },
  },
  {
    // Two tools and two tasks: shopping's first two rungs (one price lookup; a lookup, then calc
    // for the quantity) and multiply with calc, half the samples each. The context holds the
    // shopping curriculum's top rung (three items), so a curriculum run can start from it.
    name: 'shopping',
    task: 'shopping',
    options: { items: 1, maxQuantity: 9 },
    mix: [
      { task: 'shopping', options: { items: 1, maxQuantity: 1 }, weight: 1 },
      { task: 'multiply', options: { minDigits: 1, maxDigits: 2, useTools: true }, weight: 2 },
    ],
    contextChars: SHOPPING_TOP_RUNG_CHARS,
    recipe: { steps: 600, batchSize: 16, lr: 3e-3, seed: 1 },
    rlSampling: { temperature: 0.7, groupSize: 4 },
  },
  {
    // The forgetting lesson's start: the multiply start's two halves (two-digit factors, calc on
    // half the demonstrations, memory on the rest) and, as a third of the samples, one-digit
    // products answered from memory with no tool offered. Both kinds of prompt read "a*b=", so
    // RL that teaches the two-digit prompts to call the calculator pushes on the same first
    // answer token the one-digit prompts must keep: the retained task is in the way of the
    // trained one, not beside it.
    name: 'multiply-recall',
    task: 'multiply',
    options: { minDigits: 2, maxDigits: 2, useTools: true },
    mix: [
      { task: 'multiply', options: { minDigits: 2, maxDigits: 2, useTools: false }, weight: 1 },
      { task: 'multiply', options: { minDigits: 1, maxDigits: 1, useTools: false }, weight: 1 },
      { task: 'multiply', options: { minDigits: 1, maxDigits: 1, useTools: true }, weight: 0.5 },
    ],
    recipe: { steps: 800, batchSize: 16, lr: 3e-3, seed: 1 },
    rlSampling: { temperature: 0.85, groupSize: 8 },
  },
];

/** The lab's small model for `maxChars` characters of task text. */
export function shippedConfig(
  vocab: number,
  maxChars: number,
  positions: PositionKind = 'learned',
): TransformerConfig {
  return {
    vocab,
    context: Math.min(256, maxChars + 10),
    width: 64,
    layers: 2,
    heads: 4,
    tiedEmbeddings: true,
    valueHead: true,
    ...(positions === 'rotary' ? { positions } : {}),
  };
}

export interface ShippedFile {
  file: string;
  bytes: number;
  sha256: string;
}

export interface ManifestEntry {
  name: string;
  task: TokenTaskName;
  taskOptions: Record<string, unknown>;
  /**
   * A mixed warm-up: every part, the entry's own task first, with its share of the samples and
   * its greedy success (on `evalPrompts` prompts drawn with `evalSeed`).
   */
  warmUp?: {
    task: TokenTaskName;
    taskOptions: Record<string, unknown>;
    weight: number;
    successRate: number;
  }[];
  /** The built task's display name, e.g. "reverse(3–6)". */
  taskLabel: string;
  config: TransformerConfig;
  recipe: ShippedRecipe & { backend: 'cpu'; optimizer: SftConfig['optimizer'] };
  /** Greedy (temperature 0) success over `evalPrompts` prompts drawn with `evalSeed`. */
  successRate: number;
  /**
   * Sampled as the lessons sample (temperature, G answers a prompt) on the same prompts: pass@1,
   * the mean success of one answer, and pass@G, the prompts with a right answer among G — the
   * share of GRPO groups that can carry signal.
   */
  sampled: { temperature: number; groupSize: number; passAt1: number; passAtG: number };
  /** The warm-up's noisy demonstrator, when it had one. */
  demoNoise?: DemoNoise;
  evalPrompts: number;
  evalSeed: number;
  checkpoint: ShippedFile;
  onnx: ShippedFile;
}

export interface Manifest {
  version: number;
  description: string;
  models: ManifestEntry[];
  /** Models in Hugging Face's file layout, each a folder under <out>/hf/. */
  hfModels?: TinyChatEntry[];
}

export function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** SFT one model and write its two files; returns its manifest entry. */
async function buildOne(
  plan: ModelPlan,
  outDir: string,
  stepsScale: number,
  progressSamples: number,
  positionsOverride?: PositionKind,
): Promise<ManifestEntry> {
  const started = performance.now();
  const tokenizer = CharTokenizer.createDefault();
  const task = createTokenTask(plan.task, plan.options);
  const taskOptions = fullOptions(plan.task, plan.options);
  const warmUp = warmUpTask(plan, task);
  const config = shippedConfig(
    tokenizer.vocabSize,
    Math.max(warmUp.maxChars, plan.contextChars ?? 0),
    positionsOverride ?? plan.positions,
  );
  const layout = transformerLayout(config);
  const scaled = (steps: number) => Math.max(1, Math.round(steps * stepsScale));
  const recipe: ShippedRecipe = {
    ...plan.recipe,
    steps: scaled(plan.recipe.steps),
    ...(plan.recipe.ownFirstSteps ? { ownFirstSteps: scaled(plan.recipe.ownFirstSteps) } : {}),
  };
  const sft: SftConfig = {
    ...DEFAULT_SFT_CONFIG,
    steps: recipe.steps,
    batchSize: recipe.batchSize,
    seed: recipe.seed,
    // A progress line every 50 steps, with runSft's own greedy check on `progressSamples` prompts
    // (its evaluations draw from their own seeded stream: the training prompts are unchanged).
    evalEvery: 50,
    evalSamples: progressSamples,
    optimizer: { ...DEFAULT_SFT_CONFIG.optimizer, lr: recipe.lr },
  };
  const model = new CpuLanguageModel(config, layout.initialize<Float32Array>(recipe.seed));
  const progress =
    (stage: string) =>
    ({ step, metrics, evaluation }: SftProgress) => {
      const loss = metrics[metrics.length - 1]?.loss;
      const seconds = ((performance.now() - started) / 1000).toFixed(0);
      const rate =
        evaluation && progressSamples > 1
          ? `  success ${(evaluation.successRate * 100).toFixed(0)}% of ${progressSamples}`
          : '';
      console.log(
        `  ${plan.name}${stage}: step ${step}  loss ${loss?.toFixed(4)}${rate}  ${seconds} s`,
      );
    };
  const totalSteps = recipe.steps + (recipe.ownFirstSteps ?? 0);
  if (recipe.ownFirstSteps) {
    if (!plan.mix && plan.demoNoise === undefined) {
      throw new Error(`${plan.name}: ownFirstSteps is for mixed or noisy warm-ups`);
    }
    // Its own prompts: a seed of its own, so the mixed stage's prompts stay as without it.
    const first = { ...sft, steps: recipe.ownFirstSteps, seed: recipe.seed + 1 };
    await runSft(model, tokenizer, task, first, progress(' (own task first)'));
  }
  await runSft(model, tokenizer, warmUp, sft, progress(''));
  const evaluation = await evaluateTask(model, tokenizer, task, {
    samples: EVAL_PROMPTS,
    seed: EVAL_SEED,
  });
  const { temperature, groupSize } = plan.rlSampling;
  const sampledEval = await evaluateTask(model, tokenizer, task, {
    samples: EVAL_PROMPTS,
    seed: EVAL_SEED,
    repeats: groupSize,
    sampling: { temperature },
  });
  const sampled = {
    temperature,
    groupSize,
    passAt1: sampledEval.successRate,
    passAtG: sampledEval.promptPassRate,
  };
  const mixed = plan.mix
    ? [{ task: plan.task, options: plan.options, weight: 1 }, ...plan.mix]
    : [];
  const parts: NonNullable<ManifestEntry['warmUp']> = [];
  for (const part of mixed) {
    const measured = await evaluateTask(
      model,
      tokenizer,
      createTokenTask(part.task, part.options),
      {
        samples: EVAL_PROMPTS,
        seed: EVAL_SEED,
      },
    );
    parts.push({
      task: part.task,
      taskOptions: fullOptions(part.task, part.options),
      weight: part.weight,
      successRate: measured.successRate,
    });
    console.log(
      `    warm-up part ${part.task} ${JSON.stringify(part.options)}: greedy ${(measured.successRate * 100).toFixed(1)}%`,
    );
  }
  const params = await model.readParams();
  model.dispose();

  const meta = {
    task: plan.task,
    taskOptions: JSON.stringify(taskOptions),
    successRate: evaluation.successRate,
    recipe: JSON.stringify(recipe),
  };
  const ckpt = encodeCheckpoint({
    model: { kind: TRANSFORMER_KIND, config },
    tokenizer: tokenizer.spec,
    step: totalSteps,
    seed: recipe.seed,
    tensors: layoutToTensors(layout, params),
    meta,
  });
  const onnx = exportTransformerOnnx(config, params, tokenizer.spec, {
    meta: { ...meta, step: totalSteps },
    docString: `agent-rl-lab starting point: ${task.name}, SFT ${totalSteps} steps`,
  });
  const files = { checkpoint: `${plan.name}.ckpt`, onnx: `${plan.name}.onnx` };
  writeAtomically(join(outDir, files.checkpoint), ckpt);
  writeAtomically(join(outDir, files.onnx), onnx);
  const seconds = (performance.now() - started) / 1000;
  console.log(
    `${plan.name}: ${task.name}, ${totalSteps} SFT steps → greedy success ` +
      `${(evaluation.successRate * 100).toFixed(1)}% of ${EVAL_PROMPTS}; sampled at ` +
      `temperature ${temperature}: pass@1 ${(sampled.passAt1 * 100).toFixed(1)}%, ` +
      `pass@${groupSize} ${(sampled.passAtG * 100).toFixed(1)}%; ` +
      `${ckpt.length} + ${onnx.length} bytes (${seconds.toFixed(0)} s)`,
  );
  for (const e of evaluation.examples.slice(0, 3)) {
    console.log(
      `    ${JSON.stringify(e.prompt)} → ${JSON.stringify(e.completion)} ${e.correct ? 'ok' : 'wrong'}`,
    );
  }
  return {
    name: plan.name,
    task: plan.task,
    taskOptions,
    ...(parts.length > 0 ? { warmUp: parts } : {}),
    taskLabel: task.name,
    config,
    recipe: { ...recipe, backend: 'cpu', optimizer: sft.optimizer },
    successRate: evaluation.successRate,
    sampled,
    ...(plan.demoNoise !== undefined ? { demoNoise: plan.demoNoise } : {}),
    evalPrompts: EVAL_PROMPTS,
    evalSeed: EVAL_SEED,
    checkpoint: { file: files.checkpoint, bytes: ckpt.length, sha256: sha256(ckpt) },
    onnx: { file: files.onnx, bytes: onnx.length, sha256: sha256(onnx) },
  };
}

/** A manifest is a few kilobytes; anything past 1 MiB is not one. */
export const MAX_MANIFEST_BYTES = 1024 * 1024;

/** The manifest at `path` (the value of `--<flag>`), read with a size bound and parsed. */
export function readManifest(path: string, flag: string): Manifest {
  const bytes = readBoundedFile(path, flag, MAX_MANIFEST_BYTES, 'a manifest is a few kilobytes');
  try {
    return JSON.parse(new TextDecoder().decode(bytes)) as Manifest;
  } catch (error) {
    throw new FlagError(flag, `--${flag}=${path} is not JSON (${(error as Error).message})`);
  }
}

export async function main(argv: string[]): Promise<number> {
  const args = new CliArgs(argv);
  const only = args.optional('only')?.split(',').filter(Boolean);
  const outDir = args.string('out', 'public/models');
  // The manifest is source, not a served asset: the app bundles it (public/ files cannot be
  // imported), and it names the files in outDir that the page fetches.
  const manifestPath = args.string('manifest', SHIPPED_MANIFEST);
  const stepsScale = args.number('steps-scale', 1);
  const progressSamples = args.number('progress-samples', 1);
  // Absent: each plan's own positions.
  const positions =
    args.optional('positions') === undefined
      ? undefined
      : args.choice('positions', POSITION_KINDS, 'learned');
  args.checkAllUsed();
  const known = [...MODELS.map((m) => m.name), TINY_CHAT_NAME];
  const unknown = (only ?? []).filter((n) => !known.includes(n));
  if (unknown.length > 0) {
    throw new Error(`--only: unknown model(s) ${unknown.join(', ')}; known: ${known.join(', ')}`);
  }
  const buildTiny = !only || only.includes(TINY_CHAT_NAME);
  // Every file this build writes, checked before the first model trains (hours, at full scale).
  for (const plan of MODELS) {
    if (only && !only.includes(plan.name)) continue;
    for (const file of [`${plan.name}.ckpt`, `${plan.name}.onnx`]) {
      prepareOutput(join(outDir, file), 'out');
    }
  }
  if (buildTiny) {
    for (const file of TINY_CHAT_FILES)
      prepareOutput(join(outDir, 'hf', TINY_CHAT_NAME, file), 'out');
  }
  prepareOutput(manifestPath, 'manifest');
  const previousManifest =
    only && existsSync(manifestPath) ? readManifest(manifestPath, 'manifest') : undefined;
  const previous: ManifestEntry[] = previousManifest?.models ?? [];
  const started = performance.now();
  const built = new Map<string, ManifestEntry>();
  for (const plan of MODELS) {
    if (only && !only.includes(plan.name)) continue;
    built.set(plan.name, await buildOne(plan, outDir, stepsScale, progressSamples, positions));
  }
  const models = MODELS.flatMap((m) => {
    const entry = built.get(m.name) ?? previous.find((p) => p.name === m.name);
    return entry ? [entry] : [];
  });
  const hfModels = buildTiny
    ? [
        await buildTinyChat(join(outDir, 'hf'), {
          stepsScale,
          evalPrompts: EVAL_PROMPTS,
          evalSeed: EVAL_SEED,
        }),
      ]
    : (previousManifest?.hfModels ?? []);
  const manifest: Manifest = {
    version: MANIFEST_VERSION,
    description:
      'SFT-warmed starting checkpoints for the lessons, built by `npm run build:models` (scripts/build-models.ts)',
    models,
    ...(hfModels.length > 0 ? { hfModels } : {}),
  };
  writeAtomically(manifestPath, `${JSON.stringify(manifest, null, 2)}\n`, 'manifest');
  console.log(
    `wrote ${manifestPath} (${models.length} models) in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  return 0;
}
