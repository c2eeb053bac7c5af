/**
 * The tool contract for tool-using agents. A tool is a synchronous function from the untrusted text
 * between a call's parentheses to a short result text. Its arguments come straight from model
 * output, so every tool bounds its own work by construction (input length, nesting, number size) and
 * fails only with a ToolError; `runTool` adds the shared limits, times the call and turns any
 * failure into an outcome the episode can show the policy as `<result>error: …</result>`.
 *
 * All result and error texts stay inside the tokenizer's default alphabet (lowercase, digits,
 * punctuation): a character from the input is never echoed raw outside printable ASCII
 * (see describeChar), so an error can never carry capitals or other unicode back into a row.
 */

export type ToolErrorReason =
  | 'unknown-tool' //      no tool of that name is offered
  | 'bad-arguments' //     the arguments do not parse (the index says where)
  | 'too-long' //          arguments longer than the tool accepts
  | 'too-deep' //          parentheses nest deeper than the tool accepts
  | 'division-by-zero'
  | 'out-of-range' //      a number or an intermediate value beyond the tool's range
  | 'not-found' //         no such item / no matching document
  | 'budget-exceeded'; //  a call beyond the episode's call budget (used by the episode runner)

/** A tool's typed failure: which tool, why, and (when the arguments are at fault) where. */
export class ToolError extends Error {
  override readonly name = 'ToolError';
  constructor(
    readonly reason: ToolErrorReason,
    /** The tool's name (or the unknown name asked for, for createToolSet). */
    readonly tool: string,
    /** Short lowercase text for the policy, e.g. 'division by zero at 3' (tool errors keep it ≤ 41 characters so "error: " + it is never clipped). */
    readonly detail: string,
    /** Index in the arguments of the character at fault, when there is one. */
    readonly index?: number,
  ) {
    super(`tool ${tool}: ${detail}`);
  }
}

export interface Tool {
  /** Lowercase letters only, e.g. 'calc', 'price', 'search' (what `<call>name(…)</call>` uses). */
  readonly name: string;
  /** One line for the UI, e.g. "calc(expr): exact arithmetic". */
  readonly doc: string;
  /** Runs on untrusted args (text between the parentheses); returns the result text; throws ToolError only. */
  run(args: string): string;
}

export interface ToolOutcome {
  ok: boolean;
  /** The result, or "error: <detail>"; at most MAX_TOOL_RESULT_CHARS characters. */
  text: string;
  reason?: ToolErrorReason;
  /** Wall time of the call in milliseconds. */
  ms: number;
}

/** Longest argument text any tool is given; longer calls fail 'too-long' before the tool runs. */
export const MAX_TOOL_ARGS_CHARS = 64;
/** Longest result text an observation carries; longer texts are cut to this many characters. */
export const MAX_TOOL_RESULT_CHARS = 48;

/**
 * Never throws: unknown tool, over-long args, any ToolError → ok:false with text like
 * "error: division by zero at 3"; result text clipped to MAX_TOOL_RESULT_CHARS; ms = elapsed.
 * Any non-ToolError exception from a tool is a bug: it is rethrown (the fuzz tests prove none
 * occurs for the shipped tools).
 */
export function runTool(tools: ReadonlyMap<string, Tool>, name: string, args: string): ToolOutcome {
  const start = performance.now();
  try {
    const tool = typeof name === 'string' ? tools.get(name) : undefined;
    if (tool === undefined) {
      // The unknown name is not echoed: it is model text and the list of offered tools says more.
      throw new ToolError('unknown-tool', String(name), unknownToolDetail([...tools.keys()]));
    }
    if (typeof args !== 'string') {
      throw new ToolError('bad-arguments', tool.name, `arguments must be text`);
    }
    if (args.length > MAX_TOOL_ARGS_CHARS) {
      throw new ToolError(
        'too-long',
        tool.name,
        `arguments longer than ${MAX_TOOL_ARGS_CHARS} characters`,
        MAX_TOOL_ARGS_CHARS,
      );
    }
    const text = tool.run(args);
    return { ok: true, text: clipResult(text), ms: performance.now() - start };
  } catch (error) {
    if (!(error instanceof ToolError)) throw error;
    return {
      ok: false,
      text: clipResult(`error: ${error.detail}`),
      reason: error.reason,
      ms: performance.now() - start,
    };
  }
}

/**
 * "unknown tool (offered: calc, price)": the offered tools by whole name, as many as fit in
 * MAX_TOOL_RESULT_CHARS after "error: ", the rest counted ("calc, price +1"), so clipping never
 * cuts a tool's name in the middle (a half name reads as a tool that does not exist).
 */
export function unknownToolDetail(offered: readonly string[]): string {
  if (offered.length === 0) return 'unknown tool (offered: none)';
  const room = MAX_TOOL_RESULT_CHARS - 'error: '.length;
  for (let shown = offered.length; shown > 0; shown--) {
    const rest = offered.length - shown;
    const text = `unknown tool (offered: ${offered.slice(0, shown).join(', ')}${rest ? ` +${rest}` : ''})`;
    if (text.length <= room) return text;
  }
  return `unknown tool (${offered.length} offered)`;
}

/** The first MAX_TOOL_RESULT_CHARS characters of `text` (no ellipsis: '…' is not in the alphabet). */
export function clipResult(text: string): string {
  return text.length <= MAX_TOOL_RESULT_CHARS ? text : text.slice(0, MAX_TOOL_RESULT_CHARS);
}

/**
 * A character of untrusted input, safe to put in an error text: `"x"` for printable ASCII other
 * than capitals and the double quote, else its code unit as `u+00e9`.
 */
export function describeChar(c: string): string {
  const code = c.charCodeAt(0);
  const printable = code >= 0x20 && code <= 0x7e && !(code >= 0x41 && code <= 0x5a) && c !== '"';
  return printable ? `"${c[0]}"` : `u+${code.toString(16).padStart(4, '0')}`;
}
