/**
 * The moving-average window field of the compare controls: the largest window it accepts, and
 * the parser that turns the field's value into a window or a message saying why it is not one.
 */
import { MAX_WINDOW } from '../../compare/smoothing';

/** Largest window the form accepts (longer windows flatten any run the lab trains). */
export const MAX_WINDOW_INPUT = Math.min(1000, MAX_WINDOW);

/**
 * The moving-average window from the form (a number field gives a number, or null when empty):
 * a whole number in [1, MAX_WINDOW_INPUT], or the reason it is not one (shown by the field; the
 * charts keep the last valid window meanwhile).
 */
export function parseWindow(
  value: unknown,
): { ok: true; value: number } | { ok: false; error: string } {
  const n =
    typeof value === 'number'
      ? value
      : typeof value === 'string' && value.trim() !== ''
        ? Number(value)
        : NaN;
  if (Number.isInteger(n) && n >= 1 && n <= MAX_WINDOW_INPUT) return { ok: true, value: n };
  const got =
    value === null || value === undefined || (typeof value === 'string' && value.trim() === '')
      ? 'nothing'
      : typeof value === 'string'
        ? JSON.stringify(value)
        : String(value);
  return {
    ok: false,
    error: `window must be a whole number in [1, ${MAX_WINDOW_INPUT}], got ${got}`,
  };
}
