/**
 * Finding a JSON object inside free text (a model's turn, a rendered chat): where the object that
 * opens at a '{' ends, scanned once, strings and escapes respected. The text is untrusted; the scan
 * is linear in what it reads and gives up past a nesting depth, so JSON.parse is only ever handed a
 * bounded, balanced slice.
 */

/** Deepest nesting scanned; deeper objects are not read (no tool's arguments need more). */
export const MAX_JSON_DEPTH = 16;

/**
 * The index just past the '}' that closes the object opening at text[start] ('{'), or -1 when it
 * is not closed, nests deeper than MAX_JSON_DEPTH, or text[start] is not '{'.
 */
export function jsonObjectEnd(text: string, start: number): number {
  if (text[start] !== '{') return -1;
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
    } else if (c === '"') {
      inString = true;
    } else if (c === '{' || c === '[') {
      if (++depth > MAX_JSON_DEPTH) return -1;
    } else if (c === '}' || c === ']') {
      if (--depth === 0) return c === '}' ? i + 1 : -1;
    }
  }
  return -1;
}

/** The object text[start, end) parses to, or undefined (not JSON, or not a plain object). */
export function parseJsonObject(
  text: string,
  start: number,
  end: number,
): Record<string, unknown> | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text.slice(start, end));
  } catch {
    return undefined;
  }
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
