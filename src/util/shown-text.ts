/**
 * Values quoted in error messages are cut to a bounded length: a message must stay one readable
 * line however large the bad value (a 5 MB string in a run file, a pasted blob in a flag).
 */

/** Characters of a bad value kept in a message; the rest is replaced by '…'. */
export const SHOWN_TEXT_MAX = 40;

/** `text` whole when short, else its first SHOWN_TEXT_MAX − 3 characters and '…'. */
export function shownText(text: string, max: number = SHOWN_TEXT_MAX): string {
  return text.length > max ? `${text.slice(0, Math.max(0, max - 3))}…` : text;
}

/** Any value as bounded message text (String() of an array or object can be as long as it is). */
export function shownValue(value: unknown): string {
  return shownText(String(value));
}
