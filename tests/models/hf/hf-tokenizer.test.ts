/**
 * HfTokenizer against golden data from an independent reference: tests/fixtures/hf holds a
 * byte-level BPE trained and applied by a Python implementation (scripts/reference/), and chat
 * texts rendered by Jinja2 with `transformers`' settings. Every id and every character must agree.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HfTokenizer } from '../../../src/models/hf/hf-tokenizer';
import type { ChatMessage, ToolDefinition } from '../../../src/models/tokenizer-api';

const DIR = 'tests/fixtures/hf';
const MODELS = ['llama-tiny', 'qwen2-tiny', 'qwen3-tiny'] as const;

interface GoldenChat {
  name: string;
  messages: {
    role: ChatMessage['role'];
    content: string;
    tool_calls?: { type: string; function: { name: string; arguments: Record<string, unknown> } }[];
  }[];
  tools: { type: string; function: ToolDefinition }[] | null;
  add_generation_prompt: boolean;
  text: string;
  ids: number[];
}

const golden = JSON.parse(readFileSync(`${DIR}/tokenizer_golden.json`, 'utf8')) as {
  vocab_size: number;
  special_token_ids: Record<string, number>;
  /** `decoded`: the ids decoded (the text after normalization: NFC here). */
  strings: { text: string; ids: number[]; tokens: string[]; decoded: string }[];
  chats: GoldenChat[];
};

function load(model: string): Promise<HfTokenizer> {
  return HfTokenizer.load(model, {
    tokenizerJson: readFileSync(`${DIR}/${model}/tokenizer.json`),
    tokenizerConfig: readFileSync(`${DIR}/${model}/tokenizer_config.json`),
    generationConfig: readFileSync(`${DIR}/${model}/generation_config.json`),
  });
}

/** Hugging Face's message dicts → the lab's ChatMessage. */
function toChatMessages(chat: GoldenChat): ChatMessage[] {
  return chat.messages.map((m) => {
    const message: ChatMessage = { role: m.role, content: m.content };
    if (m.tool_calls) {
      message.toolCalls = m.tool_calls.map((c) => ({
        name: c.function.name,
        arguments: c.function.arguments,
      }));
    }
    return message;
  });
}

/** The text with every non-ASCII character written as its UTF-8 bytes, <0xHH> each. */
function bytesShown(text: string): string {
  return [...text]
    .map((c) =>
      c.charCodeAt(0) < 0x80
        ? c
        : [...Buffer.from(c, 'utf8')]
            .map((b) => `<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`)
            .join(''),
    )
    .join('');
}

describe.each(MODELS)('HfTokenizer on %s', (model) => {
  it('hashes tokenizer.json and reads the vocabulary size', async () => {
    const tokenizer = await load(model);
    const sha = createHash('sha256')
      .update(readFileSync(`${DIR}/${model}/tokenizer.json`))
      .digest('hex');
    expect(tokenizer.spec).toEqual({ kind: 'hf', version: 1, source: model, sha256: sha });
    expect(tokenizer.vocabSize).toBe(golden.vocab_size);
  });

  it('encodes and decodes every golden string to the reference ids', async () => {
    const tokenizer = await load(model);
    expect(golden.strings.length).toBeGreaterThanOrEqual(10);
    for (const { text, ids, decoded } of golden.strings) {
      expect([...tokenizer.encode(text)], JSON.stringify(text)).toEqual(ids);
      expect(tokenizer.decode(ids), JSON.stringify(text)).toBe(decoded);
    }
    // tokenizer.json normalizes to NFC: a decomposed "é" comes back composed.
    const nfc = golden.strings.filter((s) => s.decoded !== s.text);
    expect(nfc.map((s) => s.decoded)).toEqual(nfc.map((s) => s.text.normalize('NFC')));
    expect(nfc.length).toBeGreaterThan(0);
  });

  it('shows each token as its text, a split character as its bytes', async () => {
    const tokenizer = await load(model);
    // In these strings no non-ASCII character lies whole in one token (the reference's tokens
    // show each such byte apart), so the tokens' texts join to the text with those bytes shown.
    for (const { decoded, ids } of golden.strings) {
      const shown = ids.map((id) => tokenizer.token(id)).join('');
      expect(shown, JSON.stringify(decoded)).toBe(bytesShown(decoded));
    }
  });

  it('knows the special tokens by their ids', async () => {
    const tokenizer = await load(model);
    for (const [text, id] of Object.entries(golden.special_token_ids)) {
      expect(tokenizer.token(id)).toBe(text);
      expect([...tokenizer.encode(text)]).toEqual([id]);
    }
    const specials = [...Array(tokenizer.vocabSize).keys()].filter((id) => tokenizer.isSpecial(id));
    // tokenizer_config.json marks <|endoftext|>, <|im_start|>, <|im_end|> special, the
    // <tool_call> pair not (the agent reads them as text).
    expect(specials).toEqual([379, 380, 381]);
  });

  it('renders the golden conversations and encodes them to the reference ids', async () => {
    const tokenizer = await load(model);
    expect(golden.chats.length).toBe(3);
    for (const chat of golden.chats) {
      const text = tokenizer.applyChatTemplate!(toChatMessages(chat), {
        addGenerationPrompt: chat.add_generation_prompt,
        ...(chat.tools ? { tools: chat.tools.map((t) => t.function) } : {}),
      });
      expect(text, chat.name).toBe(chat.text);
      expect([...tokenizer.encode(text)], chat.name).toEqual(chat.ids);
      expect(tokenizer.decode(chat.ids), chat.name).toBe(chat.text);
    }
  });

  it('leaves the special tokens out of decoded text on request, the tool tags in', async () => {
    const tokenizer = await load(model);
    const chat = golden.chats.find((c) => c.name === 'tools_call_and_results')!;
    const plain = chat.text.replaceAll(/<\|im_start\|>|<\|im_end\|>|<\|endoftext\|>/g, '');
    expect(plain).toContain('<tool_call>');
    expect(tokenizer.decode(chat.ids, { skipSpecial: true })).toBe(plain);
  });
});

describe('special and stop tokens from the model files', () => {
  // llama-tiny: bos <|im_start|>, eos and pad <|im_end|>; generation_config eos 381.
  // qwen2/3-tiny: no bos, eos <|im_end|>, pad <|endoftext|>; generation_config eos [381, 379].
  it('llama-tiny', async () => {
    const tokenizer = await load('llama-tiny');
    expect([tokenizer.bos, tokenizer.eos, tokenizer.pad]).toEqual([380, 381, 381]);
    expect(tokenizer.endOfTurn).toBe(381);
    expect(tokenizer.stopIds).toEqual([381]);
  });

  it.each(['qwen2-tiny', 'qwen3-tiny'])('%s', async (model) => {
    const tokenizer = await load(model);
    expect([tokenizer.bos, tokenizer.eos, tokenizer.pad]).toEqual([undefined, 381, 379]);
    expect(tokenizer.endOfTurn).toBe(381);
    expect(tokenizer.stopIds).toEqual([381, 379]);
  });
});
