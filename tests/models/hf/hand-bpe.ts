/**
 * A byte-level BPE written by hand for the HfTokenizer tests: a dozen tokens and seven merges, so
 * that every expected id can be worked out from the merge ranks; a gap in the ids; special and
 * plain added tokens; a chat template that prints what the template receives.
 */
import type { HfTokenizerFiles } from '../../../src/models/hf/hf-tokenizer';

// Byte-level alphabet: printable ASCII stands for itself, a space is 'Ġ' (U+0120); "€" is the
// bytes E2 82 AC, written 'â' (E2 is printable Latin-1), 'Ĥ' (82 is the 37th unprintable byte:
// U+0100 + 36) and '¬' (AC).
export const VOCAB_TOKENS = [
  'h', // 0
  'e', // 1
  'l', // 2
  'o', // 3
  'Ġ', // 4
  'w', // 5
  'r', // 6
  'd', // 7
  'â', // 8
  'Ĥ', // 9
  '¬', // 10
  'll', // 11
  'he', // 12
  'hell', // 13
  'hello', // 14
  'Ġw', // 15
  'âĤ', // 16
  'âĤ¬', // 17
];
// Ids 18 and 19 are left out: a gap.
export const MERGES = [
  ['l', 'l'],
  ['h', 'e'],
  ['he', 'll'],
  ['hell', 'o'],
  ['Ġ', 'w'],
  ['â', 'Ĥ'],
  ['âĤ', '¬'],
];
export const END = 20; // <|end|>, special: the template's end of turn
export const EOS = 21; // <|eos|>, special
export const TAG = 22; // <x>, not special

export function tokenizerJson(edit: (json: Record<string, unknown>) => void = () => {}): string {
  const json: Record<string, unknown> = {
    version: '1.0',
    added_tokens: [
      { id: END, content: '<|end|>', special: true },
      { id: EOS, content: '<|eos|>', special: true },
      { id: TAG, content: '<x>', special: false },
    ],
    normalizer: null,
    pre_tokenizer: { type: 'ByteLevel', add_prefix_space: false, use_regex: true },
    post_processor: null,
    decoder: { type: 'ByteLevel' },
    model: {
      type: 'BPE',
      unk_token: null,
      vocab: Object.fromEntries(VOCAB_TOKENS.map((t, id) => [t, id])),
      merges: MERGES.map((m) => [...m]),
    },
  };
  edit(json);
  return JSON.stringify(json);
}

export const TEMPLATE =
  '{% for m in messages %}<{{ m.role }}>{{ m.content }}' +
  '{% if m.tool_calls %}{{ m.tool_calls | tojson }}{% endif %}<|end|>{% endfor %}' +
  '{% if tools %}{{ tools | tojson }}{% endif %}' +
  '{% if add_generation_prompt %}<assistant>{% endif %}{{ eos_token }}';

export function files(
  config: Record<string, unknown> = {},
  more: Partial<HfTokenizerFiles> = {},
): HfTokenizerFiles {
  return {
    tokenizerJson: tokenizerJson(),
    tokenizerConfig: JSON.stringify({ eos_token: '<|eos|>', chat_template: TEMPLATE, ...config }),
    ...more,
  };
}
