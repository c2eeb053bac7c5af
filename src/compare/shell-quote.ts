/**
 * Text as one word of a POSIX shell script (sh, bash): the exports' launch scripts pass settings
 * to the frameworks on a command line, and a model id or a path is the user's text. Inside single
 * quotes the shell expands nothing ($VAR, $(…), backticks, \, newlines are all literal); the one
 * character that cannot appear there, the single quote itself, is written '\'' (close the quote,
 * an escaped quote, open again). A NUL cannot be in a shell word at all (the C strings of argv end
 * at it), so it is refused rather than silently cut.
 */

/** Words the shell reads as they are: no quoting needed, none added (keeps scripts readable). */
const PLAIN = /^[\w.-]+$/;

/** `text` as one shell word that the shell turns back into exactly `text`. Throws on a NUL. */
export function shellQuote(text: string): string {
  if (text.includes('\0')) {
    throw new RangeError('a shell word cannot hold a NUL character');
  }
  if (PLAIN.test(text)) return text;
  return `'${text.replaceAll("'", "'\\''")}'`;
}
