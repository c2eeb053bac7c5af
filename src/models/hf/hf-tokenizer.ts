/**
 * A Hugging Face model's tokenizer behind the lab's Tokenizer interface: tokenizer.json through
 * @huggingface/tokenizers, the chat template through @huggingface/jinja (chat-template.ts), the
 * special and stop tokens from tokenizer_config.json and generation_config.json.
 *
 * Choices (each as `transformers` does unless said):
 * - encode(text) writes the text's tokens only: no BOS/EOS is added, as transformers encodes a
 *   rendered chat (its plain encode adds the post-processor's by default): a chat template writes
 *   the BOS where the model wants one; add `bos` yourself for plain text. Added tokens such as
 *   "<|im_end|>" in the text are read as their single token.
 * - decode leaves clean-up of tokenization spaces off unless tokenizer_config.json turns it on,
 *   so decode(encode(s)) === s for byte-level models, up to their normalizer (Qwen's NFC).
 * - pad: tokenizer_config.json's pad_token, else generation_config.json's pad_token_id, else eos.
 * - bos: tokenizer_config.json's bos_token (Qwen has none: undefined).
 * - eos: tokenizer_config.json's eos_token, else the first of generation_config.json's ids.
 * - stopIds: eos, generation_config.json's eos_token_id(s), and the end-of-turn token — the
 *   special token the chat template writes right after an assistant's message (e.g. <|im_end|>,
 *   <|eot_id|>), found by rendering a two-turn conversation once.
 * - token(id): the token as text; for byte-level vocabularies the bytes decoded, with a piece of
 *   a UTF-8 character split across tokens shown as <0xHH> per byte (hf-tokenizer-bytes.ts).
 * - Special tokens: added tokens marked special, additional_special_tokens, and the bos/eos/pad/
 *   unk tokens. decode's skipSpecial leaves out exactly these.
 */

import { Tokenizer as LibraryTokenizer } from '@huggingface/tokenizers';
import { TokenizerError } from '../tokenizer';
import type { ChatMessage, Tokenizer, TokenizerRecord } from '../tokenizer-api';
import { ChatTemplate, type HfChatTemplateOptions } from './chat-template';
import { byteLevelBytes, readableBytes } from './hf-tokenizer-bytes';
import {
  additionalSpecialTokens,
  chatTemplates,
  cleanUpSpaces,
  fileText,
  generationEosIds,
  parseJsonObject,
  SPECIAL_TOKEN_FIELDS,
  specialTokenText,
} from './hf-tokenizer-config';
import { HfTokenizerError, quoted, shown } from './hf-tokenizer-error';
import { checkTokenizerJson } from './hf-tokenizer-json';
import { errorText } from '../../util/error-text';

/** A model's tokenizer files as read (bytes) or as text. */
export interface HfTokenizerFiles {
  /** tokenizer.json; its bytes (UTF-8 of the text, if text is given) are hashed into the spec. */
  tokenizerJson: Uint8Array | string;
  tokenizerConfig: Uint8Array | string;
  generationConfig?: Uint8Array | string;
  /** chat_template.jinja, where a model keeps its template there (it replaces the config's). */
  chatTemplateJinja?: Uint8Array | string;
}

/** Sources are names for people (a Hub id, a folder): longer ones are refused. */
const MAX_SOURCE_LENGTH = 300;

/** Text written after an assistant's message, to find the template's end-of-turn token. */
const TURN_PROBE = 'q7Zx';

export class HfTokenizer implements Tokenizer {
  readonly spec: TokenizerRecord;
  readonly vocabSize: number;
  readonly pad: number;
  readonly bos: number | undefined;
  readonly eos: number;
  readonly stopIds: readonly number[];
  /** The token the chat template ends an assistant's turn with; undefined if none was found. */
  readonly endOfTurn: number | undefined;
  /**
   * Present where the model has a chat template. Beyond the interface, `options.variables` sets
   * variables some templates read (Qwen3's `enable_thinking`).
   */
  readonly applyChatTemplate?: (
    messages: readonly ChatMessage[],
    options: HfChatTemplateOptions,
  ) => string;

  // tokens: (vocabSize) id → its vocabulary string, undefined for ids the file leaves out.
  private readonly tokens: (string | undefined)[];
  private readonly addedTokens: ReadonlyMap<number, string>;
  private readonly specialIds: ReadonlySet<number>;

  private constructor(
    spec: TokenizerRecord,
    private readonly library: LibraryTokenizer,
    private readonly byteLevel: boolean,
    private readonly missingBytes: ReadonlySet<number>,
    private readonly cleanUp: boolean,
    config: Record<string, unknown>,
    generation: Record<string, unknown>,
    template: ChatTemplate | undefined,
    addedTokens: ReadonlyMap<number, string>,
    specialFromFile: readonly number[],
  ) {
    this.spec = spec;
    this.addedTokens = addedTokens;
    this.tokens = [];
    for (const [token, id] of library.get_vocab(true)) this.tokens[id] = token;
    this.vocabSize = this.tokens.length;

    const idOf = (field: string): number | undefined => {
      const text = specialTokenText(config, field);
      if (text === undefined) return undefined;
      const id = library.token_to_id(text);
      if (id === undefined) {
        throw new HfTokenizerError(
          'tokenizer_config.json',
          field,
          `${quoted(text)} is not a token of tokenizer.json`,
        );
      }
      return id;
    };
    const generationEos = generationEosIds(generation, this.vocabSize);
    const eos = idOf('eos_token') ?? generationEos[0];
    if (eos === undefined) {
      throw new HfTokenizerError(
        'tokenizer_config.json',
        'eos_token',
        'is missing, and generation_config.json has no eos_token_id',
      );
    }
    this.eos = eos;
    this.bos = idOf('bos_token');
    this.pad = idOf('pad_token') ?? generationPad(generation, this.vocabSize) ?? eos;

    const special = new Set(specialFromFile);
    for (const field of SPECIAL_TOKEN_FIELDS) {
      const id = idOf(field);
      if (id !== undefined) special.add(id);
    }
    for (const text of additionalSpecialTokens(config)) {
      const id = library.token_to_id(text);
      if (id !== undefined) special.add(id);
    }
    this.specialIds = special;

    if (template !== undefined) {
      this.applyChatTemplate = (messages, options) => template.render(messages, options);
    }
    this.endOfTurn = template === undefined ? undefined : this.findEndOfTurn(template);
    const stops = [eos, ...generationEos];
    if (this.endOfTurn !== undefined) stops.push(this.endOfTurn);
    this.stopIds = Object.freeze([...new Set(stops)]);
  }

  /**
   * Reads and checks the files. `source` names where they came from (a Hub model id or a folder
   * name) for the spec; errors name the file and field.
   */
  static async load(source: string, files: HfTokenizerFiles): Promise<HfTokenizer> {
    if (typeof source !== 'string' || source.length === 0 || source.length > MAX_SOURCE_LENGTH) {
      throw new TokenizerError(
        'source',
        `must be a string of 1–${MAX_SOURCE_LENGTH} characters, got ${shown(source)}`,
      );
    }
    const tokenizerText = fileText('tokenizer.json', files.tokenizerJson);
    const tokenizerBytes =
      typeof files.tokenizerJson === 'string'
        ? new TextEncoder().encode(files.tokenizerJson)
        : files.tokenizerJson;
    const checked = checkTokenizerJson(parseJsonObject('tokenizer.json', tokenizerText));
    const config = parseJsonObject(
      'tokenizer_config.json',
      fileText('tokenizer_config.json', files.tokenizerConfig),
    );
    const generation =
      files.generationConfig === undefined
        ? {}
        : parseJsonObject(
            'generation_config.json',
            fileText('generation_config.json', files.generationConfig),
          );

    let library: LibraryTokenizer;
    try {
      library = new LibraryTokenizer(checked.json, config);
    } catch (error) {
      const reason = errorText(error);
      throw new HfTokenizerError('tokenizer.json', '', `cannot be read: ${reason.slice(0, 300)}`);
    }

    const variables: Record<string, string> = {};
    for (const field of SPECIAL_TOKEN_FIELDS) {
      const text = specialTokenText(config, field);
      if (text !== undefined) variables[field] = text;
    }
    const jinja =
      files.chatTemplateJinja === undefined
        ? undefined
        : fileText('chat_template.jinja', files.chatTemplateJinja);
    const sources = chatTemplates(config, jinja);
    const template = sources.size > 0 ? new ChatTemplate(sources, variables) : undefined;

    const spec: TokenizerRecord = Object.freeze({
      kind: 'hf',
      version: 1,
      source,
      sha256: await sha256Hex(tokenizerBytes),
    });
    return new HfTokenizer(
      spec,
      library,
      checked.byteLevelDecoder,
      checked.missingBytes,
      cleanUpSpaces(config),
      config,
      generation,
      template,
      new Map(checked.addedTokens.map((t) => [t.id, t.content])),
      checked.addedTokens.filter((t) => t.special).map((t) => t.id),
    );
  }

  /** Text → ids (no BOS/EOS added). Throws naming the first character it cannot encode. */
  encode(text: string): Int32Array {
    if (typeof text !== 'string') {
      throw new TokenizerError('text', `must be a string, got ${typeof text}`);
    }
    if (text.length === 0) return new Int32Array(0);
    if (this.missingBytes.size > 0) this.checkBytes(text);
    const { ids, tokens } = this.library.encode(text, { add_special_tokens: false });
    const out = new Int32Array(ids.length);
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i];
      if (id === undefined) {
        // Only a tokenizer with an unknown token that is itself not in the vocabulary gets here.
        throw new TokenizerError(
          'text',
          `token ${i} (${quoted(tokens[i] ?? '')}) is not in tokenizer.json's vocabulary`,
        );
      }
      out[i] = id;
    }
    return out;
  }

  /**
   * Ids → text. `skipSpecial` leaves out the special tokens. An id that is not an integer in
   * [0, vocabSize − 1], or that tokenizer.json gives no token, is an error naming its index.
   */
  decode(ids: ArrayLike<number>, options: { skipSpecial?: boolean } = {}): string {
    const skip = options.skipSpecial ?? false;
    const kept: number[] = [];
    for (let i = 0; i < ids.length; i++) {
      const id = ids[i]!;
      this.checkId(id, 'ids', `index ${i}: id `);
      if (!(skip && this.specialIds.has(id))) kept.push(id);
    }
    if (kept.length === 0) return ''; // the library refuses an empty list
    return this.library.decode(kept, {
      skip_special_tokens: false,
      clean_up_tokenization_spaces: this.cleanUp,
    });
  }

  /** The text of one token: an added token's text, else what it decodes to (see the header). */
  token(id: number): string {
    this.checkId(id, 'id', '');
    const added = this.addedTokens.get(id);
    if (added !== undefined) return added;
    const token = this.tokens[id]!;
    if (this.byteLevel) {
      const bytes = byteLevelBytes(token);
      if (bytes !== undefined) return readableBytes(bytes);
    }
    return this.library.decode([id], { clean_up_tokenization_spaces: false });
  }

  isSpecial(id: number): boolean {
    return this.specialIds.has(id);
  }

  /** `field` 'ids' with `where` 'index 3: id ' (decode), or 'id' with '' (token). */
  private checkId(id: number, field: string, where: string): void {
    if (!Number.isInteger(id) || id < 0 || id >= this.vocabSize) {
      throw new TokenizerError(
        field,
        `${where}must be an integer in [0, ${this.vocabSize - 1}], got ${shown(id)}`,
      );
    }
    if (this.tokens[id] === undefined) {
      // A gap in the file's ids (real files have none; a model's vocab_size may exceed them).
      throw new TokenizerError(field, `${where}${id} has no token in tokenizer.json`);
    }
  }

  /**
   * Names the first character holding a byte the byte-level vocabulary lacks (the library would
   * drop it silently). Added tokens in the text are skipped: they are encoded whole.
   */
  private checkBytes(text: string): void {
    const encoder = new TextEncoder();
    const added = [...this.addedTokens.values()];
    for (let i = 0; i < text.length;) {
      const token = added.find((t) => text.startsWith(t, i));
      if (token !== undefined) {
        i += token.length;
        continue;
      }
      const char = String.fromCodePoint(text.codePointAt(i)!);
      for (const byte of encoder.encode(char)) {
        if (this.missingBytes.has(byte)) {
          const hex = byte.toString(16).toUpperCase().padStart(2, '0');
          throw new TokenizerError(
            'text',
            `index ${i}: character ${JSON.stringify(char)} needs byte 0x${hex}, which ` +
              `tokenizer.json's vocabulary lacks`,
          );
        }
      }
      i += char.length;
    }
  }

  /**
   * The special token the template writes right after an assistant's message: a user turn and
   * an assistant turn are rendered, and the text after the assistant's words (spaces skipped)
   * is matched against the special tokens, longest first. A template that fails on this
   * conversation (one that demands a system message, say) gives undefined.
   */
  private findEndOfTurn(template: ChatTemplate): number | undefined {
    let text: string;
    try {
      text = template.render(
        [
          { role: 'user', content: 'Hi' },
          { role: 'assistant', content: TURN_PROBE },
        ],
        { addGenerationPrompt: false },
      );
    } catch {
      return undefined;
    }
    const at = text.lastIndexOf(TURN_PROBE);
    if (at < 0) return undefined;
    const after = text.slice(at + TURN_PROBE.length).trimStart();
    let best: number | undefined;
    let bestLength = 0;
    for (const id of this.specialIds) {
      const token = this.tokens[id];
      if (token !== undefined && token.length > bestLength && after.startsWith(token)) {
        best = id;
        bestLength = token.length;
      }
    }
    return best;
  }
}

/** generation_config.json's pad_token_id, where it is an id of this tokenizer. */
function generationPad(generation: Record<string, unknown>, vocabSize: number): number | undefined {
  const value = Object.hasOwn(generation, 'pad_token_id') ? generation['pad_token_id'] : undefined;
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value >= vocabSize) {
    throw new HfTokenizerError(
      'generation_config.json',
      'pad_token_id',
      `must be an integer in [0, ${vocabSize - 1}] (the tokenizer's ids), got ${shown(value)}`,
    );
  }
  return value;
}

/** SHA-256 of the bytes as lowercase hex (Web Crypto: browsers, workers and Node ≥ 20). */
async function sha256Hex(bytes: Uint8Array): Promise<string> {
  // A copy: the caller's view may sit on a shared or larger buffer.
  const digest = await crypto.subtle.digest('SHA-256', new Uint8Array(bytes));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, '0')).join('');
}
