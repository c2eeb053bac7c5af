/**
 * The lab's keyboard shortcuts, as a pure decision: space pauses or resumes a run, s steps it.
 * Lab.svelte listens on the window, describes the key and where focus is, and carries out what
 * labKeyAction() returns with the manager's start / pause / step.
 *
 * Which run: the one whose card or legend entry holds focus, else the one selected in the chart
 * legend, else the only run there is. Keys are left to the browser while focus is in a field (typing a seed must
 * not pause a run), with Ctrl / Alt / Meta held (browser and screen-reader shortcuts), and — for
 * space — on buttons, links and the like, which space already activates.
 */
import type { RunStatus } from '../worker/run-protocol';

/** Where focus is, as far as the shortcuts care. */
export type KeyTarget = 'typing' | 'activates-on-space' | 'other';

/** The focused element, described without the DOM (Lab.svelte reads these off the element). */
export interface FocusedElement {
  /** tagName, any case: 'INPUT', 'button'… */
  tag: string;
  /** The input's type attribute, if any. */
  type?: string | null;
  /** isContentEditable */
  editable?: boolean;
  /** The role attribute, if any. */
  role?: string | null;
  /**
   * The element stands for one run and takes its shortcuts (a legend entry): space there pauses
   * or resumes that run instead of pressing the element.
   */
  runShortcuts?: boolean;
}

/** Input types that take no typed text (space toggles or presses them). */
const PRESSABLE_INPUTS = new Set([
  'button',
  'checkbox',
  'radio',
  'reset',
  'submit',
  'image',
  'color',
  'file',
]);
const PRESSABLE_TAGS = new Set(['button', 'a', 'summary', 'option']);
const PRESSABLE_ROLES = new Set([
  'button',
  'link',
  'checkbox',
  'switch',
  'menuitem',
  'tab',
  'radio',
  'option',
]);
const TYPING_ROLES = new Set(['textbox', 'searchbox', 'combobox', 'spinbutton', 'slider']);

/** Whether keys typed at `el` are text (leave them alone), presses (leave space alone), or ours. */
export function keyTarget(el: FocusedElement | null | undefined): KeyTarget {
  if (!el || el.runShortcuts) return 'other';
  const tag = el.tag.toLowerCase();
  const role = el.role?.toLowerCase() ?? '';
  if (el.editable || tag === 'textarea' || tag === 'select' || TYPING_ROLES.has(role)) {
    return 'typing';
  }
  if (tag === 'input') {
    return PRESSABLE_INPUTS.has((el.type ?? 'text').toLowerCase())
      ? 'activates-on-space'
      : 'typing';
  }
  if (PRESSABLE_TAGS.has(tag) || PRESSABLE_ROLES.has(role)) return 'activates-on-space';
  return 'other';
}

/** The run id of a run card from its aria-labelledby ('run-3-title' → 'run-3'). */
export function runIdOfCard(labelledBy: string | null | undefined): string | undefined {
  const match = /^(run-\d+)-title$/.exec(labelledBy ?? '');
  return match?.[1];
}

export interface LabKeyInput {
  /** KeyboardEvent.key: ' ' for space. */
  key: string;
  /** Ctrl, Alt or Meta held. */
  modified: boolean;
  /** The key is held down and repeating. */
  repeat: boolean;
  target: KeyTarget;
  /** The run whose card or legend entry holds focus. */
  focusedRunId?: string | undefined;
  /** The run selected in the legend. */
  selectedRunId?: string | undefined;
  runs: readonly { id: string; label: string; status: RunStatus; busy: boolean }[];
}

export type LabKeyAction =
  /** Not a shortcut here: let the browser handle the key. */
  | { kind: 'pass' }
  /** A shortcut, but nothing to do and nothing to say (a held key repeating). */
  | { kind: 'swallow' }
  /** A shortcut that cannot apply now; `message` says why (announced to screen readers). */
  | { kind: 'refuse'; message: string }
  | { kind: 'start' | 'pause' | 'step'; runId: string; message: string };

export function labKeyAction(input: LabKeyInput): LabKeyAction {
  const { key } = input;
  if (key !== ' ' && key !== 's') return { kind: 'pass' };
  if (input.modified || input.target === 'typing') return { kind: 'pass' };
  if (key === ' ' && input.target === 'activates-on-space') return { kind: 'pass' };
  if (input.repeat) return { kind: 'swallow' };

  const find = (id: string | undefined) => input.runs.find((r) => r.id === id);
  const run =
    find(input.focusedRunId) ??
    find(input.selectedRunId) ??
    (input.runs.length === 1 ? input.runs[0] : undefined);
  if (!run) {
    return {
      kind: 'refuse',
      message:
        input.runs.length === 0
          ? 'No run yet: create one first.'
          : 'Which run? Select one in the chart legend or move focus into its card.',
    };
  }
  const name = run.label;
  if (run.busy) return { kind: 'refuse', message: `${name} is busy with a command; try again.` };
  switch (run.status) {
    case 'warming':
      return { kind: 'refuse', message: `${name} is still starting.` };
    case 'error':
      return { kind: 'refuse', message: `${name} failed: duplicate or delete it.` };
    case 'running':
      return key === ' '
        ? { kind: 'pause', runId: run.id, message: `Pausing ${name}.` }
        : { kind: 'refuse', message: `${name} is running: pause it (space) before stepping.` };
    case 'idle':
    case 'paused':
    case 'stored':
      return key === ' '
        ? { kind: 'start', runId: run.id, message: `Starting ${name}.` }
        : { kind: 'step', runId: run.id, message: `One update of ${name}.` };
  }
}
