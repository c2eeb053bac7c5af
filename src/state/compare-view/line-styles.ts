/**
 * How the compare view tells runs apart: a colour from the colour-blind-safe palette and a dash
 * style, both by creation order, so runs differ by more than hue alone.
 */

export { COLORBLIND_SAFE_PALETTE } from '../palette';

/** SVG stroke-dasharray per style; run k (0-based, creation order) gets style k mod 4. */
export const DASH_STYLES = [
  { name: 'solid', dash: '' },
  { name: 'dashed', dash: '7 4' },
  { name: 'dotted', dash: '2 3' },
  { name: 'dash-dot', dash: '9 3 2 3' },
] as const;

/**
 * The dash style of the run created `index`-th (0-based). With 6 colours and 4 dash styles the
 * first 12 runs all differ in colour, dash or both (lcm(6, 4) = 12).
 */
export function dashStyle(index: number): (typeof DASH_STYLES)[number] {
  const k = Number.isInteger(index) && index >= 0 ? index % DASH_STYLES.length : 0;
  return DASH_STYLES[k]!;
}
