/**
 * The agent tools as a chat model sees them: each as a function with one text parameter, in the
 * JSON-schema form chat templates list (OpenAI's and Hugging Face's `tools`), and the way a call's
 * JSON arguments become the text the tool runs on.
 *
 *   calc   { expression: "347*86" }  →  calc's args "347*86"
 *   price  { item: "candle" }        →  price's args "candle"
 *   search { query: "lake miro" }    →  search's args "lake miro"
 *
 * The arguments come from model output: anything but an object holding exactly the tool's one
 * parameter, as text (or a finite number, written as JSON writes it), is a failed call whose
 * error the model reads back, like a tool's own errors.
 */
import type { ToolDefinition } from '../models/tokenizer-api';
import { clipResult, TOOL_NAMES, type ToolName } from './tools';

export interface ChatToolSchema {
  description: string;
  parameter: string;
  parameterDescription: string;
}

/** Each tool's description and its one parameter: what chat templates and the TRL export show. */
export const CHAT_TOOL_SCHEMAS: Readonly<Record<ToolName, ChatToolSchema>> = {
  calc: {
    description: 'Exact arithmetic with + - * / and parentheses, e.g. 347*86 or (3*7+2)/4.',
    parameter: 'expression',
    parameterDescription: 'the arithmetic expression to evaluate',
  },
  price: {
    description: 'The price of one item from the shop, as a whole number.',
    parameter: 'item',
    parameterDescription: 'the item name, lowercase, e.g. candle',
  },
  search: {
    description: 'Searches a small collection of facts and returns the best-matching one.',
    parameter: 'query',
    parameterDescription: 'words to search for',
  },
};

const isToolName = (name: string): name is ToolName =>
  (TOOL_NAMES as readonly string[]).includes(name);

/** The chat template's definition of each offered tool, in the order given. */
export function chatToolDefinitions(names: readonly string[]): ToolDefinition[] {
  return names.map((name, i) => {
    if (!isToolName(name)) {
      throw new Error(`chatToolDefinitions: names[${i}] '${name}' is not a tool`);
    }
    const schema = CHAT_TOOL_SCHEMAS[name];
    return {
      name,
      description: schema.description,
      parameters: {
        type: 'object',
        properties: {
          [schema.parameter]: { type: 'string', description: schema.parameterDescription },
        },
        required: [schema.parameter],
      },
    };
  });
}

/**
 * The text a call's `args` give the tool `name`, or the error the model reads back. An unknown
 * tool passes its arguments through unread: runTool then reports the tool as unknown.
 */
export function chatToolArgs(
  name: string,
  args: Record<string, unknown>,
): { ok: true; text: string } | { ok: false; error: string } {
  if (!isToolName(name)) return { ok: true, text: '' };
  const { parameter } = CHAT_TOOL_SCHEMAS[name];
  const keys = Object.keys(args);
  const extra = keys.find((key) => key !== parameter);
  if (extra !== undefined || keys.length === 0) {
    return { ok: false, error: clipResult(`error: ${name} takes one argument, "${parameter}"`) };
  }
  const value = args[parameter];
  if (typeof value === 'string') return { ok: true, text: value };
  if (typeof value === 'number' && Number.isFinite(value)) return { ok: true, text: String(value) };
  return { ok: false, error: clipResult(`error: "${parameter}" must be text`) };
}
