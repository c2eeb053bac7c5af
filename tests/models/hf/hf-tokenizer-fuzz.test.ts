/**
 * The tokenizer files are untrusted: every object in the hand-made tokenizer.json and
 * tokenizer_config.json gains a key named after an Object.prototype member, and every value is
 * replaced by odd JSON. Loading must answer with a tokenizer or with its own refusal naming the
 * file (never a TypeError from deep inside the library), a tokenizer it gives must encode, decode
 * and render or refuse with its own errors, and no input may reach Object.prototype.
 */
import { describe, expect, it } from 'vitest';
import { ChatTemplateError } from '../../../src/models/hf/chat-template';
import { HfTokenizer, type HfTokenizerFiles } from '../../../src/models/hf/hf-tokenizer';
import { HfTokenizerError } from '../../../src/models/hf/hf-tokenizer-error';
import { TokenizerError } from '../../../src/models/tokenizer';
import {
  objectPaths,
  ODD_VALUES,
  PROTOTYPE_KEYS,
  prototypeSnapshot,
  valuePaths,
  withKey,
  withRawValue,
} from '../../support/fuzz';
import { files, TEMPLATE, tokenizerJson } from './hand-bpe';

const TOKENIZER = JSON.parse(tokenizerJson()) as unknown;
const CONFIG: unknown = { eos_token: '<|eos|>', pad_token: '<|end|>', chat_template: TEMPLATE };

const OWN_ERRORS = [HfTokenizerError, TokenizerError, ChatTemplateError];
const isOwn = (error: unknown): boolean => OWN_ERRORS.some((kind) => error instanceof kind);

/** Loads and, if that works, uses the tokenizer; returns what went wrong, or 'ok'. */
async function exercise(f: HfTokenizerFiles): Promise<string> {
  let tokenizer: HfTokenizer;
  try {
    tokenizer = await HfTokenizer.load('fuzz', f);
  } catch (error) {
    if (error instanceof HfTokenizerError) return 'refused';
    return `load threw ${String(error)}`;
  }
  for (const use of [
    () => tokenizer.decode(tokenizer.encode('hello world<|end|>€ ')),
    () => tokenizer.token(tokenizer.eos),
    () =>
      tokenizer.applyChatTemplate?.([{ role: 'user', content: 'hi' }], {
        addGenerationPrompt: true,
      }),
  ]) {
    try {
      use();
    } catch (error) {
      if (!isOwn(error)) return `use threw ${String(error)}`;
    }
  }
  return 'ok';
}

function variants(json: unknown): string[] {
  const out: string[] = [];
  for (const path of objectPaths(json)) {
    for (const key of PROTOTYPE_KEYS) {
      for (const value of ODD_VALUES) out.push(withKey(json, path, key, value));
    }
  }
  for (const path of valuePaths(json)) {
    for (const value of ODD_VALUES) out.push(withRawValue(json, path, JSON.stringify(value)));
  }
  return out;
}

describe('HfTokenizer under hostile files', () => {
  const before = prototypeSnapshot();

  it('tokenizer.json: prototype keys everywhere, odd values anywhere', async () => {
    const base = files();
    const failures: string[] = [];
    const texts = variants(TOKENIZER);
    expect(texts.length).toBeGreaterThan(500);
    for (const text of texts) {
      const result = await exercise({ ...base, tokenizerJson: text });
      if (result !== 'ok' && result !== 'refused')
        failures.push(`${result} on ${text.slice(0, 300)}`);
    }
    expect(failures.slice(0, 5)).toEqual([]);
    expect(prototypeSnapshot()).toBe(before);
  });

  it('tokenizer_config.json and generation_config.json alike', async () => {
    const failures: string[] = [];
    for (const text of variants(CONFIG)) {
      const result = await exercise({ ...files(), tokenizerConfig: text });
      if (result !== 'ok' && result !== 'refused')
        failures.push(`${result} on ${text.slice(0, 300)}`);
    }
    for (const text of variants({ eos_token_id: [21, 20], pad_token_id: 20 })) {
      const result = await exercise({ ...files(), generationConfig: text });
      if (result !== 'ok' && result !== 'refused')
        failures.push(`${result} on ${text.slice(0, 300)}`);
    }
    expect(failures.slice(0, 5)).toEqual([]);
    expect(prototypeSnapshot()).toBe(before);
  });
});
