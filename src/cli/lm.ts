/**
 * `npm run lm -- score --model=DIR_OR_HUB_ID [--revision=REV] [--adapter=ADAPTER_DIR] --ids=1,2,3
 *    [--backend=cpu|webgpu] [--storage=f16|f32]`
 * `npm run lm -- generate --model=DIR_OR_HUB_ID [--revision=REV] [--adapter=ADAPTER_DIR]
 *    --prompt=TEXT [--chat]
 *    [--max-new-tokens=N] [--temperature=0] [--top-k=0] [--top-p=1] [--seed=0]
 *    [--backend=cpu|webgpu] [--storage=f16|f32]`
 *
 * A Hugging Face model folder (config.json, safetensors, tokenizer files; Llama, Qwen2, Qwen3) on
 * the CPU (src/models/hf/llama-cpu*.ts), so that anyone can check the lab's numbers against
 * another implementation. A Hub model id ("org/name") is downloaded once into a cache folder
 * (model-source.ts says where, and which environment variables apply).
 *
 * --adapter applies a PEFT LoRA adapter folder (adapter_config.json, adapter_model.safetensors),
 * checked against the model's shapes.
 *
 * score prints one JSON line: {"model", "family", "ids", "logprobs"} ("model" as given: the folder,
 * or the id with "@revision" when not main; "adapter", the folder, when --adapter is given), where logprobs[i] is log p(ids[i + 1] | ids[0..i]) — one number per
 * id after the first.
 * generate prints the completion's text (special tokens, and ids past the tokenizer's vocabulary
 * that a padded embedding allows, left out). --chat wraps the prompt as one
 * user message in the model's chat template, with the assistant's turn opened. Decoding is greedy
 * unless --temperature > 0 (then top-k, top-p and the seed apply); it stops at the tokenizer's
 * stop ids (eos, generation_config's eos ids, the template's end of turn) or after
 * --max-new-tokens (default 64, or what the model's context leaves after the prompt when that is
 * less). Every bad flag is refused with one line naming it.
 */
import type { LlamaLora } from '../models/hf/llama-lora';
import type { ModelSpec } from '../models/model-spec';
import { CliArgs, FlagError } from './args';
import { LM_BACKENDS, LM_STORAGES, lmRunner, type LmRunner } from './lm-backend';
import { loadLmAdapter, loadLmModel, loadLmTokenizer } from './lm-model';
import { modelFolder, modelName, readModelSource, type ModelSource } from './model-source';

const COMMANDS = ['score', 'generate'] as const;
const DEFAULT_NEW_TOKENS = 64;
const USAGE =
  'usage: npm run lm -- score --model=DIR_OR_HUB_ID [--adapter=DIR] --ids=1,2,3 | generate --model=DIR_OR_HUB_ID [--adapter=DIR] --prompt=TEXT [--chat]';

/** --ids: a comma-separated list of at least two ids in [0, vocab − 1]. */
function parseIds(text: string, vocab: number, context: number): Int32Array {
  const parts = text.split(',');
  const ids = parts.map((part, i) => {
    const id = /^\s*\d+\s*$/.test(part) ? Number(part) : NaN;
    if (!Number.isSafeInteger(id) || id >= vocab) {
      throw new FlagError(
        'ids',
        `--ids must be comma-separated token ids in [0, ${vocab - 1}], but entry ${i} is '${part}'`,
      );
    }
    return id;
  });
  if (ids.length < 2 || ids.length > context) {
    throw new FlagError(
      'ids',
      `--ids must list 2 to ${context} ids (the first is only context), got ${ids.length}`,
    );
  }
  return Int32Array.from(ids);
}

function required(args: CliArgs, name: string, what: string): string {
  const value = args.optional(name);
  if (value === undefined) throw new FlagError(name, `--${name}=${what} is required`);
  return value;
}

/** --adapter, when given: the PEFT adapter folder, loaded for the model of `spec`. */
async function adapterOf(dir: string | undefined, spec: ModelSpec): Promise<LlamaLora | undefined> {
  return dir === undefined ? undefined : loadLmAdapter(dir, spec);
}

/** --backend and --storage, read before checkAllUsed. */
function backendFlags(args: CliArgs) {
  const backend = args.choice('backend', LM_BACKENDS, 'cpu');
  const storageText = args.optional('storage');
  if (storageText !== undefined && !(LM_STORAGES as readonly string[]).includes(storageText)) {
    throw new FlagError(
      'storage',
      `--storage must be one of ${LM_STORAGES.join(', ')}, got '${storageText}'`,
    );
  }
  return { backend, storage: storageText as (typeof LM_STORAGES)[number] | undefined };
}

/** Runs `work` with the runner, then frees its device. */
async function withRunner<T>(runner: LmRunner, work: (runner: LmRunner) => Promise<T>): Promise<T> {
  try {
    return await work(runner);
  } finally {
    runner.dispose();
  }
}

/** --model (and --revision): required. */
function modelFlag(args: CliArgs): ModelSource {
  const source = readModelSource(args);
  if (!source) throw new FlagError('model', '--model=DIR_OR_HUB_ID is required');
  return source;
}

async function score(args: CliArgs): Promise<number> {
  const source = modelFlag(args);
  const adapterDir = args.optional('adapter');
  const idsText = required(args, 'ids', 'I0,I1,...');
  const { backend, storage } = backendFlags(args);
  args.checkAllUsed();
  const { model } = await loadLmModel(await modelFolder(source));
  const lora = await adapterOf(adapterDir, model.spec);
  const ids = parseIds(idsText, model.spec.vocab, model.spec.context);
  const runner = await lmRunner(backend, storage, model, lora);
  const logprobs = await withRunner(runner, (r) => r.score(ids));
  console.log(
    JSON.stringify({
      model: modelName(source),
      ...(adapterDir === undefined ? {} : { adapter: adapterDir }),
      ...(runner.backend === 'cpu' ? {} : { backend: runner.backend, storage: runner.storage }),
      family: model.spec.family,
      ids: Array.from(ids),
      logprobs: Array.from(logprobs),
    }),
  );
  return 0;
}

async function generate(args: CliArgs): Promise<number> {
  const source = modelFlag(args);
  const adapterDir = args.optional('adapter');
  const prompt = required(args, 'prompt', 'TEXT');
  const chat = args.flag('chat');
  const asked = args.optional('max-new-tokens') !== undefined;
  const maxNewTokensFlag = args.int('max-new-tokens', DEFAULT_NEW_TOKENS, { min: 1, max: 4096 });
  const temperature = args.real('temperature', 0, { min: 0, max: 100 });
  const topK = args.int('top-k', 0, { min: 0, max: 2 ** 31 - 1 });
  const topP = args.real('top-p', 1, { min: 0, max: 1, minOpen: true });
  const seed = args.int('seed', 0, { min: 0, max: 2 ** 32 - 1 });
  const { backend, storage } = backendFlags(args);
  args.checkAllUsed();
  const dir = await modelFolder(source);
  const { model } = await loadLmModel(dir);
  const lora = await adapterOf(adapterDir, model.spec);
  const tokenizer = await loadLmTokenizer(dir);
  let text = prompt;
  if (chat) {
    if (!tokenizer.applyChatTemplate) {
      throw new FlagError('chat', `--chat: the model ${modelName(source)} has no chat template`);
    }
    text = tokenizer.applyChatTemplate([{ role: 'user', content: prompt }], {
      addGenerationPrompt: true,
    });
  }
  const ids = tokenizer.encode(text);
  const room = model.spec.context - ids.length;
  // Unasked, the default shrinks to a small model's context; an explicit value is never cut.
  const maxNewTokens = asked ? maxNewTokensFlag : Math.min(maxNewTokensFlag, Math.max(room, 1));
  if (ids.length < 1 || room < maxNewTokens) {
    throw new FlagError(
      'max-new-tokens',
      `--max-new-tokens must be at most ${Math.max(room, 0)} (the model's context ${model.spec.context} minus the prompt's ${ids.length} tokens), got ${maxNewTokens}`,
    );
  }
  const runner = await lmRunner(backend, storage, model, lora);
  const options = { maxNewTokens, temperature, topK, topP, seed, stopIds: tokenizer.stopIds };
  const out = await withRunner(runner, (r) => r.generate([ids], options));
  // Qwen checkpoints pad the vocabulary past the tokenizer's ids (rows with no token string); a
  // model can still pick one, and like Hugging Face's decode the text leaves it out.
  const known = out.tokens[0]!.filter((id) => id < tokenizer.vocabSize);
  console.log(tokenizer.decode(known, { skipSpecial: true }));
  return 0;
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!(COMMANDS as readonly (string | undefined)[]).includes(command)) {
    throw new FlagError(
      'command',
      `the first argument must be one of ${COMMANDS.join(', ')}, got '${command ?? ''}' (${USAGE})`,
    );
  }
  const args = new CliArgs(rest);
  return command === 'score' ? score(args) : generate(args);
}
