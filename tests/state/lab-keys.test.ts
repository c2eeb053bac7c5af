import { describe, expect, it } from 'vitest';
import { keyTarget, labKeyAction, runIdOfCard, type LabKeyInput } from '../../src/state/lab-keys';

const runs: LabKeyInput['runs'] = [
  { id: 'run-1', label: '#1 q-learning', status: 'running', busy: false },
  { id: 'run-2', label: '#2 sarsa', status: 'paused', busy: false },
  { id: 'run-3', label: '#3 grpo', status: 'warming', busy: false },
  { id: 'run-4', label: '#4 ppo', status: 'idle', busy: true },
  { id: 'run-5', label: '#5 dpo', status: 'error', busy: false },
  { id: 'run-6', label: '#6 sarsa', status: 'stored', busy: false },
];

const press = (key: string, more: Partial<LabKeyInput> = {}) =>
  labKeyAction({ key, modified: false, repeat: false, target: 'other', runs, ...more });

describe('keyTarget', () => {
  it.each([
    [{ tag: 'INPUT' }, 'typing'],
    [{ tag: 'input', type: 'number' }, 'typing'],
    [{ tag: 'input', type: 'range' }, 'typing'],
    [{ tag: 'INPUT', type: 'checkbox' }, 'activates-on-space'],
    [{ tag: 'TEXTAREA' }, 'typing'],
    [{ tag: 'SELECT' }, 'typing'],
    [{ tag: 'DIV', editable: true }, 'typing'],
    [{ tag: 'DIV', role: 'textbox' }, 'typing'],
    [{ tag: 'BUTTON' }, 'activates-on-space'],
    [{ tag: 'SUMMARY' }, 'activates-on-space'],
    [{ tag: 'A' }, 'activates-on-space'],
    [{ tag: 'SPAN', role: 'button' }, 'activates-on-space'],
    [{ tag: 'BODY' }, 'other'],
    // A legend entry of one run: space pauses or resumes that run rather than pressing it.
    [{ tag: 'BUTTON', runShortcuts: true }, 'other'],
    [{ tag: 'ARTICLE', role: null }, 'other'],
  ] as const)('%o is %s', (el, expected) => {
    expect(keyTarget(el)).toBe(expected);
  });

  it('treats no focused element as the page', () => {
    expect(keyTarget(null)).toBe('other');
  });
});

describe('runIdOfCard', () => {
  it('reads the run id from the card heading id', () => {
    expect(runIdOfCard('run-12-title')).toBe('run-12');
    expect(runIdOfCard('new-run-title')).toBeUndefined();
    expect(runIdOfCard(null)).toBeUndefined();
  });
});

describe('labKeyAction', () => {
  it('space pauses a running run and starts a paused, idle or stored one', () => {
    expect(press(' ', { selectedRunId: 'run-1' })).toEqual({
      kind: 'pause',
      runId: 'run-1',
      message: 'Pausing #1 q-learning.',
    });
    expect(press(' ', { selectedRunId: 'run-2' })).toMatchObject({ kind: 'start', runId: 'run-2' });
    expect(press(' ', { selectedRunId: 'run-6' })).toMatchObject({ kind: 'start', runId: 'run-6' });
  });

  it('s steps a paused run and refuses a running one', () => {
    expect(press('s', { selectedRunId: 'run-2' })).toEqual({
      kind: 'step',
      runId: 'run-2',
      message: 'One update of #2 sarsa.',
    });
    expect(press('s', { selectedRunId: 'run-1' })).toEqual({
      kind: 'refuse',
      message: '#1 q-learning is running: pause it (space) before stepping.',
    });
  });

  it('prefers the run whose card holds focus over the selected one', () => {
    expect(press('s', { focusedRunId: 'run-2', selectedRunId: 'run-1' })).toMatchObject({
      kind: 'step',
      runId: 'run-2',
    });
  });

  it('acts on the only run without a selection, and asks which run when there are several', () => {
    expect(press(' ', { runs: [runs[1]!] })).toMatchObject({ kind: 'start', runId: 'run-2' });
    expect(press(' ')).toEqual({
      kind: 'refuse',
      message: 'Which run? Select one in the chart legend or move focus into its card.',
    });
    expect(press(' ', { runs: [] })).toEqual({
      kind: 'refuse',
      message: 'No run yet: create one first.',
    });
    // A selection of a run that has since been deleted counts as none.
    expect(press(' ', { selectedRunId: 'run-99' })).toMatchObject({ kind: 'refuse' });
  });

  it.each([
    ['run-3', '#3 grpo is still starting.'],
    ['run-4', '#4 ppo is busy with a command; try again.'],
    ['run-5', '#5 dpo failed: duplicate or delete it.'],
  ])('refuses %s and says why', (id, message) => {
    expect(press(' ', { selectedRunId: id })).toEqual({ kind: 'refuse', message });
    expect(press('s', { selectedRunId: id })).toEqual({ kind: 'refuse', message });
  });

  it.each<[string, Partial<LabKeyInput>]>([
    ['s', { target: 'typing' }],
    [' ', { target: 'typing' }],
    [' ', { target: 'activates-on-space' }],
    ['s', { modified: true }],
    ['S', {}],
    ['x', {}],
    ['Enter', {}],
  ])('leaves %j to the browser with %o', (key, more) => {
    expect(press(key, { selectedRunId: 'run-2', ...more })).toEqual({ kind: 'pass' });
  });

  it('s still works on a focused button; a held key repeating does nothing', () => {
    expect(press('s', { target: 'activates-on-space', selectedRunId: 'run-2' })).toMatchObject({
      kind: 'step',
    });
    expect(press(' ', { repeat: true, selectedRunId: 'run-1' })).toEqual({ kind: 'swallow' });
  });
});
