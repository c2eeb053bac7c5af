/**
 * The call parser: reads one model turn (decoded text, special tokens written as their strings)
 * into an action — call a tool, answer, or malformed. The text is untrusted model output; the
 * parser is a hand scanner (one pass to find the special tokens, then constant work per token),
 * linear in the text's length on every input, and it never throws.
 *
 * Turn grammar (a turn ends at `</call>`, `</answer>` or `<eos>`):
 *
 *   turn    = [ thought ] ( call | answer ) { whitespace }
 *   thought = free text, at most MAX_THOUGHT_CHARS characters, no special token in it
 *   call    = "<call>" name "(" args ")" "</call>"      name = [a-z]+, directly after <call>
 *   answer  = "<answer>" text "</answer>"               text: anything but a special token
 *
 * args is everything between the first "(" and the LAST ")" before `</call>` (so it may hold
 * parentheses of its own, and may be empty); `)` must come right before `</call>`. Exactly one tag
 * pair per turn: a second tag, any special token inside the pair (a model writing `<result>`
 * itself, say) or any text other than whitespace after the closing tag is malformed. Every special
 * token string counts as a tag, `<pad>` included. The answer text is returned as written, not
 * trimmed (the task's verifier decides what it accepts).
 */
import { SPECIAL_TOKENS, type SpecialToken } from '../models/tokenizer';

export type TurnAction =
  | { kind: 'call'; tool: string; args: string } //   "<call>calc(12*34)</call>"
  | { kind: 'answer'; text: string } //                "<answer>408</answer>"
  | { kind: 'malformed'; reason: string }; //          anything else, reason says what is wrong

/** Longest free text allowed before the tag. */
export const MAX_THOUGHT_CHARS = 64;

interface Tag {
  token: SpecialToken;
  index: number;
}

/** The special token starting at text[i], or null. */
function tagAt(text: string, i: number): SpecialToken | null {
  if (text.charCodeAt(i) !== 0x3c /* '<' */) return null;
  for (const token of SPECIAL_TOKENS) {
    if (text.startsWith(token, i)) return token;
  }
  return null;
}

/** Every special token in `text`, in order (no two overlap: none is a prefix of another). */
function findTags(text: string): Tag[] {
  const tags: Tag[] = [];
  for (let i = 0; i < text.length;) {
    const token = tagAt(text, i);
    if (token === null) {
      i++;
    } else {
      tags.push({ token, index: i });
      i += token.length;
    }
  }
  return tags;
}

const isLowerLetter = (code: number): boolean => code >= 0x61 && code <= 0x7a;

function isWhitespace(text: string, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = text[i];
    if (c !== ' ' && c !== '\n' && c !== '\t' && c !== '\r') return false;
  }
  return true;
}

const malformed = (reason: string): TurnAction => ({ kind: 'malformed', reason });

/** Parses one model turn; never throws. */
export function parseTurn(text: string): TurnAction {
  if (typeof text !== 'string') return malformed(`turn must be text, got ${typeof text}`);
  const tags = findTags(text);
  const open = tags[0];
  if (open === undefined) return malformed('no <call> or <answer> tag');
  if (open.token !== '<call>' && open.token !== '<answer>') {
    return malformed(`${open.token} at index ${open.index} before any <call> or <answer>`);
  }
  if (open.index > MAX_THOUGHT_CHARS) {
    return malformed(
      `text before ${open.token} is ${open.index} characters, more than ${MAX_THOUGHT_CHARS}`,
    );
  }
  const closeToken = open.token === '<call>' ? '</call>' : '</answer>';
  const close = tags[1];
  if (close === undefined) return malformed(`${open.token} at index ${open.index} is not closed`);
  if (close.token !== closeToken) {
    return malformed(`${close.token} at index ${close.index} inside ${open.token}`);
  }
  const after = tags[2];
  if (after !== undefined) {
    return malformed(
      `${after.token} at index ${after.index} after ${closeToken}: one tag pair per turn`,
    );
  }
  const end = close.index + closeToken.length;
  if (!isWhitespace(text, end, text.length)) {
    return malformed(`text after ${closeToken} at index ${end}`);
  }
  const bodyStart = open.index + open.token.length;
  if (open.token === '<answer>')
    return { kind: 'answer', text: text.slice(bodyStart, close.index) };
  return parseCall(text, bodyStart, close.index);
}

/** text[start, end) is the inside of <call>…</call>: name "(" args ")". */
function parseCall(text: string, start: number, end: number): TurnAction {
  let i = start;
  while (i < end && isLowerLetter(text.charCodeAt(i))) i++;
  if (i === start) {
    return malformed(`tool name at index ${start} must be lowercase letters a-z`);
  }
  if (i === end || text[i] !== '(') {
    return malformed(`expected "(" after the tool name at index ${i}`);
  }
  if (text[end - 1] !== ')') {
    return malformed(`expected ")" right before </call> at index ${end}`);
  }
  return { kind: 'call', tool: text.slice(start, i), args: text.slice(i + 1, end - 1) };
}

/**
 * The text inside the first `<answer>…</answer>` of a whole transcript, or null (no <answer>, or
 * the first one not closed right away by </answer>). Text inside `<result>…</result>` is skipped,
 * so a tool result can never supply the answer. Linear time.
 */
export function findAnswer(transcript: string): string | null {
  if (typeof transcript !== 'string') return null;
  const tags = findTags(transcript);
  let inResult = false;
  for (let k = 0; k < tags.length; k++) {
    const tag = tags[k]!;
    if (inResult) {
      if (tag.token === '</result>') inResult = false;
      continue;
    }
    if (tag.token === '<result>') {
      inResult = true;
    } else if (tag.token === '<answer>') {
      const next = tags[k + 1];
      if (next?.token !== '</answer>') return null;
      return transcript.slice(tag.index + tag.token.length, next.index);
    }
  }
  return null;
}
