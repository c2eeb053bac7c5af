/**
 * Colours of the inspector's token heatmap. Diverging quantities (advantages, log-ratios) run from
 * blue (negative) through white to orange (positive) — a pair that stays apart under the common
 * colour-vision deficiencies — with the scale set by the batch's largest magnitude so colours
 * compare across rows. Pure functions, tested without a DOM.
 */
import type { InspectedToken } from '../worker/run-protocol';

export const HEATMAP_MODES = ['advantage', 'ratio', 'clipped', 'mask', 'value', 'return'] as const;
export type HeatmapMode = (typeof HEATMAP_MODES)[number];

export const HEATMAP_LABELS: Record<HeatmapMode, string> = {
  advantage: 'advantage',
  ratio: 'ratio π/π_old (log scale)',
  clipped: 'clipped tokens',
  mask: 'loss mask',
  value: 'critic value',
  return: 'GAE return',
};

const NEGATIVE = [33, 102, 172]; // blue
const POSITIVE = [230, 97, 1]; // orange
const WHITE = [255, 255, 255];

/** A signed value in [−1, 1] as a colour between blue, white and orange. */
export function diverging(t: number): string {
  const clamped = Math.max(-1, Math.min(1, Number.isFinite(t) ? t : 0));
  const end = clamped < 0 ? NEGATIVE : POSITIVE;
  const a = Math.abs(clamped);
  const mix = WHITE.map((w, i) => Math.round(w + (end[i]! - w) * a));
  return `rgb(${mix[0]}, ${mix[1]}, ${mix[2]})`;
}

/** The number a mode shows for a token (NaN: nothing to show, e.g. an untrained token's ratio). */
export function tokenValue(token: InspectedToken, mode: HeatmapMode): number {
  switch (mode) {
    case 'advantage':
      return token.trained ? token.advantage : NaN;
    case 'ratio':
      return Math.log(token.ratio);
    case 'clipped':
      return token.clipped ? 1 : 0;
    case 'mask':
      return token.trained ? 1 : 0;
    case 'value':
      return token.value ?? NaN;
    case 'return':
      return token.return ?? NaN;
  }
}

/** The largest |value| of a mode over the tokens (the colour scale's end), at least 1e-6. */
export function scaleOf(tokens: readonly InspectedToken[], mode: HeatmapMode): number {
  let max = 1e-6;
  for (const t of tokens) {
    const v = Math.abs(tokenValue(t, mode));
    if (Number.isFinite(v) && v > max) max = v;
  }
  return max;
}

/** The colour scale of an update's samples under a mode (1 when there is none). */
export function inspectionScale(
  inspection: { samples: readonly { tokens: readonly InspectedToken[] }[] } | null | undefined,
  mode: HeatmapMode,
): number {
  return inspection
    ? scaleOf(
        inspection.samples.flatMap((s) => s.tokens),
        mode,
      )
    : 1;
}

/** Background colour of a token under a mode ('transparent' where there is nothing to show). */
export function tokenColor(token: InspectedToken, mode: HeatmapMode, scale: number): string {
  if (token.observation) return 'transparent'; // tool text: shaded by its own style
  const v = tokenValue(token, mode);
  if (!Number.isFinite(v)) return 'transparent';
  if (mode === 'clipped') return v ? 'rgb(214, 39, 40)' : 'transparent';
  if (mode === 'mask') return v ? 'rgb(198, 219, 239)' : 'transparent';
  return diverging(v / scale);
}

/** A token's text made visible: spaces and newlines get a glyph. */
export function visibleText(text: string): string {
  return text.replace(/ /g, '␣').replace(/\n/g, '⏎');
}

/** One line describing a token, for its tooltip and for screen readers. */
export function describeToken(token: InspectedToken): string {
  const parts = [JSON.stringify(token.text)];
  if (token.observation) parts.push('tool result (not trained)');
  else parts.push(token.trained ? 'trained' : 'not trained');
  if (token.trained) parts.push(`advantage ${token.advantage.toFixed(3)}`);
  if (Number.isFinite(token.ratio)) parts.push(`ratio ${token.ratio.toFixed(3)}`);
  if (token.clipped) parts.push('clipped');
  if (token.value !== undefined) parts.push(`value ${token.value.toFixed(3)}`);
  if (token.return !== undefined) parts.push(`return ${token.return.toFixed(3)}`);
  return parts.join(', ');
}
