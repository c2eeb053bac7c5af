/**
 * Opening a run in the lab's inspector from elsewhere (a lesson widget's "Inspect this run"),
 * and the updates the inspector offers to switch between: the run's first, its rise (kept by
 * its worker, worker/kept-updates.ts) and its last. Pure: the widget and the inspector render
 * what these return.
 */
import { isGridEnv } from '../envs/grid-env-names';
import type { Inspection, KeptInspection } from '../worker/run-protocol';

/** `#/lab?inspect=<run id>`: the lab, with the inspector open on that run. */
export function inspectHref(runId: string): string {
  return `#/lab?inspect=${encodeURIComponent(runId)}`;
}

/** The run a lab link asks the inspector to open, if any. */
export function inspectTarget(hash: string): string | undefined {
  const match = /^#\/lab\?(.*)$/.exec(hash);
  if (!match) return undefined;
  const id = new URLSearchParams(match[1]).get('inspect');
  return id ? id : undefined;
}

/** Runs the inspector can show: language models, tabular methods on grids, PPO on CartPole. */
export function inspectable(spec: { task?: string; env?: string }): boolean {
  return spec.task !== undefined || isGridEnv(spec.env) || spec.env === 'cartpole';
}

export interface UpdateChoice {
  /** Which it is: 'first', 'rise', 'last', or several where one update is both. */
  roles: ('first' | 'rise' | 'last')[];
  step: number;
  /** "first: update 1", "rise: update 14 (+0.19 reward/accuracy)", "last: update 60". */
  label: string;
  inspection: Inspection;
}

/**
 * The updates to switch between, in update order: the kept first and rise, and the last; one
 * update that plays two parts is one choice.
 */
export function updateChoices(
  kept: readonly KeptInspection[],
  last: Inspection | null,
): UpdateChoice[] {
  const byStep = new Map<number, UpdateChoice>();
  const add = (role: UpdateChoice['roles'][number], step: number, inspection: Inspection) => {
    const known = byStep.get(step);
    if (known) known.roles.push(role);
    else byStep.set(step, { roles: [role], step, label: '', inspection });
  };
  for (const k of kept) add(k.role, k.step, k.item);
  if (last) add('last', last.step, last);
  const rise = kept.find((k) => k.role === 'rise');
  const choices = [...byStep.values()].sort((a, b) => a.step - b.step);
  for (const c of choices) {
    const gain =
      c.roles.includes('rise') && rise?.gain !== undefined
        ? ` (${rise.gain >= 0 ? '+' : ''}${rise.gain.toFixed(2)}${rise.metric ? ` ${rise.metric}` : ''})`
        : '';
    c.label = `${c.roles.join(', ')}: update ${c.step}${gain}`;
  }
  return choices;
}
