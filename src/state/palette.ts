/** Run colours, shared by the run list and the charts. */

/**
 * The Okabe–Ito colours (Color Universal Design), ordered so the first four runs are the easiest
 * to tell apart, with orange darkened from #E69F00 to #A87400 and sky blue and yellow left out, so
 * that every line has at least 3:1 contrast on the white chart (WCAG 1.4.11). Lines also differ in
 * dash style (DASH_STYLES), so two runs never depend on colour alone.
 */
export const COLORBLIND_SAFE_PALETTE = [
  '#0072B2', // blue
  '#D55E00', // vermillion
  '#009E73', // bluish green
  '#CC79A7', // reddish purple
  '#000000', // black
  '#A87400', // orange, darkened
] as const;
