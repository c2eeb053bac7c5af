/**
 * The tools an agent task can offer, by name. `createToolSet` builds the map `runTool` reads for
 * one task; each tool is stateless, so the same instances serve every episode.
 */
import { calculatorTool } from './calculator';
import { priceTool } from './lookup';
import { searchTool } from './search';
import { ToolError, type Tool } from './tool';

export * from './tool';
export { calculatorTool, calculate, evaluateCalc, formatFraction } from './calculator';
export { priceTool, lookupPrice } from './lookup';
export { searchTool, search, bm25Scores } from './search';

export const TOOL_NAMES = ['calc', 'price', 'search'] as const;

export type ToolName = (typeof TOOL_NAMES)[number];

const TOOLS: Readonly<Record<ToolName, Tool>> = Object.freeze({
  calc: calculatorTool,
  price: priceTool,
  search: searchTool,
});

const isToolName = (name: string): name is ToolName =>
  (TOOL_NAMES as readonly string[]).includes(name);

/**
 * A fresh map name → tool for `names` (a repeated name appears once). An unknown name is a
 * ToolError('unknown-tool') naming it and the valid names.
 */
export function createToolSet(names: readonly string[]): Map<string, Tool> {
  const set = new Map<string, Tool>();
  names.forEach((name, i) => {
    if (typeof name !== 'string' || !isToolName(name)) {
      throw new ToolError(
        'unknown-tool',
        String(name),
        `names[${i}]: unknown tool ${JSON.stringify(name)}; valid: ${TOOL_NAMES.join(', ')}`,
        i,
      );
    }
    set.set(name, TOOLS[name]);
  });
  return set;
}

/** The one-line docs of `names`' tools, for the UI and prompts. */
export function toolDocs(names: readonly string[]): string[] {
  return [...createToolSet(names).values()].map((tool) => tool.doc);
}
