/**
 * The shipped tiny chat model (public/models/hf/tiny-chat/, built by `npm run build:models --
 * --only=tiny-chat`) against its manifest entry, read only through the lab's own loaders for
 * brought models: config.json (fromHfConfig), model.safetensors (loadHfWeights), the tokenizer
 * files (HfTokenizer: @huggingface/tokenizers and @huggingface/jinja). Every file has the recorded
 * size and sha256 and the folder is within 4 MB; the tokenizer round-trips text and renders
 * ChatML; greedy answers on the manifest's evaluation prompts succeed exactly as often as
 * recorded (the CPU path is deterministic), and the recorded sampled rates are in the range a
 * LoRA-GRPO run needs.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { SHIPPED_MANIFEST, type Manifest } from '../../../scripts/build-models';
import { chatPromptIds, chatTokenizer } from '../../../src/agents/chat-task';
import { main as lm } from '../../../src/cli/lm';
import { createTokenTask } from '../../../src/agents/token-task-registry';
import { filesFrom, loadHfWeights, SINGLE_FILE } from '../../../src/models/hf/hf-checkpoint';
import { fromHfConfig } from '../../../src/models/hf/hf-config';
import { HfTokenizer } from '../../../src/models/hf/hf-tokenizer';
import { llamaModelFromWeights } from '../../../src/models/hf/llama-cpu-weights';
import { bytesSource } from '../../../src/models/hf/random-access-source';
import { evaluateChatTask } from '../../../src/rl/llama-chat-evaluate';

const manifest = JSON.parse(readFileSync(SHIPPED_MANIFEST, 'utf8')) as Manifest;
const entry = manifest.hfModels?.find((m) => m.name === 'tiny-chat');
const DIR = `public/models/hf/${entry?.dir}`;
const read = (file: string) => new Uint8Array(readFileSync(`${DIR}/${file}`));

async function load() {
  const config = JSON.parse(new TextDecoder().decode(read('config.json'))) as Record<
    string,
    unknown
  >;
  const spec = fromHfConfig(config);
  const loaded = await loadHfWeights(
    spec,
    filesFrom(new Map([[SINGLE_FILE, bytesSource(read(SINGLE_FILE), SINGLE_FILE)]])),
  );
  const weights = new Map(
    loaded.layout.entries.map((e) => [e.name, loaded.layout.view(loaded.f32!, e.name)]),
  );
  const tokenizer = chatTokenizer(
    await HfTokenizer.load('tiny-chat', {
      tokenizerJson: read('tokenizer.json'),
      tokenizerConfig: read('tokenizer_config.json'),
      generationConfig: read('generation_config.json'),
    }),
  );
  return { config, spec, loaded, model: llamaModelFromWeights(spec, weights), tokenizer };
}

describe('the shipped tiny chat model', () => {
  it('is listed with its five files, each of the recorded size and sha256, 4 MB at most', () => {
    expect(entry, `${SHIPPED_MANIFEST} lists tiny-chat under hfModels`).toBeDefined();
    expect(entry!.files.map((f) => f.file)).toEqual([
      'config.json',
      'generation_config.json',
      'model.safetensors',
      'tokenizer.json',
      'tokenizer_config.json',
    ]);
    let total = 0;
    for (const file of entry!.files) {
      const bytes = read(file.file);
      expect(bytes.length, file.file).toBe(file.bytes);
      expect(createHash('sha256').update(bytes).digest('hex'), file.file).toBe(file.sha256);
      total += bytes.length;
    }
    expect(total).toBeLessThanOrEqual(4 * 1024 * 1024);
  });

  it('loads as a Llama model whose config and tensors agree with the manifest', async () => {
    const { config, spec, loaded, tokenizer } = await load();
    expect(spec).toEqual(entry!.spec);
    expect(config['architectures']).toEqual(['LlamaForCausalLM']);
    expect(spec.family).toBe('llama');
    expect(spec.kvHeads).toBeLessThan(spec.heads); // grouped-query attention
    expect(loaded.dtypes).toEqual(['F32']);
    expect(loaded.ignored).toEqual([]);
    expect(loaded.layout.parameterCount).toBe(entry!.parameters);
    // One embedding row per token: the BPE's bytes and merges and the three special tokens.
    expect(spec.vocab).toBe(tokenizer.vocabSize);
    expect(spec.vocab).toBe(256 + entry!.tokenizer.merges + 3);
    expect(entry!.tokenizer.merges).toBeGreaterThanOrEqual(100);
  });

  it('round-trips text through its own BPE and writes ChatML', async () => {
    const { tokenizer } = await load();
    for (const text of ['12+34=', 'dcba', '3 5 7>26:', 'Hello, world!\n', 'é 日本 🙂']) {
      expect(tokenizer.decode(tokenizer.encode(text))).toBe(text);
    }
    // The corpus's words are single tokens; digits always stand alone.
    expect(tokenizer.encode('assistant')).toHaveLength(1);
    expect(Array.from(tokenizer.encode('123'), (id) => tokenizer.token(id))).toEqual([
      '1',
      '2',
      '3',
    ]);
    const text = tokenizer.applyChatTemplate(
      [
        { role: 'system', content: 'Add.' },
        { role: 'user', content: '2+3=' },
      ],
      { addGenerationPrompt: true },
    );
    expect(text).toBe(
      '<|im_start|>system\nAdd.<|im_end|>\n<|im_start|>user\n2+3=<|im_end|>\n<|im_start|>assistant\n',
    );
    expect(tokenizer.token(tokenizer.endOfTurn!)).toBe('<|im_end|>');
    expect(tokenizer.stopIds).toContain(tokenizer.endOfTurn);
  });

  it('answers the evaluation prompts greedily as often as the manifest says', async () => {
    const { model, tokenizer } = await load();
    const task = createTokenTask(entry!.task, entry!.taskOptions);
    const greedy = evaluateChatTask(model, tokenizer, task, {
      samples: entry!.evalPrompts,
      seed: entry!.evalSeed,
      maxNewTokens: entry!.maxNewTokens,
    });
    expect(greedy.successRate).toBe(entry!.successRate);
    // `npm run lm -- generate --chat` (no --max-new-tokens: the default fits the short context)
    // writes the task's answer where the evaluation found it right.
    const right = greedy.examples.find((e) => e.correct)!;
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    try {
      expect(await lm(['generate', `--model=${DIR}`, `--prompt=${right.prompt}`, '--chat'])).toBe(
        0,
      );
      expect(log.mock.calls.map((c) => String(c[0]))).toEqual([right.answer]);
    } finally {
      log.mockRestore();
    }
    // The prompts fit the context with room for the answer.
    const sample = task.sample(() => 0.99);
    expect(chatPromptIds(tokenizer, sample).length + entry!.maxNewTokens).toBeLessThanOrEqual(
      model.spec.context,
    );
  });

  it('records sampled rates with room and signal for GRPO', () => {
    const { passAt1, passAtG, groupSize, temperature } = entry!.sampled;
    expect(temperature).toBe(1);
    expect(groupSize).toBe(8);
    expect(passAt1).toBeGreaterThanOrEqual(0.1);
    expect(passAt1).toBeLessThanOrEqual(0.4);
    expect(passAtG).toBeGreaterThanOrEqual(0.8);
  });
});
