/**
 * A look at JSON text before JSON.parse reads it: how deeply its arrays and objects nest. Imported
 * files are untrusted, and a few megabytes of '[' make JSON.parse spend seconds and hundreds of
 * megabytes on a value that every later walk over it (a structured clone into IndexedDB, a
 * postMessage to a worker) then overflows the stack on. The lab writes nothing deeper than a
 * dozen levels, so a file that nests deeper is refused before it is parsed.
 *
 * One pass over the characters; brackets inside strings (and escaped quotes in them) do not count.
 * Text that is not JSON at all is left for JSON.parse to name.
 */

/** How deep the lab's own JSON files may nest: several times what they use. */
export const MAX_JSON_DEPTH = 64;

/**
 * Where `text` first nests deeper than `maxDepth` arrays and objects, as a problem to report
 * ("nests deeper than 64 arrays and objects (at character 65)"), or undefined if it does not.
 */
export function jsonDepthProblem(text: string, maxDepth = MAX_JSON_DEPTH): string | undefined {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      depth++;
      if (depth > maxDepth) {
        return `nests deeper than ${maxDepth} arrays and objects (at character ${i + 1})`;
      }
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return undefined;
}
