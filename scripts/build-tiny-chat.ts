/**
 * The shipped tiny chat model (`npm run build:models -- --only=tiny-chat`): a Llama-family model
 * in the exact Hugging Face file layout, with a byte-level BPE tokenizer of its own and a ChatML
 * chat template, warmed up by supervised fine-tuning on a verifiable task asked as a chat, so that
 * a LoRA-GRPO run on a model "brought" in Hugging Face's format can be shown to learn offline.
 *
 * Steps, all deterministic (fixed seeds, the single-threaded CPU Llama path):
 * 1. Tokenizer: BPE merges (src/models/hf/bpe-trainer.ts) learned from chats of several of the
 *    lab's tasks (CORPUS_TASKS), rendered with the model's own template, special tokens cut out.
 * 2. SFT (src/rl/llama-sft.ts) on the main task's chats: clean demonstrations first, then
 *    demonstrations that are wholly right only `wholeAnswerRight` of the time
 *    (src/rl/noisy-demonstrations.ts), so that the model samples a right answer now and then on
 *    almost every prompt: low pass@1, high pass@8, signal for GRPO.
 * 3. Greedy success and sampled pass@1 / pass@8 on EVAL_PROMPTS prompts drawn with EVAL_SEED.
 * 4. The files, in <out>/tiny-chat/: config.json, generation_config.json, model.safetensors (F32),
 *    tokenizer.json, tokenizer_config.json; their sizes and sha256 go into the manifest.
 */
import { join } from 'node:path';
import { mkdirSync } from 'node:fs';
import {
  createTokenTask,
  TOKEN_TASKS,
  type TokenTaskName,
} from '../src/agents/token-task-registry';
import { chatAnswerIds, chatPromptIds, chatTokenizer } from '../src/agents/chat-task';
import { writeAtomically } from '../src/cli/output-file';
import type { CharsetTask } from '../src/envs/token-tasks/shared';
import type { TokenTask } from '../src/envs/token-tasks/types';
import { trainBpe } from '../src/models/hf/bpe-trainer';
import {
  CHATML_TEMPLATE,
  generationConfigJson,
  SPECIAL_TOKENS,
  specialTokenIds,
  tokenizerConfigJson,
  tokenizerJson,
} from '../src/models/hf/bpe-tokenizer-files';
import { ChatTemplate } from '../src/models/hf/chat-template';
import { toHfConfig } from '../src/models/hf/hf-config';
import { HfTokenizer } from '../src/models/hf/hf-tokenizer';
import { hfParamSpecs } from '../src/models/hf/hf-weights';
import { writeSafetensors } from '../src/models/hf/safetensors-writer';
import type { ModelSpec } from '../src/models/model-spec';
import { evaluateChatTask } from '../src/rl/llama-chat-evaluate';
import { LlamaSft, type LlamaSftOptimizer, type SftExample } from '../src/rl/llama-sft';
import { noisyDemonstrations, type DemoNoise } from '../src/rl/noisy-demonstrations';
import { seededRandom } from '../src/util/random';

export const TINY_CHAT_NAME = 'tiny-chat';

/** The files of the model's folder, in Hugging Face's names. */
export const TINY_CHAT_FILES = [
  'config.json',
  'generation_config.json',
  'model.safetensors',
  'tokenizer.json',
  'tokenizer_config.json',
] as const;

/** Tasks whose chats the tokenizer's merges are learned from, with their share of the corpus. */
const CORPUS_TASKS: readonly {
  task: TokenTaskName;
  options: Record<string, unknown>;
  count: number;
}[] = [
  { task: 'addition', options: { minDigits: 1, maxDigits: 3 }, count: 1000 },
  { task: 'countdown', options: {}, count: 1000 },
  { task: 'sort', options: { minLength: 3, maxLength: 6, alphabet: 'abcde' }, count: 1000 },
  { task: 'reverse', options: { minLength: 3, maxLength: 6, alphabet: 'abcde' }, count: 500 },
];
const CORPUS_SEED = 7;

export interface TinyChatPlan {
  task: TokenTaskName;
  options: Record<string, unknown>;
  /** BPE merges asked for (fewer if the corpus runs out of pairs seen twice). */
  merges: number;
  /** The model: hidden size, layers, heads, key-value heads, MLP width, context in tokens. */
  width: number;
  layers: number;
  heads: number;
  kvHeads: number;
  mlpWidth: number;
  context: number;
  recipe: {
    /** SFT steps on clean demonstrations, then on the noisy ones. */
    cleanSteps: number;
    noisySteps: number;
    batchSize: number;
    seed: number;
    optimizer: LlamaSftOptimizer;
  };
  demoNoise: DemoNoise;
  /** How pass@1 and pass@G are measured (as a GRPO run would sample). */
  rlSampling: { temperature: number; groupSize: number };
  /** Most tokens an answer may take, its end-of-turn token included. */
  maxNewTokens: number;
}

export const TINY_CHAT_PLAN: TinyChatPlan = {
  task: 'addition',
  options: { minDigits: 1, maxDigits: 2, reverseAnswer: true },
  merges: 160,
  width: 64,
  layers: 2,
  heads: 4,
  kvHeads: 2,
  mlpWidth: 192,
  context: 64,
  recipe: {
    cleanSteps: 2000,
    noisySteps: 300,
    batchSize: 32,
    seed: 1,
    optimizer: { lr: 3e-3, beta1: 0.9, beta2: 0.99, eps: 1e-8, weightDecay: 0.01, maxGradNorm: 1 },
  },
  demoNoise: { wholeAnswerRight: 0.5 },
  rlSampling: { temperature: 1, groupSize: 8 },
  maxNewTokens: 8,
};

export interface TinyChatFile {
  file: string;
  bytes: number;
  sha256: string;
}

export interface TinyChatEntry {
  name: string;
  /** The folder under the models directory holding the files. */
  dir: string;
  task: TokenTaskName;
  taskOptions: Record<string, unknown>;
  taskLabel: string;
  /** The architecture config.json states (its arrays would not survive the manifest's format). */
  spec: ModelSpec;
  parameters: number;
  tokenizer: { merges: number; vocab: number; corpus: string };
  recipe: TinyChatPlan['recipe'] & { backend: 'cpu'; demoNoise: DemoNoise };
  /** Greedy strict success over evalPrompts prompts drawn with evalSeed. */
  successRate: number;
  sampled: { temperature: number; groupSize: number; passAt1: number; passAtG: number };
  maxNewTokens: number;
  evalPrompts: number;
  evalSeed: number;
  files: TinyChatFile[];
}

/** The chats of CORPUS_TASKS as text between special tokens. */
function tokenizerCorpus(): string[] {
  const template = new ChatTemplate(
    new Map([
      [
        'default',
        { file: 'tokenizer_config.json' as const, field: 'chat_template', source: CHATML_TEMPLATE },
      ],
    ]),
    {},
  );
  const random = seededRandom(CORPUS_SEED);
  const texts: string[] = [];
  const split = new RegExp(SPECIAL_TOKENS.map((t) => t.replace(/[|]/g, '\\|')).join('|'));
  for (const part of CORPUS_TASKS) {
    const task = createTokenTask(part.task, part.options);
    for (let i = 0; i < part.count; i++) {
      const sample = task.sample(random);
      const chat = template.render(
        [
          { role: 'user', content: sample.prompt },
          { role: 'assistant', content: sample.answer },
        ],
        { addGenerationPrompt: false },
      );
      texts.push(...chat.split(split).filter((t) => t.length > 0));
    }
  }
  return texts;
}

function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** The ModelSpec of the plan for a vocabulary of `vocab` ids. */
function tinyChatSpec(plan: TinyChatPlan, vocab: number): ModelSpec {
  return {
    family: 'llama',
    vocab,
    context: plan.context,
    width: plan.width,
    layers: plan.layers,
    heads: plan.heads,
    kvHeads: plan.kvHeads,
    headDim: plan.width / plan.heads,
    mlpWidth: plan.mlpWidth,
    mlp: 'swiglu',
    norm: 'rmsnorm',
    normEps: 1e-5,
    positions: 'rotary',
    rotaryBase: 10_000,
    qkvBias: false,
    outBias: false,
    mlpBias: false,
    qkNorm: false,
    tiedEmbeddings: true,
    valueHead: false,
  };
}

/** SFT examples of `count` samples of `task` drawn from `random`, as chats. */
function examples(
  tokenizer: ReturnType<typeof chatTokenizer>,
  task: TokenTask,
  random: () => number,
  count: number,
): SftExample[] {
  return Array.from({ length: count }, () => {
    const sample = task.sample(random);
    return {
      prompt: chatPromptIds(tokenizer, sample),
      answer: chatAnswerIds(tokenizer, sample.answer),
    };
  });
}

/** Builds the model of `plan` (steps scaled by stepsScale) and writes it under outDir. */
export async function buildTinyChat(
  outDir: string,
  options: { stepsScale?: number; plan?: TinyChatPlan; evalPrompts: number; evalSeed: number },
): Promise<TinyChatEntry> {
  const plan = options.plan ?? TINY_CHAT_PLAN;
  const started = performance.now();
  const seconds = () => ((performance.now() - started) / 1000).toFixed(0);
  const scale = options.stepsScale ?? 1;
  const scaled = (steps: number) => (steps === 0 ? 0 : Math.max(1, Math.round(steps * scale)));
  const recipe = {
    ...plan.recipe,
    cleanSteps: scaled(plan.recipe.cleanSteps),
    noisySteps: scaled(plan.recipe.noisySteps),
  };

  const bpe = trainBpe(tokenizerCorpus(), { merges: plan.merges });
  const vocab = bpe.vocab.length + SPECIAL_TOKENS.length;
  const spec = tinyChatSpec(plan, vocab);
  const ids = specialTokenIds(bpe);
  const config = {
    ...toHfConfig(spec),
    bos_token_id: null,
    eos_token_id: ids['<|im_end|>'],
    pad_token_id: ids['<|endoftext|>'],
    torch_dtype: 'float32',
  };
  const files = new Map<string, Uint8Array>();
  const text = (s: string) => new TextEncoder().encode(s);
  files.set('config.json', text(json(config)));
  files.set('generation_config.json', text(json(generationConfigJson(bpe))));
  files.set('tokenizer.json', text(json(tokenizerJson(bpe))));
  files.set('tokenizer_config.json', text(json(tokenizerConfigJson(bpe, plan.context))));
  const tokenizer = chatTokenizer(
    await HfTokenizer.load(TINY_CHAT_NAME, {
      tokenizerJson: files.get('tokenizer.json')!,
      tokenizerConfig: files.get('tokenizer_config.json')!,
      generationConfig: files.get('generation_config.json')!,
    }),
  );
  console.log(
    `  ${TINY_CHAT_NAME}: tokenizer ${bpe.merges.length} merges, vocab ${vocab} (${seconds()} s)`,
  );

  const task = createTokenTask(plan.task, plan.options);
  const sft = new LlamaSft(
    spec,
    LlamaSft.initialParams(spec, recipe.seed),
    recipe.optimizer,
    tokenizer.pad,
  );
  const stages: { name: string; task: TokenTask; steps: number; seed: number }[] = [
    { name: 'clean', task, steps: recipe.cleanSteps, seed: recipe.seed + 1 },
    {
      name: 'noisy',
      task: noisyDemonstrations(task as CharsetTask, plan.demoNoise),
      steps: recipe.noisySteps,
      seed: recipe.seed + 2,
    },
  ];
  for (const stage of stages) {
    const random = seededRandom(stage.seed);
    let lossSum = 0;
    for (let s = 1; s <= stage.steps; s++) {
      lossSum += sft.step(examples(tokenizer, stage.task, random, recipe.batchSize)).loss;
      if (s % 100 === 0 || s === stage.steps) {
        console.log(
          `  ${TINY_CHAT_NAME} (${stage.name}): step ${s}  mean loss ${(lossSum / (s % 100 || 100)).toFixed(4)}  ${seconds()} s`,
        );
        lossSum = 0;
      }
    }
  }

  const evalOptions = {
    samples: options.evalPrompts,
    seed: options.evalSeed,
    maxNewTokens: plan.maxNewTokens,
  };
  const greedy = evaluateChatTask(sft.model, tokenizer, task, evalOptions);
  const { temperature, groupSize } = plan.rlSampling;
  const sampledEval = evaluateChatTask(sft.model, tokenizer, task, {
    ...evalOptions,
    repeats: groupSize,
    temperature,
  });
  const sampled = {
    temperature,
    groupSize,
    passAt1: sampledEval.successRate,
    passAtG: sampledEval.promptPassRate,
  };

  // Tensors in the order transformers names them (hfParamSpecs), not the optimizer's layout.
  const tensors = hfParamSpecs(spec).map(({ name, shape }) => ({
    name,
    shape,
    dtype: 'F32' as const,
    data: sft.layout.view(sft.params, name),
  }));
  files.set('model.safetensors', writeSafetensors(tensors, { format: 'pt' }));
  const dir = join(outDir, TINY_CHAT_NAME);
  mkdirSync(dir, { recursive: true });
  const listed: TinyChatFile[] = [];
  for (const [file, bytes] of [...files].sort(([a], [b]) => (a < b ? -1 : 1))) {
    writeAtomically(join(dir, file), bytes);
    listed.push({ file, bytes: bytes.length, sha256: await sha256(bytes) });
  }
  const total = listed.reduce((a, f) => a + f.bytes, 0);
  console.log(
    `${TINY_CHAT_NAME}: ${task.name} as chats, ${recipe.cleanSteps} + ${recipe.noisySteps} SFT ` +
      `steps → greedy ${(greedy.successRate * 100).toFixed(1)}% of ${options.evalPrompts}; ` +
      `sampled at temperature ${temperature}: pass@1 ${(sampled.passAt1 * 100).toFixed(1)}%, ` +
      `pass@${groupSize} ${(sampled.passAtG * 100).toFixed(1)}%; ${total} bytes (${seconds()} s)`,
  );
  for (const e of greedy.examples.slice(0, 3)) {
    console.log(
      `    ${JSON.stringify(e.prompt)} → ${JSON.stringify(e.completion)} ${e.correct ? 'ok' : 'wrong'}`,
    );
  }
  return {
    name: TINY_CHAT_NAME,
    dir: TINY_CHAT_NAME,
    task: plan.task,
    taskOptions: { ...TOKEN_TASKS[plan.task].defaults, ...plan.options },
    taskLabel: task.name,
    spec,
    parameters: sft.layout.parameterCount,
    tokenizer: {
      merges: bpe.merges.length,
      vocab,
      corpus: CORPUS_TASKS.map((p) => `${p.task} ×${p.count}`).join(', '),
    },
    recipe: { ...recipe, backend: 'cpu', demoNoise: plan.demoNoise },
    successRate: greedy.successRate,
    sampled,
    maxNewTokens: plan.maxNewTokens,
    evalPrompts: options.evalPrompts,
    evalSeed: options.evalSeed,
    files: listed,
  };
}

async function sha256(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', new Uint8Array(bytes));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}
