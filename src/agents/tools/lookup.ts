/**
 * price(item): looks an item up in the shipped price table (src/agents/data/prices.ts) and returns
 * its price as a whole number, e.g. price(apple) → "3". The argument is trimmed of surrounding
 * whitespace and must then be an exact table key. An unknown item fails 'not-found' with just
 * "unknown item": the error lists no items, so a policy cannot read the table out of its errors.
 */
import { PRICES } from '../data/prices';
import { MAX_TOOL_ARGS_CHARS, ToolError, type Tool } from './tool';

export function lookupPrice(args: string): string {
  if (typeof args !== 'string') {
    throw new ToolError('bad-arguments', 'price', 'arguments must be text');
  }
  if (args.length > MAX_TOOL_ARGS_CHARS) {
    throw new ToolError(
      'too-long',
      'price',
      `item longer than ${MAX_TOOL_ARGS_CHARS} characters`,
      MAX_TOOL_ARGS_CHARS,
    );
  }
  const item = args.trim();
  if (item === '') throw new ToolError('bad-arguments', 'price', 'expected an item name', 0);
  const price = PRICES.get(item);
  if (price === undefined) throw new ToolError('not-found', 'price', 'unknown item');
  return String(price);
}

export const priceTool: Tool = {
  name: 'price',
  doc: 'price(item): the price of one item, e.g. price(apple)',
  run: lookupPrice,
};
