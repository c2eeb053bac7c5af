/**
 * LoRA-GRPO on a real model's files, proven without downloads: the shipped tiny chat model
 * (public/models/hf/tiny-chat: Llama architecture, its own BPE tokenizer and ChatML template,
 * warmed up on two-digit addition with reversed answers) trained by the lab's GRPO trainer
 * (src/rl/grpo.ts, unchanged) through LoRA adapters on every linear layer, the base frozen
 * (src/models/hf/llama-lm-cpu.ts). Each run is measured on held-out prompts before and after:
 * strict success (the answer right and its turn ended) of sampled answers at temperature 1, the
 * same prompts and sampler seed for every run, so that runs differ only in what training did.
 *
 * The claim: a gain of at least 0.3 on every seed, while the matched controls — the same seed,
 * prompts and adapters' initial values with lr 1e-9, and LoRA on no module (nothing to train) —
 * reach it on none.
 */
import { chatTokenizer } from '../../src/agents/chat-task';
import { createTokenTask } from '../../src/agents/token-task-registry';
import { loadLmModel, loadLmTokenizer } from '../../src/cli/lm-model';
import { resolveLoraTargets } from '../../src/models/hf/llama-lora';
import { DEFAULT_GRPO_CONFIG, type GrpoConfig } from '../../src/rl/grpo-config';
import { LoraGrpoSession, loraDpoConfig } from '../../src/rl/lora-grpo-session';
import { LORA_RECIPES } from '../../src/worker/lora-recipes';

export const TINY_CHAT_DIR = 'public/models/hf/tiny-chat';

/** The recipe: TRL's LoRA defaults for RL where they apply (all linear layers, a small rank). */
export const LORA_GRPO_RECIPE = {
  rank: 8,
  alpha: 16,
  targets: 'all-linear' as string | string[],
  updates: 40,
  grpo: {
    ...DEFAULT_GRPO_CONFIG,
    lr: 5e-3,
    iterations: 1,
    promptsPerUpdate: 16,
    groupSize: 8,
    maxNewTokens: 8,
  } satisfies GrpoConfig,
};

/** The run and its two controls: what each changes in the recipe. */
export const LORA_GRPO_ARMS = {
  'LoRA-GRPO': {},
  'lr 1e-9': { lr: 1e-9 },
  'LoRA on no module': { targets: [] as string[] },
} as const satisfies Record<string, { lr?: number; targets?: string[] }>;
export type LoraGrpoArm = keyof typeof LORA_GRPO_ARMS;

/** The gain in held-out strict success a run must reach. */
export const LORA_GRPO_GAIN = 0.3;

export interface LoraGrpoRow {
  /** The arm, or for the recipes' table the recipe's short name. */
  arm: LoraGrpoArm | string;
  seed: number;
  /** Held-out strict success before and after training. */
  before: number;
  after: number;
  gain: number;
  /** Training strict accuracy of each update's batch. */
  curve: number[];
  /** Seconds of training (the two evaluations excluded). */
  seconds: number;
}

/**
 * One run of `arm` on `seed`; with `recipe`, the recipe's algorithm and settings on the recipe's
 * batch and lr (the page's Algorithm choice, src/worker/lora-recipes.ts).
 */
export async function loraGrpoRun(
  seed: number,
  arm: LoraGrpoArm,
  recipe?: (typeof LORA_RECIPES)[number],
): Promise<LoraGrpoRow> {
  const change: { lr?: number; targets?: readonly string[] } = LORA_GRPO_ARMS[arm];
  const { grpo } = LORA_GRPO_RECIPE;
  const lr = change.lr ?? grpo.lr;
  const trainer =
    recipe?.algorithm === 'dpo'
      ? { dpo: loraDpoConfig({ ...grpo, lr }) }
      : { grpo: { ...grpo, ...recipe?.config, lr } };
  const { model, params } = await loadLmModel(TINY_CHAT_DIR);
  const session = new LoraGrpoSession({
    spec: model.spec,
    base: params,
    tokenizer: chatTokenizer(await loadLmTokenizer(TINY_CHAT_DIR)),
    task: createTokenTask('addition', { minDigits: 1, maxDigits: 2, reverseAnswer: true }),
    lora: {
      rank: LORA_GRPO_RECIPE.rank,
      alpha: LORA_GRPO_RECIPE.alpha,
      targets: resolveLoraTargets(change.targets ?? LORA_GRPO_RECIPE.targets),
    },
    ...trainer,
    seed,
  });
  const before = await session.heldOut();
  const started = performance.now();
  const curve: number[] = [];
  for (let u = 0; u < LORA_GRPO_RECIPE.updates; u++) {
    curve.push((await session.update())['reward/strict_accuracy']!);
  }
  const seconds = (performance.now() - started) / 1000;
  const after = await session.heldOut();
  return { arm: recipe?.short ?? arm, seed, before, after, gain: after - before, curve, seconds };
}

/** Every arm on every seed, with the pass count of each arm and a table. */
export async function loraGrpoBenchmark(
  seeds: readonly number[],
  log: (line: string) => void = console.log,
): Promise<{ rows: LoraGrpoRow[]; passes: Record<LoraGrpoArm, number>; table: string }> {
  const rows: LoraGrpoRow[] = [];
  for (const seed of seeds) {
    for (const arm of Object.keys(LORA_GRPO_ARMS) as LoraGrpoArm[]) {
      const row = await loraGrpoRun(seed, arm);
      rows.push(row);
      log(
        `lora-grpo: ${arm}, seed ${seed}: held-out strict success ${pct(row.before)} → ` +
          `${pct(row.after)} (gain ${signed(row.gain)}) in ${row.seconds.toFixed(1)} s`,
      );
    }
  }
  const passes = Object.fromEntries(
    (Object.keys(LORA_GRPO_ARMS) as LoraGrpoArm[]).map((arm) => [
      arm,
      rows.filter((r) => r.arm === arm && r.gain >= LORA_GRPO_GAIN).length,
    ]),
  ) as Record<LoraGrpoArm, number>;
  const table = [
    'arm                 seed  before  after   gain   train s',
    ...rows.map(
      (r) =>
        `${r.arm.padEnd(19)} ${String(r.seed).padStart(4)}  ${pct(r.before).padStart(6)} ` +
        `${pct(r.after).padStart(6)} ${signed(r.gain).padStart(6)} ${r.seconds.toFixed(1).padStart(9)}`,
    ),
    ...(Object.keys(passes) as LoraGrpoArm[]).map(
      (arm) => `${arm}: gain ≥ ${LORA_GRPO_GAIN} on ${passes[arm]} of ${seeds.length} seeds`,
    ),
  ].join('\n');
  return { rows, passes, table };
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const signed = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(2)}`;

/**
 * Every recipe the page offers (GRPO and its variants, DPO) with the recipe's batch and lr, on
 * each seed: which of them lift held-out strict success by LORA_GRPO_GAIN here. The control is
 * loraGrpoBenchmark's (lr 1e-9 does not train under any recipe).
 */
export async function loraRecipesBenchmark(
  seeds: readonly number[],
  log: (line: string) => void = console.log,
): Promise<{ rows: LoraGrpoRow[]; table: string }> {
  const rows: LoraGrpoRow[] = [];
  for (const recipe of LORA_RECIPES) {
    for (const seed of seeds) {
      const row = await loraGrpoRun(seed, 'LoRA-GRPO', recipe);
      rows.push(row);
      log(
        `lora-recipes: ${recipe.short}, seed ${seed}: ${pct(row.before)} → ${pct(row.after)} ` +
          `(gain ${signed(row.gain)}) in ${row.seconds.toFixed(1)} s`,
      );
    }
  }
  const table = [
    'recipe          seeds passing (gain ≥ 0.3)   gains',
    ...LORA_RECIPES.map((recipe) => {
      const mine = rows.filter((r) => r.arm === recipe.short);
      const passing = mine.filter((r) => r.gain >= LORA_GRPO_GAIN).length;
      return `${recipe.short.padEnd(15)} ${`${passing} of ${mine.length}`.padEnd(28)} ${mine.map((r) => signed(r.gain)).join(' ')}`;
    }),
  ].join('\n');
  return { rows, table };
}
