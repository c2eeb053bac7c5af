/**
 * How a chat model calls tools, read from its own chat template: the template is asked to write
 * a conversation holding a probe call and a probe result, and the format is read off what it wrote.
 *
 *   Qwen2.5 / Qwen3 (Hermes):  <tool_call>\n{"name": "calc", "arguments": {...}}\n</tool_call>
 *   Llama 3.1 / 3.2:           {"name": "calc", "parameters": {...}}          (bare JSON)
 *
 * Three things are read, each on its own:
 * - tools: listed by the template (it writes the `tools` it is given), or else by the lab in a
 *   system message (`toolInstructions`) that shows the call format;
 * - calls: the text before and after the JSON object the template writes for an assistant's tool
 *   call, and the object's keys for the name and the arguments; a template that writes no tool
 *   calls (SmolLM2's, the shipped tiny chat model's) gets the Hermes format, taught by the
 *   instructions;
 * - results: tool messages, where the template frames them and ends the turns before them as
 *   often as before (it may rewrite an earlier turn, as Qwen3's drops an empty thinking block:
 *   see `turnEnd`); else a user message of the lab's, `<tool_response>…</tool_response>`.
 *
 * `parseChatTurn` reads a model's turn in that format; the turn is untrusted text, read in one
 * linear scan, never evaluated.
 */
import type { ChatMessage, ToolDefinition } from '../models/tokenizer-api';
import { TASK_CHAT_OPTIONS, type ChatTokenizer } from './chat-task';
import { jsonObjectEnd, parseJsonObject } from './json-object-scan';

export interface ToolCallFormat {
  /** Text the model writes before a call's JSON object, e.g. "<tool_call>\n" ('' for bare JSON). */
  open: string;
  /** Text after it, e.g. "\n</tool_call>". */
  close: string;
  /** The object's key holding the tool's name, e.g. "name". */
  nameKey: string;
  /** The object's key holding the arguments object, e.g. "arguments" or "parameters". */
  argumentsKey: string;
}

export interface ChatToolFormat {
  /** Who lists the tools: the template, or the lab's instructions in a system message. */
  toolsIn: 'template' | 'instructions';
  call: ToolCallFormat;
  /** Where results go: tool messages the template frames, or a user message of the lab's. */
  resultsIn: 'tool-role' | 'user-message';
  /** The template takes a leading system message (else the lab's text opens the user's). */
  systemMessage: boolean;
}

/** The format Qwen's templates define (NousResearch's Hermes format), the lab's fallback. */
export const HERMES_CALL_FORMAT: Readonly<ToolCallFormat> = Object.freeze({
  open: '<tool_call>\n',
  close: '\n</tool_call>',
  nameKey: 'name',
  argumentsKey: 'arguments',
});

const PROBE_TOOL = 'probetoolname';
const PROBE_ARGUMENTS = { probekey: 'probevalue' };
const PROBE_RESULT = 'proberesulttext';
const PROBE_SYSTEM = 'probesystemtext';
const PROBE_DEFINITION: ToolDefinition = {
  name: PROBE_TOOL,
  description: 'probe',
  parameters: { type: 'object', properties: { probekey: { type: 'string' } } },
};
const PROBE_USER: ChatMessage = { role: 'user', content: 'probe question' };
const PROBE_CALL: ChatMessage = {
  role: 'assistant',
  content: '',
  toolCalls: [{ name: PROBE_TOOL, arguments: PROBE_ARGUMENTS }],
};

/** The format `tokenizer`'s template defines (see the file comment). */
export function chatToolFormat(tokenizer: ChatTokenizer): ChatToolFormat {
  const render = (messages: ChatMessage[], generate: boolean, tools?: ToolDefinition[]) => {
    try {
      return tokenizer.applyChatTemplate(messages, {
        ...TASK_CHAT_OPTIONS,
        addGenerationPrompt: generate,
        ...(tools ? { tools } : {}),
      });
    } catch {
      return undefined; // the template refuses it: that part of the format is the lab's
    }
  };
  const listed = render([PROBE_USER], true, [PROBE_DEFINITION])?.includes(PROBE_TOOL) === true;
  const tools = listed ? [PROBE_DEFINITION] : undefined;
  const systemMessage =
    render([{ role: 'system', content: PROBE_SYSTEM }, PROBE_USER], true)?.includes(
      PROBE_SYSTEM,
    ) === true;
  const asked = render([PROBE_USER], true, tools);
  const called = render([PROBE_USER, PROBE_CALL], false, tools);
  const call = asked && called ? callFormat(asked, called, eotText(tokenizer)) : undefined;
  const answered = render(
    [PROBE_USER, PROBE_CALL, { role: 'tool', content: PROBE_RESULT }],
    true,
    tools,
  );
  const resultsFramed =
    call !== undefined &&
    answered?.includes(PROBE_RESULT) === true &&
    turnEnd(called!, answered, eotText(tokenizer)) !== undefined;
  return {
    toolsIn: listed ? 'template' : 'instructions',
    call: call ?? { ...HERMES_CALL_FORMAT },
    resultsIn: resultsFramed ? 'tool-role' : 'user-message',
    systemMessage,
  };
}

/** The text of the end-of-turn token. */
export function eotText(tokenizer: ChatTokenizer): string {
  return tokenizer.token(tokenizer.endOfTurn!);
}

/**
 * True when `after` (the chat with more messages) writes `before` unchanged up to the end of its
 * last turn: a row can then keep what the model wrote and append only what follows.
 */
function continues(before: string, after: string, eot: string): boolean {
  const end = before.lastIndexOf(eot);
  return end >= 0 && after.startsWith(before.slice(0, end + eot.length));
}

/**
 * Where the last turn of `before` ends in `after`, the chat with what follows it; undefined when
 * `after` ends fewer turns. Most templates write `before` unchanged there (`continues`). Some
 * write earlier turns differently once more follow — Qwen3's keeps the empty thinking block only
 * on the last assistant turn — and then a row keeps what the model saw when it wrote each turn
 * (as generation with a cache does), and the turn ends at the same count of end-of-turn tokens.
 */
export function turnEnd(before: string, after: string, eot: string): number | undefined {
  if (continues(before, after, eot)) return before.lastIndexOf(eot) + eot.length;
  const turns = before.split(eot).length - 1;
  let at = -1;
  for (let n = 0, from = 0; n < turns && from >= 0; n++) {
    at = after.indexOf(eot, from);
    from = at < 0 ? -1 : at + eot.length;
  }
  return turns === 0 || at < 0 ? undefined : at + eot.length;
}

/**
 * The call format in `called` (a user turn and the probe call) past `asked` (the same user turn
 * with the generation prompt): the JSON object naming the probe tool, and the text around it.
 */
function callFormat(asked: string, called: string, eot: string): ToolCallFormat | undefined {
  let turnStart = 0;
  while (turnStart < asked.length && asked[turnStart] === called[turnStart]) turnStart++;
  const at = called.indexOf(PROBE_TOOL, turnStart); // past the tools the template listed
  if (at < 0) return undefined;
  for (let start = called.lastIndexOf('{', at); start >= turnStart;) {
    const end = jsonObjectEnd(called, start);
    const object = end > at ? parseJsonObject(called, start, end) : undefined;
    const keys = object ? probeKeys(object) : undefined;
    if (keys) {
      const eotAt = called.indexOf(eot, end);
      return {
        open: called.slice(turnStart, start),
        close: called.slice(end, eotAt < 0 ? called.length : eotAt),
        ...keys,
      };
    }
    start = start === 0 ? -1 : called.lastIndexOf('{', start - 1);
  }
  return undefined;
}

/** The keys of `object` that hold the probe's name and its arguments, if it has both. */
function probeKeys(
  object: Record<string, unknown>,
): { nameKey: string; argumentsKey: string } | undefined {
  const entries = Object.entries(object);
  const name = entries.find(([, v]) => v === PROBE_TOOL)?.[0];
  const args = entries.find(
    ([, v]) =>
      typeof v === 'object' &&
      v !== null &&
      (v as Record<string, unknown>)['probekey'] === 'probevalue',
  )?.[0];
  return name !== undefined && args !== undefined
    ? { nameKey: name, argumentsKey: args }
    : undefined;
}

/** The lab's system text: how to answer, and (where the template does not list them) the tools. */
export function toolInstructions(format: ChatToolFormat, tools: readonly ToolDefinition[]): string {
  const answer =
    'Use the tools when they help. When you know the answer, reply with the answer alone.';
  if (format.toolsIn === 'template') return answer;
  const { open, close, nameKey, argumentsKey } = format.call;
  const listed = tools.map((tool) =>
    JSON.stringify({
      type: 'function',
      function: { name: tool.name, description: tool.description, parameters: tool.parameters },
    }),
  );
  return (
    `You can call these tools:\n${listed.join('\n')}\n` +
    `To call one, reply with ${open}{"${nameKey}": <tool name>, "${argumentsKey}": ` +
    `<arguments as a JSON object>}${close} and nothing else; its result comes back as ` +
    `<tool_response>…</tool_response>. ${answer}`
  );
}

/** A user message of the lab's holding tool results (where the template frames none). */
export function resultsMessage(results: readonly string[]): string {
  return results.map((r) => `<tool_response>\n${r}\n</tool_response>`).join('\n');
}

export interface ParsedToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

export type ChatTurn =
  | { kind: 'calls'; content: string; calls: ParsedToolCall[] }
  | { kind: 'answer'; text: string }
  | { kind: 'malformed'; reason: string };

/** Longest tool name read; longer is malformed. */
const MAX_TOOL_NAME_CHARS = 64;

/**
 * Reads one model turn (its text, special tokens left out): calls in `format`, with any text
 * around them as the turn's content, or else an answer (the text, trimmed). Never throws.
 */
export function parseChatTurn(format: ToolCallFormat, text: string): ChatTurn {
  const open = format.open.trim();
  const close = format.close.trim();
  if (open === '') return parseBareCall(format, text);
  const calls: ParsedToolCall[] = [];
  let content = '';
  let from = 0;
  for (let at = text.indexOf(open); at >= 0; at = text.indexOf(open, from)) {
    content += text.slice(from, at);
    const start = skipSpaces(text, at + open.length);
    const end = jsonObjectEnd(text, start);
    if (end < 0) return malformed(`the call at index ${at} holds no complete JSON object`);
    const call = readCall(format, text, start, end);
    if (typeof call === 'string') return malformed(`the call at index ${at}: ${call}`);
    calls.push(call);
    from = skipSpaces(text, end);
    if (close !== '') {
      if (!text.startsWith(close, from)) {
        return malformed(`the call at index ${at} is not closed by ${close}`);
      }
      from += close.length;
    }
  }
  content += text.slice(from);
  if (calls.length === 0) return { kind: 'answer', text: text.trim() };
  return { kind: 'calls', content: content.trim(), calls };
}

/** Bare JSON calls (Llama's): a turn that is one JSON object is a call; anything else answers. */
function parseBareCall(format: ToolCallFormat, text: string): ChatTurn {
  const start = skipSpaces(text, 0);
  if (text[start] !== '{') return { kind: 'answer', text: text.trim() };
  const end = jsonObjectEnd(text, start);
  if (end < 0 || skipSpaces(text, end) !== text.length) {
    return malformed('a turn opening with "{" must be one complete JSON object');
  }
  const call = readCall(format, text, start, end);
  return typeof call === 'string' ? malformed(call) : { kind: 'calls', content: '', calls: [call] };
}

/** The call in text[start, end), or what is wrong with it. */
function readCall(
  format: ToolCallFormat,
  text: string,
  start: number,
  end: number,
): ParsedToolCall | string {
  const object = parseJsonObject(text, start, end);
  if (object === undefined) return 'not a JSON object';
  const name = object[format.nameKey];
  if (typeof name !== 'string' || name === '' || name.length > MAX_TOOL_NAME_CHARS) {
    return `"${format.nameKey}" must be a tool name`;
  }
  let args = object[format.argumentsKey] ?? {};
  if (typeof args === 'string') args = parseJsonObject(args, 0, args.length) ?? args;
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    return `"${format.argumentsKey}" must be a JSON object`;
  }
  return { name, arguments: args as Record<string, unknown> };
}

function skipSpaces(text: string, from: number): number {
  let i = from;
  while (i < text.length && ' \n\t\r'.includes(text[i]!)) i++;
  return i;
}

const malformed = (reason: string): ChatTurn => ({ kind: 'malformed', reason });
