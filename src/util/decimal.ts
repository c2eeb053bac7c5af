/**
 * Numbers typed by a person (command-line flags) in decimal notation only. `Number()` also reads
 * hex, octal and binary (`0x10` is 16), an empty string or spaces as 0, and 'Infinity'; a flag
 * value meaning something other than it looks is refused instead. An exponent is decimal
 * notation too (learning rates are written 1e-4 in every framework's configs), so it is kept.
 */

const DECIMAL = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?$/;

/** What a refusal says the value must look like. */
export const DECIMAL_NOTATION =
  'in decimal notation (digits, an optional . and e-exponent: 3, 0.001, 1e-3)';

/** The number `text` writes in decimal notation, or NaN for anything else (0x10, '', ' 1'). */
export function parseDecimal(text: string): number {
  return DECIMAL.test(text) ? Number(text) : NaN;
}
