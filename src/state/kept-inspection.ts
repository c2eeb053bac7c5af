/**
 * The last update's inspection kept with a run (LabRun.inspection, StoredRun.inspection), and a
 * language model's earlier updates worth opening (LabRun.kept: its first and its rise), so that a
 * stored run — reloaded, parked by a lesson, or with a dead worker — can still be inspected. It is
 * saved with the run about once a second while the run trains, so its size is bounded: samples are
 * kept whole, in order, up to MAX_KEPT_TOKENS tokens (a lesson's update is 64 rows of at most 32
 * tokens, 2,048 in all); grids and CartPole episodes are small and kept as they are.
 */
import { mergeKept } from '../worker/kept-updates';
import type { Inspection, KeptInspection } from '../worker/run-protocol';

/** Tokens of sampled rows kept with a stored run (about 150 bytes each once stored). */
export const MAX_KEPT_TOKENS = 4096;

/** The inspection as a run keeps it: at most MAX_KEPT_TOKENS tokens, at least one sample. */
export function keptInspection(inspection: Inspection, maxTokens = MAX_KEPT_TOKENS): Inspection {
  if (inspection.kind !== 'samples') return inspection;
  let tokens = 0;
  let kept = 0;
  for (const sample of inspection.samples) {
    tokens += sample.tokens.length;
    if (kept > 0 && tokens > maxTokens) break;
    kept += 1;
  }
  if (kept === inspection.samples.length) return inspection;
  return { ...inspection, samples: inspection.samples.slice(0, kept) };
}

/**
 * Tokens kept of each earlier update (its first, its rise): a quarter of the last's bound, so
 * that the two add half again to what a run saves, not three times as much. Half a lesson update
 * (its first groups) shows what the update was like.
 */
export const MAX_EARLIER_TOKENS = MAX_KEPT_TOKENS / 4;

/**
 * A run's kept earlier updates once its worker reported its own (worker/kept-updates.ts): the
 * two merged — a worker brought back from storage saw only the updates since — each bounded by
 * keptInspection to `maxTokens`.
 */
export function keptUpdates(
  stored: readonly KeptInspection[],
  fromWorker: readonly KeptInspection[],
  maxTokens = MAX_EARLIER_TOKENS,
): KeptInspection[] {
  const bounded = fromWorker.map((k) => ({ ...k, item: keptInspection(k.item, maxTokens) }));
  return mergeKept(stored, bounded);
}
