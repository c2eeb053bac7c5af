/**
 * What the Python tools of the TRL export share (framework-export-tools.ts,
 * framework-export-tool-calc.ts): a tool's piece of the module, literals, and each tool's
 * signature and Google-style docstring, from which TRL builds the schema the model is shown.
 */
import { CHAT_TOOL_SCHEMAS } from '../agents/chat-tools';
import type { ToolName } from '../agents/tools';
import { pythonString } from './python-literal';

/** One tool's part of the module: what it imports, its data tables and its functions. */
export interface Piece {
  imports: string[];
  tables: string[];
  functions: string[];
}

/** A Python string literal. */
export function py(text: string): string {
  return pythonString(text);
}

/** Python for a bigint bound: 2**k when it is a power of two (as the lab's messages write it). */
export function pyBound(n: bigint): string {
  const bits = n.toString(2).length - 1;
  return 1n << BigInt(bits) === n ? `2**${bits}` : n.toString();
}

/**
 * Text for a one-line docstring part. Printable ASCII only, backslash and double quote escaped:
 * the schema texts are fixed ASCII, and anything else is a change worth failing the export over.
 */
function docText(text: string): string {
  if (!/^[\x20-\x7e]*$/.test(text)) {
    throw new Error(`pythonTools: docstring text must be printable ASCII, got ${py(text)}`);
  }
  return text.replace(/[\\"]/g, (c) => `\\${c}`);
}

/**
 * The `def` line and the Google-style docstring TRL (transformers' get_json_schema) reads: the
 * first line is the schema's description, Args: names the one parameter with its description.
 */
export function signature(name: ToolName, returns: string, raises: string): string[] {
  const schema = CHAT_TOOL_SCHEMAS[name];
  return [
    `def ${name}(${schema.parameter}: str) -> str:`,
    `    """${docText(schema.description)}`,
    '',
    '    Args:',
    `        ${schema.parameter}: ${docText(schema.parameterDescription)}`,
    '',
    '    Returns:',
    `        ${docText(returns)}`,
    '',
    '    Raises:',
    `        ValueError: ${docText(raises)}`,
    '    """',
    // chatToolArgs: the parameter's text, or a finite number written as JavaScript writes it.
    `    text = _argument_text(${schema.parameter}, ${py(schema.parameter)})`,
    // runTool's check, made before any tool runs: the text the lab's model is shown.
    '    if _js_length(text) > _MAX_ARGS_CHARS:',
    '        raise ValueError(f"arguments longer than {_MAX_ARGS_CHARS} characters")',
  ];
}
