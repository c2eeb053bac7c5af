/**
 * The tokenizer files of a byte-level BPE trained by bpe-trainer.ts, in the Hugging Face layout:
 * tokenizer.json (the `tokenizers` serialization: Split on PRE_TOKENIZER_REGEX, then ByteLevel;
 * a BPE model; byte-level decoder) and tokenizer_config.json (special tokens and a ChatML chat
 * template). @huggingface/tokenizers and transformers read them as they read Qwen2's files.
 *
 * Special tokens follow the BPE's vocabulary: <|endoftext|> (pad), <|im_start|>, <|im_end|> (eos
 * and the end of every turn), all marked special.
 */
import type { TrainedBpe } from './bpe-trainer';
import { PRE_TOKENIZER_REGEX } from './bpe-trainer';

export const SPECIAL_TOKENS = ['<|endoftext|>', '<|im_start|>', '<|im_end|>'] as const;

/**
 * ChatML as Qwen2 and SmolLM2 write it, without a default system message (a tiny model's context
 * is short): each message is `<|im_start|>ROLE\nCONTENT<|im_end|>\n`; a system message may only
 * come first; roles are system, user and assistant; the generation prompt opens the assistant's
 * turn.
 */
export const CHATML_TEMPLATE =
  '{%- for message in messages %}\n' +
  "    {%- if message.role == 'system' and not loop.first %}\n" +
  "        {{- raise_exception('a system message may only come first') }}\n" +
  "    {%- elif message.role not in ['system', 'user', 'assistant'] %}\n" +
  "        {{- raise_exception('role must be system, user or assistant, got ' + message.role) }}\n" +
  '    {%- endif %}\n' +
  "    {{- '<|im_start|>' + message.role + '\\n' + message.content + '<|im_end|>\\n' }}\n" +
  '{%- endfor %}\n' +
  '{%- if add_generation_prompt %}\n' +
  "    {{- '<|im_start|>assistant\\n' }}\n" +
  '{%- endif %}\n';

/** The id of each special token: right after the BPE's vocabulary. */
export function specialTokenIds(bpe: TrainedBpe): Record<(typeof SPECIAL_TOKENS)[number], number> {
  const base = bpe.vocab.length;
  return {
    '<|endoftext|>': base,
    '<|im_start|>': base + 1,
    '<|im_end|>': base + 2,
  };
}

/** tokenizer.json's object for `bpe` with the special tokens appended. */
export function tokenizerJson(bpe: TrainedBpe): Record<string, unknown> {
  const ids = specialTokenIds(bpe);
  const byteLevel = {
    type: 'ByteLevel',
    add_prefix_space: false,
    trim_offsets: false,
    use_regex: false,
  };
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: SPECIAL_TOKENS.map((content) => ({
      id: ids[content],
      content,
      single_word: false,
      lstrip: false,
      rstrip: false,
      normalized: false,
      special: true,
    })),
    normalizer: null,
    pre_tokenizer: {
      type: 'Sequence',
      pretokenizers: [
        {
          type: 'Split',
          pattern: { Regex: PRE_TOKENIZER_REGEX },
          behavior: 'Isolated',
          invert: false,
        },
        byteLevel,
      ],
    },
    post_processor: byteLevel,
    decoder: byteLevel,
    model: {
      type: 'BPE',
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab: Object.fromEntries(bpe.vocab.map((token, id) => [token, id])),
      merges: bpe.merges.map(([a, b]) => [a, b]),
    },
  };
}

/** tokenizer_config.json's object: special tokens, the chat template, no BOS/EOS added. */
export function tokenizerConfigJson(
  bpe: TrainedBpe,
  contextTokens: number,
): Record<string, unknown> {
  const ids = specialTokenIds(bpe);
  return {
    add_bos_token: false,
    add_eos_token: false,
    add_prefix_space: false,
    added_tokens_decoder: Object.fromEntries(
      SPECIAL_TOKENS.map((content) => [
        String(ids[content]),
        {
          content,
          lstrip: false,
          normalized: false,
          rstrip: false,
          single_word: false,
          special: true,
        },
      ]),
    ),
    additional_special_tokens: ['<|im_start|>', '<|im_end|>'],
    bos_token: null,
    chat_template: CHATML_TEMPLATE,
    clean_up_tokenization_spaces: false,
    eos_token: '<|im_end|>',
    errors: 'replace',
    model_max_length: contextTokens,
    pad_token: '<|endoftext|>',
    split_special_tokens: false,
    tokenizer_class: 'PreTrainedTokenizerFast',
    unk_token: null,
  };
}

/** generation_config.json's object: stop at <|im_end|>, pad with <|endoftext|>, greedy. */
export function generationConfigJson(bpe: TrainedBpe): Record<string, unknown> {
  const ids = specialTokenIds(bpe);
  return {
    eos_token_id: ids['<|im_end|>'],
    pad_token_id: ids['<|endoftext|>'],
    do_sample: false,
  };
}
