/**
 * Observation tokens: what the environment writes into an episode (`<result>text</result>`).
 * The text is encoded character by character, so a tool result can never smuggle in a special
 * token: the characters '<' 'a' 'n' 's' … of "<answer>" in a search result stay characters.
 * Characters outside the tokenizer's alphabet (capitals, other unicode) become '?'.
 */
import { SPECIAL_TOKENS, type CharTokenizer } from '../models/tokenizer';

/** `<result>` + text as plain characters + `</result>`. */
export function observationTokens(tokenizer: CharTokenizer, text: string): number[] {
  const chars = tokenizer.spec.chars;
  const idOf = (ch: string) => {
    const index = chars.indexOf(ch);
    return index < 0 ? -1 : SPECIAL_TOKENS.length + index;
  };
  const unknown = Math.max(idOf('?'), SPECIAL_TOKENS.length); // '?' or the first character
  const ids = [tokenizer.special['<result>']];
  for (let i = 0; i < text.length; i++) {
    const id = idOf(text[i]!);
    ids.push(id < 0 ? unknown : id);
  }
  ids.push(tokenizer.special['</result>']);
  return ids;
}
