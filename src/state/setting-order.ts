/**
 * Which settings a form shows first. The fields themselves come from each algorithm's config spec
 * (src/util/hyperparams.ts); this list only names, across all algorithms, the few a newcomer
 * reaches for — learning rate, prompts and group size, clipping, the KL term, temperature and the
 * tabular methods' step size and exploration — in that order. Every other field of a spec goes
 * under "Advanced". A name here that an algorithm lacks is skipped.
 */
export const KEY_SETTINGS: readonly string[] = [
  'lr',
  'learningRate',
  'alpha',
  'promptsPerUpdate',
  'groupSize',
  'samplesPerPrompt',
  'clipLow',
  'clipHigh',
  'clipCoef',
  'klCoef',
  'beta',
  'temperature',
  'epsilon',
];

export interface ArrangedSettings {
  /** Key settings present in the spec, in KEY_SETTINGS order. */
  key: string[];
  /** The spec's other fields, in the spec's own order. */
  advanced: string[];
}

/**
 * Splits a spec's field names into key and advanced ones, keeping only those whose name contains
 * `filter` (case-insensitive; blank keeps all).
 */
export function arrangeSettings(names: readonly string[], filter = ''): ArrangedSettings {
  const wanted = filter.trim().toLowerCase();
  const shown = names.filter((name) => name.toLowerCase().includes(wanted));
  const present = new Set(shown);
  return {
    key: KEY_SETTINGS.filter((name) => present.has(name)),
    advanced: shown.filter((name) => !KEY_SETTINGS.includes(name)),
  };
}
