/**
 * What a reader is told after a live change: the update it starts with (the run worker's answer,
 * `appliesAt`), and why not the next one when an update was already under way — it cannot take
 * the change. The lab's Hyperparameters panel and a lesson widget say the same.
 */
export function appliedNote(appliesAt: number, steps: number): string {
  const busy = appliesAt > steps + 1 ? ` (update ${appliesAt - 1} was under way)` : '';
  return `Applies from update ${appliesAt}${busy}; the charts mark it there.`;
}

/** A live change's settings as a chart marker names them, e.g. "lr → 0.0005, klCoef → 0.1". */
export function changeText(changes: Readonly<Record<string, number | boolean | string>>): string {
  return Object.entries(changes)
    .map(([key, value]) => `${key} → ${String(value)}`)
    .join(', ');
}
