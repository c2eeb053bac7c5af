/**
 * A model's chat template: Jinja text from its files, parsed and rendered by the
 * @huggingface/jinja interpreter (a template is untrusted text: it is interpreted, never turned
 * into code). The conversation goes in as Hugging Face's `apply_chat_template` passes it, so the
 * template sees what it was written for:
 *
 *   messages: [{ role, content, tool_calls?: [{ type: 'function',
 *                                               function: { name, arguments } }] }]
 *   tools: [{ type: 'function', function: { name, description, parameters } }] or none
 *   add_generation_prompt, and the special tokens (bos_token, eos_token, pad_token, unk_token)
 *
 * with Jinja's trim_blocks and lstrip_blocks on, as `transformers` renders templates.
 *
 * Not bounded: the interpreter's time and memory. Jinja has no while loop, but a template can ask
 * for range(10**9); the worst a hostile template of a model the user picked can do is stall or
 * exhaust the tab or worker that renders it (the interpreter's globals, range included, cannot be
 * replaced per render).
 */

import { Template } from '@huggingface/jinja';
import { TokenizerError } from '../tokenizer';
import type { ChatMessage, ChatTemplateOptions, ToolDefinition } from '../tokenizer-api';
import { HfTokenizerError, type TokenizerFileName } from './hf-tokenizer-error';
import { errorText } from '../../util/error-text';

/** Where a template's text came from, for errors. */
export interface TemplateSource {
  file: TokenizerFileName;
  /** e.g. 'chat_template' or 'chat_template[1].template'; '' for a whole file. */
  field: string;
  source: string;
}

/**
 * The interface's options, plus variables some templates read beyond the usual ones, e.g.
 * `{ enable_thinking: false }` for Qwen3 (an empty thinking block in the generation prompt).
 */
export interface HfChatTemplateOptions extends ChatTemplateOptions {
  variables?: Readonly<Record<string, string | number | boolean>>;
}

/** Names a caller's variable may not take: the ones set here and the interpreter's globals. */
const RESERVED = new Set([
  'messages',
  'tools',
  'add_generation_prompt',
  'bos_token',
  'eos_token',
  'pad_token',
  'unk_token',
  'true',
  'false',
  'none',
  'True',
  'False',
  'None',
  'raise_exception',
  'range',
  'strftime_now',
  'namespace',
]);

/** A template failed while rendering (its own raise_exception, or an error in the template). */
export class ChatTemplateError extends Error {
  override readonly name = 'ChatTemplateError';
}

const ROLES = ['system', 'user', 'assistant', 'tool'] as const;

export class ChatTemplate {
  private readonly templates = new Map<string, { where: string; template: Template }>();

  /**
   * Parses every template now, so that a broken one is reported when the model loads.
   * `variables`: the special tokens by field name (bos_token, …), those the model has.
   */
  constructor(
    sources: ReadonlyMap<string, TemplateSource>,
    private readonly variables: Readonly<Record<string, string>>,
  ) {
    for (const [name, { file, field, source }] of sources) {
      let template: Template;
      try {
        template = new Template(source);
      } catch (error) {
        throw new HfTokenizerError(file, field, `does not parse as Jinja: ${reason(error)}`);
      }
      this.templates.set(name, { where: field ? `${file}: ${field}` : file, template });
    }
  }

  /** The names of the templates (a single template is 'default'). */
  get names(): string[] {
    return [...this.templates.keys()];
  }

  /**
   * The conversation as text. With tools, a template named 'tool_use' is used where the model
   * has one; else the one named 'default' (as `transformers` chooses).
   */
  render(messages: readonly ChatMessage[], options: HfChatTemplateOptions): string {
    const name =
      options.tools !== undefined && this.templates.has('tool_use') ? 'tool_use' : 'default';
    const chosen = this.templates.get(name);
    if (chosen === undefined) {
      throw new ChatTemplateError(
        `chat template: the model's templates (${this.names.join(', ')}) include no 'default'`,
      );
    }
    if (typeof options.addGenerationPrompt !== 'boolean') {
      throw new TokenizerError(
        'options.addGenerationPrompt',
        `must be a boolean, got ${typeof options.addGenerationPrompt}`,
      );
    }
    const context: Record<string, unknown> = {
      // The interface's thinking switch under the name Qwen3's templates read; a caller's own
      // `variables` come after it and win.
      ...(options.thinking === undefined ? {} : { enable_thinking: options.thinking }),
      ...extraVariables(options.variables),
      ...this.variables,
      messages: templateMessages(messages),
      tools: options.tools === undefined ? null : templateTools(options.tools),
      add_generation_prompt: options.addGenerationPrompt,
    };
    try {
      return chosen.template.render(context);
    } catch (error) {
      throw new ChatTemplateError(`chat template (${chosen.where}): ${reason(error)}`);
    }
  }
}

function extraVariables(
  variables: HfChatTemplateOptions['variables'],
): Record<string, string | number | boolean> {
  if (variables === undefined) return {};
  if (typeof variables !== 'object' || variables === null || Array.isArray(variables)) {
    throw new TokenizerError('options.variables', `must be an object, got ${quote(variables)}`);
  }
  const out: Record<string, string | number | boolean> = {};
  for (const [name, value] of Object.entries(variables)) {
    const path = `options.variables.${name.length > 40 ? `${name.slice(0, 39)}…` : name}`;
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
      throw new TokenizerError(path, 'must be named with letters, digits and _ (a Jinja name)');
    }
    if (RESERVED.has(name)) {
      throw new TokenizerError(path, 'is set by the tokenizer or the interpreter itself');
    }
    const ok =
      typeof value === 'string' ||
      typeof value === 'boolean' ||
      (typeof value === 'number' && Number.isFinite(value));
    if (!ok) {
      throw new TokenizerError(path, `must be a string, a finite number or a boolean`);
    }
    out[name] = value;
  }
  return out;
}

/** ChatMessage → the dict a template reads; checks each field (the caller's data may be bad). */
function templateMessages(messages: readonly ChatMessage[]): Record<string, unknown>[] {
  if (!Array.isArray(messages)) {
    throw new TokenizerError('messages', `must be a list, got ${typeof messages}`);
  }
  return messages.map((message: ChatMessage, i) => {
    const path = `messages[${i}]`;
    if (typeof message !== 'object' || message === null) {
      throw new TokenizerError(path, `must be an object, got ${typeof message}`);
    }
    if (!(ROLES as readonly unknown[]).includes(message.role)) {
      throw new TokenizerError(
        `${path}.role`,
        `must be one of ${ROLES.map((r) => `'${r}'`).join(', ')}, got ${quote(message.role)}`,
      );
    }
    if (typeof message.content !== 'string') {
      throw new TokenizerError(
        `${path}.content`,
        `must be a string, got ${typeof message.content}`,
      );
    }
    const dict: Record<string, unknown> = { role: message.role, content: message.content };
    if (message.toolCalls !== undefined) {
      if (message.role !== 'assistant') {
        throw new TokenizerError(`${path}.toolCalls`, `belong to assistant messages only`);
      }
      if (!Array.isArray(message.toolCalls)) {
        throw new TokenizerError(`${path}.toolCalls`, `must be a list`);
      }
      dict['tool_calls'] = message.toolCalls.map((call, j) => {
        const callPath = `${path}.toolCalls[${j}]`;
        return {
          type: 'function',
          function: {
            name: nonEmptyString(call?.name, `${callPath}.name`),
            arguments: jsonObject(call?.arguments, `${callPath}.arguments`),
          },
        };
      });
    }
    return dict;
  });
}

function templateTools(tools: readonly ToolDefinition[]): Record<string, unknown>[] {
  if (!Array.isArray(tools)) {
    throw new TokenizerError('options.tools', `must be a list, got ${typeof tools}`);
  }
  return tools.map((tool: ToolDefinition, i) => {
    const path = `options.tools[${i}]`;
    const description: unknown = tool?.description;
    if (typeof description !== 'string') {
      throw new TokenizerError(
        `${path}.description`,
        `must be a string, got ${typeof description}`,
      );
    }
    return {
      type: 'function',
      function: {
        name: nonEmptyString(tool?.name, `${path}.name`),
        description,
        parameters: jsonObject(tool?.parameters, `${path}.parameters`),
      },
    };
  });
}

function nonEmptyString(value: unknown, path: string): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new TokenizerError(path, `must be a non-empty string, got ${quote(value)}`);
  }
  return value;
}

/**
 * A plain JSON object, copied through JSON so that the template sees exactly what `tojson`
 * writes (no undefined fields, no class instances, no shared references).
 */
function jsonObject(value: unknown, path: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TokenizerError(path, `must be a JSON object, got ${quote(value)}`);
  }
  try {
    return JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
  } catch (error) {
    throw new TokenizerError(path, `must be a JSON object: ${reason(error)}`);
  }
}

function quote(value: unknown): string {
  if (typeof value === 'string') {
    return JSON.stringify(value.length > 40 ? `${value.slice(0, 39)}…` : value);
  }
  return value === null ? 'null' : typeof value;
}

/** An error's message, cut: a template's raise_exception text is untrusted. */
function reason(error: unknown): string {
  const message = errorText(error);
  return message.length > 300 ? `${message.slice(0, 299)}…` : message;
}
