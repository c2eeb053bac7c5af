/** RunControl: queued changes land at the next update as events; skips lead to an unhealthy run. */
import { describe, expect, it } from 'vitest';
import { RunControl } from '../../src/rl/trainer';

describe('RunControl', () => {
  it('applies queued changes at the next update and records only real changes', () => {
    const control = new RunControl({ lr: 1, clip: 0.2 });
    control.beginUpdate();
    control.endUpdate();
    control.queue({ lr: 0.5 });
    control.queue({ clip: 0.2 }); // same value: not a change
    expect(control.config.lr).toBe(1);
    expect(control.beginUpdate().lr).toBe(0.5);
    control.endUpdate();
    expect(control.events).toEqual([{ step: 2, kind: 'hyperparams', changes: { lr: 0.5 } }]);
    expect(control.step).toBe(2);
  });

  it('records skipped updates and marks the run unhealthy after too many in a row', () => {
    const control = new RunControl({ lr: 1 }, 3);
    for (const outcome of [{ skipped: 'nan' }, {}, { skipped: 'nan' }, { skipped: 'nan' }]) {
      control.beginUpdate();
      control.endUpdate(outcome);
    }
    expect(control.health.healthy).toBe(true); // the streak was broken at update 2
    control.beginUpdate();
    control.endUpdate({ skipped: 'non-finite loss' });
    expect(control.health).toEqual({
      healthy: false,
      reason: '3 updates in a row skipped (last: non-finite loss)',
    });
    expect(control.events.filter((e) => e.kind === 'skipped-update').map((e) => e.step)).toEqual([
      1, 3, 4, 5,
    ]);
    expect(control.events.at(-1)).toMatchObject({ step: 5, kind: 'unhealthy' });
    expect(() => control.beginUpdate()).toThrow(/unhealthy/);
  });
});
