/**
 * "Open these runs in the lab": side-by-side lesson widgets as a comparison link, each preset with
 * its own seed and the next ones, so that the lab's compare view can group the runs by seed and
 * draw a mean with a band — what one seed per algorithm cannot show.
 */
import { comparisonToken } from '../compare/comparison-token';
import { hashWithComparison } from '../compare/url-state';
import type { CompareCatalog } from '../compare/run-record';
import type { Settings } from '../worker/run-protocol';
import { buildPresetSpec, PRESETS, type PresetName } from './presets';

/** Seeds per preset in the link: enough for a mean and a band, few enough to train in minutes. */
export const SEEDS_PER_PRESET = 3;

/** The lab's hash (`#/lab?compare=…`) that creates these presets' runs, seeds s, s+1, … each. */
export function presetComparisonHash(
  presets: readonly PresetName[],
  catalog: CompareCatalog,
  defaultsOf: (algo: string) => Settings,
  seedsPerPreset = SEEDS_PER_PRESET,
): string {
  const runs = presets.flatMap((name) => {
    const spec = buildPresetSpec(name, defaultsOf(PRESETS[name].algo));
    return Array.from({ length: seedsPerPreset }, (_, i) => ({
      spec: { ...spec, seed: spec.seed + i },
    }));
  });
  return hashWithComparison('#/lab', comparisonToken(runs, catalog));
}
