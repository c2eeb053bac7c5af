/**
 * Text as a Python string literal for the exports' Python files (the TRL script, verl's reward
 * module), evaluating to what Python's repr() of the str would: double quotes (as the rest of the
 * generated code writes strings) unless the text holds a double quote and no single one, escapes for the quote, the backslash and control
 * characters. Unlike repr, everything outside printable ASCII is escaped too (\xhh, \uhhhh,
 * \Uhhhhhhhh), so the file is plain ASCII whatever the text and no editor or encoding can change
 * what it means. A NUL is \x00; a lone surrogate (JavaScript strings may hold one) is \udxxx, as
 * repr writes it.
 */

const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function hex(code: number, digits: number): string {
  return code.toString(16).padStart(digits, '0');
}

/** `text` as a Python str literal that evaluates to exactly `text` (code point for code point). */
export function pythonString(text: string): string {
  const quote = text.includes('"') && !text.includes("'") ? "'" : '"';
  let out = quote;
  // for…of walks code points: a surrogate pair is one character (\U…), a lone surrogate its own.
  for (const char of text) {
    const code = char.codePointAt(0)!;
    if (char === quote || char === '\\') out += `\\${char}`;
    else if (Object.hasOwn(NAMED, char)) out += NAMED[char];
    else if (code >= 0x20 && code < 0x7f) out += char;
    else if (code < 0x100) out += `\\x${hex(code, 2)}`;
    else if (code < 0x10000) out += `\\u${hex(code, 4)}`;
    else out += `\\U${hex(code, 8)}`;
  }
  return out + quote;
}

/**
 * A JavaScript number as a Python float literal that reads back to the same double: String()
 * gives the shortest digits, and a whole number gets '.0' so that Python makes it a float.
 */
export function pythonFloat(n: number): string {
  return Number.isInteger(n) ? `${n}.0` : String(n);
}
