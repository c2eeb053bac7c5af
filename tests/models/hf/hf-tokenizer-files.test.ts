/**
 * HfTokenizer on the byte-level BPE of hand-bpe.ts (a dozen tokens, seven merges: every expected
 * id below is worked out from the merge ranks), and on broken files: each error names the file
 * and the field.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ChatTemplateError } from '../../../src/models/hf/chat-template';
import { HfTokenizer, type HfTokenizerFiles } from '../../../src/models/hf/hf-tokenizer';
import { END, EOS, files, MERGES, TAG, tokenizerJson } from './hand-bpe';

const load = (f: HfTokenizerFiles = files()): Promise<HfTokenizer> => HfTokenizer.load('hand', f);

describe('HfTokenizer on a hand-made byte-level BPE', () => {
  it('applies the merges in rank order', async () => {
    const t = await load();
    // "hello": l+l (rank 0), h+e (1), he+ll (2), hell+o (3). " world": Ġ+w (4), then no merge.
    expect([...t.encode('hello world')]).toEqual([14, 15, 3, 6, 2, 7]);
    expect([...t.encode('hell')]).toEqual([13]);
    expect([...t.encode('he')]).toEqual([12]);
    expect([...t.encode('€')]).toEqual([17]);
    expect([...t.encode('')]).toEqual([]);
    expect(t.decode([14, 15, 3, 6, 2, 7])).toBe('hello world');
    expect(t.decode([])).toBe('');
  });

  it('reads the added tokens in text as one token each', async () => {
    const t = await load();
    expect([...t.encode('hello<|end|><x>hell')]).toEqual([14, END, TAG, 13]);
    expect(t.decode([14, END, TAG, 13])).toBe('hello<|end|><x>hell');
    expect(t.decode([14, END, TAG, EOS], { skipSpecial: true })).toBe('hello<x>');
    expect([END, EOS, TAG, 0].map((id) => t.isSpecial(id))).toEqual([true, true, false, false]);
  });

  it('shows tokens as text, a piece of a character as <0xHH> bytes', async () => {
    const t = await load();
    expect(t.token(14)).toBe('hello');
    expect(t.token(15)).toBe(' w');
    expect(t.token(17)).toBe('€');
    expect(t.token(16)).toBe('<0xE2><0x82>');
    expect(t.token(9)).toBe('<0x82>');
    expect(t.token(END)).toBe('<|end|>');
    // decode, unlike token(), writes text: an incomplete character is one U+FFFD (as Python's
    // bytes.decode('utf-8', errors='replace'), which transformers uses).
    expect(t.decode([16])).toBe('\uFFFD');
    expect(t.decode([16, 10])).toBe('€');
  });

  it('names bad ids by index with the valid range, and ids the file leaves out', async () => {
    const t = await load();
    expect(t.vocabSize).toBe(23);
    expect(() => t.decode([0, 23])).toThrow(
      'tokenizer: ids index 1: id must be an integer in [0, 22], got 23',
    );
    expect(() => t.decode([1.5])).toThrow('ids index 0: id must be an integer in [0, 22], got 1.5');
    expect(() => t.decode([0, 1, 18])).toThrow(
      'tokenizer: ids index 2: id 18 has no token in tokenizer.json',
    );
    expect(() => t.token(-1)).toThrow('tokenizer: id must be an integer in [0, 22], got -1');
    expect(() => t.token(19)).toThrow('tokenizer: id 19 has no token in tokenizer.json');
  });

  it('names the first character whose bytes the vocabulary lacks', async () => {
    const t = await load();
    expect(() => t.encode('hex')).toThrow(
      `tokenizer: text index 2: character "x" needs byte 0x78, which tokenizer.json's vocabulary lacks`,
    );
    // '🙂' is two UTF-16 units at index 6; its first byte F0 is missing.
    expect(() => t.encode('hello 🙂')).toThrow('index 6: character "🙂" needs byte 0xF0');
  });

  it('reads merges in the older "a b" form alike', async () => {
    const json = tokenizerJson((j) => {
      const m = j['model'] as Record<string, unknown>;
      m['merges'] = MERGES.map(([a, b]) => `${a} ${b}`);
    });
    const t = await load({ ...files(), tokenizerJson: json });
    expect([...t.encode('hello world')]).toEqual([14, 15, 3, 6, 2, 7]);
  });

  it('hashes tokenizer.json as given: bytes, or text as UTF-8', async () => {
    const json = tokenizerJson();
    const sha = createHash('sha256').update(json, 'utf8').digest('hex');
    const fromText = await load({ ...files(), tokenizerJson: json });
    const fromBytes = await load({ ...files(), tokenizerJson: new TextEncoder().encode(json) });
    expect(fromText.spec).toEqual({ kind: 'hf', version: 1, source: 'hand', sha256: sha });
    expect(fromBytes.spec).toEqual(fromText.spec);
  });
});

describe('chat template', () => {
  it('passes messages, tool calls and tools as Hugging Face templates read them', async () => {
    const t = await load();
    const text = t.applyChatTemplate!(
      [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: '', toolCalls: [{ name: 'add', arguments: { a: 1, b: 2 } }] },
        { role: 'tool', content: '3' },
      ],
      {
        addGenerationPrompt: true,
        tools: [{ name: 'add', description: 'Adds.', parameters: { type: 'object' } }],
      },
    );
    expect(text).toBe(
      '<user>hi<|end|>' +
        '<assistant>[{"type": "function", "function": {"name": "add", "arguments": {"a": 1, "b": 2}}}]<|end|>' +
        '<tool>3<|end|>' +
        '[{"type": "function", "function": {"name": "add", "description": "Adds.", "parameters": {"type": "object"}}}]' +
        '<assistant><|eos|>',
    );
  });

  it('stops at eos, generation_config.json eos ids and the end-of-turn token', async () => {
    const t = await load(files({}, { generationConfig: JSON.stringify({ eos_token_id: [EOS] }) }));
    expect(t.eos).toBe(EOS);
    expect(t.endOfTurn).toBe(END);
    expect(t.stopIds).toEqual([EOS, END]);
    expect(t.pad).toBe(EOS); // no pad anywhere: eos
    expect(t.bos).toBeUndefined();
  });

  it('has none where the model has none', async () => {
    const t = await load(files({ chat_template: null }));
    expect(t.applyChatTemplate).toBeUndefined();
    expect(t.endOfTurn).toBeUndefined();
    expect(t.stopIds).toEqual([EOS]);
  });

  it("picks 'tool_use' when tools are given, else 'default'; chat_template.jinja replaces both", async () => {
    const named = [
      { name: 'default', template: 'D' },
      { name: 'tool_use', template: 'T{{ tools | length }}' },
    ];
    const t = await load(files({ chat_template: named }));
    const tool = { name: 'f', description: '', parameters: {} };
    expect(t.applyChatTemplate!([], { addGenerationPrompt: false })).toBe('D');
    expect(t.applyChatTemplate!([], { addGenerationPrompt: false, tools: [tool] })).toBe('T1');
    const j = await load(files({ chat_template: named }, { chatTemplateJinja: 'J' }));
    expect(j.applyChatTemplate!([], { addGenerationPrompt: false, tools: [tool] })).toBe('J');
    const noDefault = await load(files({ chat_template: [named[1]] }));
    expect(() => noDefault.applyChatTemplate!([], { addGenerationPrompt: false })).toThrow(
      "chat template: the model's templates (tool_use) include no 'default'",
    );
  });

  it("reports the template's own raise_exception, and a template that does not parse", async () => {
    const t = await load(files({ chat_template: "{{ raise_exception('only user turns') }}" }));
    const render = (): string => t.applyChatTemplate!([], { addGenerationPrompt: false });
    expect(render).toThrow(ChatTemplateError);
    expect(render).toThrow('chat template (tokenizer_config.json: chat_template): only user turns');
    await expect(load(files({ chat_template: '{% for %}' }))).rejects.toThrow(
      /^tokenizer_config.json: chat_template does not parse as Jinja: /,
    );
    await expect(
      load(files({ chat_template: [{ name: 'default', template: '{% if %}' }] })),
    ).rejects.toThrow(/^tokenizer_config.json: chat_template\[0\].template does not parse/);
  });

  it('checks the conversation it is given', async () => {
    const t = await load();
    const apply = (messages: unknown): string =>
      t.applyChatTemplate!(messages as never, { addGenerationPrompt: false });
    expect(() => apply([{ role: 'robot', content: 'x' }])).toThrow(
      "tokenizer: messages[0].role must be one of 'system', 'user', 'assistant', 'tool', got \"robot\"",
    );
    expect(() => apply([{ role: 'user', content: 3 }])).toThrow(
      'tokenizer: messages[0].content must be a string, got number',
    );
    expect(() =>
      apply([{ role: 'user', content: '', toolCalls: [{ name: 'f', arguments: {} }] }]),
    ).toThrow('tokenizer: messages[0].toolCalls belong to assistant messages only');
    expect(() =>
      apply([{ role: 'assistant', content: '', toolCalls: [{ name: 'f', arguments: [] }] }]),
    ).toThrow('tokenizer: messages[0].toolCalls[0].arguments must be a JSON object');
  });
});

describe('files that are wrong', () => {
  const fails = (f: HfTokenizerFiles): Promise<unknown> => load(f);

  it('tokenizer.json', async () => {
    await expect(fails({ ...files(), tokenizerJson: '{"model": ' })).rejects.toThrow(
      /^tokenizer.json: is not valid JSON \(/,
    );
    await expect(fails({ ...files(), tokenizerJson: '[]' })).rejects.toThrow(
      'tokenizer.json: must hold a JSON object, got an array of 0',
    );
    await expect(
      fails({ ...files(), tokenizerJson: tokenizerJson((j) => delete j['model']) }),
    ).rejects.toThrow('tokenizer.json: model must be an object, got nothing');
    const withMerge = (merge: string[]): string =>
      tokenizerJson((j) => {
        (j['model'] as { merges: string[][] }).merges.push(merge);
      });
    await expect(fails({ ...files(), tokenizerJson: withMerge(['o', 'w']) })).rejects.toThrow(
      'tokenizer.json: model.merges[7] makes "ow", which model.vocab lacks',
    );
    await expect(fails({ ...files(), tokenizerJson: withMerge(['q', 'h']) })).rejects.toThrow(
      'tokenizer.json: model.merges[7] names "q", which model.vocab lacks',
    );
    const badAdded = tokenizerJson((j) => {
      (j['added_tokens'] as { id: number }[])[1]!.id = -1;
    });
    await expect(fails({ ...files(), tokenizerJson: badAdded })).rejects.toThrow(
      'tokenizer.json: added_tokens[1].id must be an integer in [0, 4194303], got -1',
    );
  });

  it('tokenizer_config.json', async () => {
    await expect(fails(files({ chat_template: 5 }))).rejects.toThrow(
      'tokenizer_config.json: chat_template must be a string or a list of named templates, got 5',
    );
    await expect(fails(files({ chat_template: [{ name: 'default' }] }))).rejects.toThrow(
      'tokenizer_config.json: chat_template[0] must be an object with a string "name" and a ' +
        'string "template", got an object',
    );
    await expect(fails(files({ eos_token: '<|nope|>' }))).rejects.toThrow(
      'tokenizer_config.json: eos_token "<|nope|>" is not a token of tokenizer.json',
    );
    await expect(fails(files({ eos_token: 7 }))).rejects.toThrow(
      'tokenizer_config.json: eos_token must be a non-empty string, null or an object with a ' +
        'string "content", got 7',
    );
    await expect(fails(files({ eos_token: null }))).rejects.toThrow(
      'tokenizer_config.json: eos_token is missing, and generation_config.json has no eos_token_id',
    );
    await expect(
      fails({ ...files(), tokenizerConfig: new Uint8Array([0x7b, 0xff, 0x7d]) }),
    ).rejects.toThrow('tokenizer_config.json: is not UTF-8 text');
  });

  it('cuts huge values it quotes', async () => {
    const huge = 'y'.repeat(100_000);
    const error = await fails(files({ eos_token: huge })).catch((e: unknown) => e as Error);
    expect((error as Error).message).toMatch(
      /^tokenizer_config.json: eos_token "y+…" is not a token/,
    );
    expect((error as Error).message.length).toBeLessThan(120);
    const t = await load(files({ chat_template: `{{ raise_exception('${huge}') }}` }));
    expect(() => t.applyChatTemplate!([], { addGenerationPrompt: false })).toThrow(
      /^chat template \(tokenizer_config.json: chat_template\): y{299}…$/,
    );
  });

  it('generation_config.json', async () => {
    const gen = (g: unknown): HfTokenizerFiles =>
      files({}, { generationConfig: JSON.stringify(g) });
    await expect(fails(gen({ eos_token_id: [EOS, 99] }))).rejects.toThrow(
      "generation_config.json: eos_token_id[1] must be an integer in [0, 22] (the tokenizer's ids), got 99",
    );
    await expect(fails(gen({ eos_token_id: '21' }))).rejects.toThrow(
      'generation_config.json: eos_token_id must be an integer in [0, 22]',
    );
    // Without eos_token in tokenizer_config.json, the first generation eos id is eos.
    const t = await load({
      ...gen({ eos_token_id: END, pad_token_id: TAG }),
      tokenizerConfig: '{}',
    });
    expect([t.eos, t.pad, ...t.stopIds]).toEqual([END, TAG, END]);
  });

  it('the source name', async () => {
    await expect(HfTokenizer.load('', files())).rejects.toThrow(
      'tokenizer: source must be a string of 1–300 characters, got ""',
    );
  });
});

describe('template variables beyond the interface', () => {
  const THINK =
    '{% if enable_thinking is defined and enable_thinking is false %}<no-think>{% endif %}' +
    '{{ tag | default("-") }}{{ n }}';

  it('reach the template (as Qwen3 reads enable_thinking)', async () => {
    const t = await load(files({ chat_template: THINK }));
    const render = (variables?: Record<string, string | number | boolean>): string =>
      t.applyChatTemplate!([], { addGenerationPrompt: true, ...(variables ? { variables } : {}) });
    expect(render()).toBe('-');
    expect(render({ enable_thinking: true })).toBe('-');
    expect(render({ enable_thinking: false, tag: 'T', n: 2 })).toBe('<no-think>T2');
  });

  it("take the interface's thinking switch as enable_thinking; a caller's own variable wins", async () => {
    const t = await load(files({ chat_template: THINK }));
    const render = (options: object): string =>
      t.applyChatTemplate!([], { addGenerationPrompt: true, ...options });
    expect(render({ thinking: false })).toBe('<no-think>-');
    expect(render({ thinking: true })).toBe('-');
    expect(render({ thinking: false, variables: { enable_thinking: true } })).toBe('-');
  });

  it('may not take the names the tokenizer sets, and hold only plain values', async () => {
    const t = await load(files({ chat_template: THINK }));
    const render = (variables: unknown): string =>
      t.applyChatTemplate!([], { addGenerationPrompt: true, variables: variables as never });
    expect(() => render({ messages: 'x' })).toThrow(
      'tokenizer: options.variables.messages is set by the tokenizer or the interpreter itself',
    );
    expect(() => render({ range: 1 })).toThrow('options.variables.range is set by');
    expect(() => render({ 'a-b': 1 })).toThrow(
      'options.variables.a-b must be named with letters, digits and _',
    );
    expect(() => render({ x: [1] })).toThrow(
      'options.variables.x must be a string, a finite number or a boolean',
    );
    expect(() => render({ x: Number.NaN })).toThrow('options.variables.x must be a string');
  });
});
