/**
 * Agent episodes for a chat model: the tool tasks asked in the model's own chat template, tool
 * calls read in the format that template defines (src/agents/chat-tool-format.ts), and results
 * written back the way the template frames them — the same `Episode` the tiny GPT's tag-based
 * runner makes (src/agents/episode.ts), so rewards, trainers and the inspector read both alike.
 *
 *   row:  template(system, user, tools) | turn₁ <eot> | "\n<|im_start|>user\n<tool_response>…" | turn₂ <eot> | pad…
 *   mask:             0 …                  1 … 1          0 … … … … … … … … … … … … … … … 0      1 … 1       0
 *
 * A turn ends at a stop id (end of turn or eos). A turn with calls in the template's format runs
 * them (up to the task's maxCalls per episode); any other turn is the answer, its text trimmed.
 * The row keeps the model's own tokens; what follows a turn is the template's rendering of the
 * conversation with the results, past the end of that turn, so the row reads as the template
 * writes the whole chat. A result's text is the tool's: any special token it spells is written
 * as '?', so no tool output can end a turn or open one.
 */
import type { TokenTaskSample } from '../envs/token-tasks/types';
import type { ChatMessage, ToolDefinition } from '../models/tokenizer-api';
import { OpInputError } from '../ops/errors';
import type { AgentTask } from './agent-task';
import { TASK_CHAT_OPTIONS, type ChatTokenizer } from './chat-task';
import {
  chatToolFormat,
  turnEnd,
  eotText,
  parseChatTurn,
  resultsMessage,
  toolInstructions,
  type ChatToolFormat,
  type ParsedToolCall,
} from './chat-tool-format';
import { chatToolArgs, chatToolDefinitions } from './chat-tools';
import {
  appendModelTurn,
  appendObservation,
  driveEpisodes,
  finishRow,
  startRow,
  type Episode,
  type EpisodeRequestBase,
  type EpisodeRow,
  type ToolCallRecord,
} from './episode-rows';
import { createToolSet, MAX_TOOL_RESULT_CHARS, runTool, type Tool } from './tools';

export interface ChatEpisodeRequest extends EpisodeRequestBase {
  tokenizer: ChatTokenizer;
}

/** A task's chat: the template's format and what opens every conversation. */
export interface ChatAgentSetup {
  format: ChatToolFormat;
  tools: ToolDefinition[];
  tokenizer: ChatTokenizer;
}

const formats = new WeakMap<ChatTokenizer, ChatToolFormat>();

/** The setup for `task` on `tokenizer` (its format read once per tokenizer). */
export function chatAgentSetup(tokenizer: ChatTokenizer, task: AgentTask): ChatAgentSetup {
  let format = formats.get(tokenizer);
  if (format === undefined) {
    format = chatToolFormat(tokenizer);
    formats.set(tokenizer, format);
  }
  const offered = task.env.useTools ? task.tools : [];
  return { format, tools: chatToolDefinitions(offered), tokenizer };
}

/** The messages that open the episode of `question`: the lab's instructions and the question. */
export function openingMessages(setup: ChatAgentSetup, question: string): ChatMessage[] {
  const instructions = toolInstructions(setup.format, setup.tools);
  return setup.format.systemMessage
    ? [
        { role: 'system', content: instructions },
        { role: 'user', content: question },
      ]
    : [{ role: 'user', content: `${instructions}\n\n${question}` }];
}

/** The conversation as the template writes it, the tools listed where the template lists them. */
export function renderChat(
  setup: ChatAgentSetup,
  messages: readonly ChatMessage[],
  addGenerationPrompt: boolean,
): string {
  const listTools = setup.format.toolsIn === 'template' && setup.tools.length > 0;
  return setup.tokenizer.applyChatTemplate(messages, {
    ...TASK_CHAT_OPTIONS,
    addGenerationPrompt,
    ...(listTools ? { tools: setup.tools } : {}),
  });
}

/** The prompt ids of `sample`: the opening messages, ending where the assistant writes. */
export function chatAgentPromptIds(
  setup: ChatAgentSetup,
  task: AgentTask,
  sample: TokenTaskSample,
): Int32Array {
  const question = task.chatQuestion?.(sample) ?? sample.prompt;
  return setup.tokenizer.encode(renderChat(setup, openingMessages(setup, question), true));
}

/**
 * The messages a turn's calls add (the assistant's turn, then the results), with the result texts
 * stood in for by `placeholder(k)`, so that their tokens are encoded on their own.
 */
function turnMessages(
  setup: ChatAgentSetup,
  text: string,
  content: string,
  calls: readonly ParsedToolCall[],
  placeholder: (k: number) => string,
): ChatMessage[] {
  const results = calls.map((_, k) => placeholder(k));
  if (setup.format.resultsIn === 'user-message') {
    return [
      { role: 'assistant', content: text },
      { role: 'user', content: resultsMessage(results) },
    ];
  }
  return [
    { role: 'assistant', content, toolCalls: calls },
    ...results.map((r): ChatMessage => ({ role: 'tool', content: r })),
  ];
}

/**
 * The ids that follow a turn with calls: the template's text past the end of that turn, up to
 * the next generation prompt, with each result's text encoded where its placeholder stood.
 */
export function observationIds(
  setup: ChatAgentSetup,
  history: readonly ChatMessage[],
  turn: { text: string; content: string; calls: readonly ParsedToolCall[] },
  results: readonly string[],
): number[] {
  const mark = (k: number) => `\uE000result ${k}\uE000`;
  const added = turnMessages(setup, turn.text, turn.content, turn.calls, mark);
  const before = renderChat(setup, [...history, added[0]!], false);
  const after = renderChat(setup, [...history, ...added], true);
  const end = turnEnd(before, after, eotText(setup.tokenizer));
  if (end === undefined) {
    throw new Error(
      'chat episode: the chat template ends fewer turns once a tool result follows them, so a ' +
        'row cannot keep what the model wrote',
    );
  }
  const text = after.slice(end);
  const ids: number[] = [];
  const parts = text.split(/\uE000result (\d+)\uE000/);
  parts.forEach((part, i) => {
    if (i % 2 === 0) ids.push(...setup.tokenizer.encode(part));
    else ids.push(...toolTextIds(setup.tokenizer, results[Number(part)]!));
  });
  return ids;
}

/** A tool's text as ids, every special token it spells written as '?'. */
function toolTextIds(tokenizer: ChatTokenizer, text: string): number[] {
  const unknown = [...tokenizer.encode('?')];
  return [...tokenizer.encode(text)].flatMap((id) => (tokenizer.isSpecial(id) ? unknown : [id]));
}

interface ChatRow extends EpisodeRow {
  messages: ChatMessage[];
}

export async function runChatEpisodes(request: ChatEpisodeRequest): Promise<Episode[]> {
  const { tokenizer, task, maxLength: L } = request;
  const setup = chatAgentSetup(tokenizer, task);
  const tools = createToolSet(task.env.useTools ? task.tools : []);
  const rows: ChatRow[] = request.samples.map((sample, i) => {
    const question = task.chatQuestion?.(sample) ?? sample.prompt;
    const messages = openingMessages(setup, question);
    const ids = [...tokenizer.encode(renderChat(setup, messages, true))];
    if (ids.length >= L - 1) {
      // Not an episode that ran out of room: no episode of this task fits, so none is run.
      throw new OpInputError(
        'runChatEpisodes',
        `samples[${i}]`,
        `its prompt takes ${ids.length} tokens in the chat template (the tools and instructions ` +
          `included), but a row holds ${L}; a model with a longer context is needed for '${task.name}'`,
      );
    }
    return { ...startRow(sample, ids, question), messages };
  });
  const loop = {
    ...request,
    maxTurns: task.env.maxTurns,
    stopTokens: tokenizer.stopIds,
    padToken: tokenizer.pad,
  };
  return driveEpisodes(rows, loop, takeTurn);

  /** Appends one model turn to `row`, then acts on it: run its calls, take an answer, or stop. */
  function takeTurn(row: ChatRow, written: number[]): void {
    appendModelTurn(row, written, textOf(written, false));
    const last = written[written.length - 1];
    if (last === undefined || !tokenizer.stopIds.includes(last)) {
      return finishRow(row, 'token-limit'); // the turn ran out of room before a stop id
    }
    const text = textOf(written.slice(0, -1), true);
    const parsed = parseChatTurn(setup.format.call, text);
    if (parsed.kind === 'answer') {
      row.episode.answer = parsed.text;
      return finishRow(row, 'answer');
    }
    if (parsed.kind === 'malformed') return finishRow(row, 'malformed');
    const results = parsed.calls.map((call) => runCall(row.episode.calls, tools, call).result);
    const observation = observationIds(setup, row.messages, { text, ...parsed }, results);
    row.messages.push(
      ...turnMessages(setup, text, parsed.content, parsed.calls, (k) => results[k]!),
    );
    appendObservation(row, observation, L, (kept) => textOf(kept, false));
  }

  /** Runs one call against the episode's budget and records it. */
  function runCall(
    calls: ToolCallRecord[],
    offered: ReadonlyMap<string, Tool>,
    call: ParsedToolCall,
  ): ToolCallRecord {
    const args = chatToolArgs(call.name, call.arguments);
    const argsText = args.ok ? args.text : JSON.stringify(call.arguments).slice(0, 64);
    const outcome =
      calls.length >= task.env.maxCalls
        ? { ok: false, text: 'error: call limit reached' }
        : args.ok
          ? runTool(offered, call.name, args.text)
          : { ok: false, text: args.error };
    const record = {
      tool: call.name,
      args: argsText,
      ok: outcome.ok,
      result: outcome.text.slice(0, MAX_TOOL_RESULT_CHARS),
    };
    calls.push(record);
    return record;
  }

  /**
   * What ids say. A model's vocabulary may be padded past the tokenizer's (Qwen2.5: 151,936 rows
   * for 151,665 tokens); a sampled id beyond it has no text and is left out.
   */
  function textOf(ids: readonly number[], skipSpecial: boolean): string {
    return tokenizer.decode(
      ids.filter((id) => id < tokenizer.vocabSize),
      { skipSpecial },
    );
  }
}

/**
 * The most ids an episode of `task` can take besides what the model writes freely: the opening
 * messages, the task's characters (question, arguments, results, answer: one id or more each),
 * and for every call the budget allows, the template's framing of a call and of its result.
 */
export function chatAgentLengthBound(setup: ChatAgentSetup, task: AgentTask): number {
  const { tokenizer, format } = setup;
  const opening = openingMessages(setup, '');
  const framing = tokenizer.encode(renderChat(setup, opening, true)).length;
  const perCall = Math.max(
    0,
    ...setup.tools.map((tool) => {
      const call: ParsedToolCall = { name: tool.name, arguments: {} };
      const { open, close, nameKey, argumentsKey } = format.call;
      const text = `${open}${JSON.stringify({ [nameKey]: tool.name, [argumentsKey]: {} })}${close}`;
      const written = tokenizer.encode(text).length + 1; // and the end of the turn
      const turn = { text, content: '', calls: [call] };
      return written + observationIds(setup, opening, turn, ['']).length;
    }),
  );
  return framing + task.maxChars + task.env.maxCalls * perCall;
}
