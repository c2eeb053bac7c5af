/**
 * Shared y-scales for charts that are read side by side (a lesson's consecutive run widgets):
 * each chart reports its values' extent per metric, and every chart of that metric in the group
 * draws on the union, so two runs compare by height instead of by two different axes. The x-axis
 * stays each chart's own: a widget paused at its check beside one still running would shrink.
 */
import { getContext, setContext } from 'svelte';
import { mergeExtents, type Extent } from '../../state/charts/y-scale';

export class ScaleGroup {
  /** metric → member → its extent. */
  private extents = $state.raw<Record<string, Record<string, Extent>>>({});

  set(metric: string, member: string, extent: Extent): void {
    const old = this.extents[metric]?.[member];
    if (
      old &&
      old.lo === extent.lo &&
      old.hi === extent.hi &&
      old.minPositive === extent.minPositive
    ) {
      return;
    }
    this.extents = { ...this.extents, [metric]: { ...this.extents[metric], [member]: extent } };
  }

  remove(member: string): void {
    const next: Record<string, Record<string, Extent>> = {};
    for (const [metric, members] of Object.entries(this.extents)) {
      next[metric] = Object.fromEntries(Object.entries(members).filter(([m]) => m !== member));
    }
    this.extents = next;
  }

  /** The union of every member's extent for `metric`. */
  extent(metric: string): Extent {
    return mergeExtents(Object.values(this.extents[metric] ?? {}));
  }
}

const KEY = Symbol('chart scale group');

/** Makes the charts below the calling component share their y-scales. */
export function provideScaleGroup(): ScaleGroup {
  return setContext(KEY, new ScaleGroup());
}

/** The group the chart is in, if any. */
export function scaleGroup(): ScaleGroup | undefined {
  return getContext<ScaleGroup | undefined>(KEY);
}
