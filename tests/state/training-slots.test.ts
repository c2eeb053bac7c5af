/**
 * Turns at training: never more slices at once than the capacity, waiting runs served in the
 * order they asked, a pause stops a wait, and a run whose worker ends gives its turn on.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defaultCapacity, TrainingSlots, type RunTurns } from '../../src/state/training-slots';

/** Lets resolved promises' callbacks run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

describe('TrainingSlots', () => {
  it('grants up to the capacity at once, then serves the waiting runs in the order they asked', async () => {
    const slots = new TrainingSlots(2);
    const runs = [0, 1, 2, 3].map(() => slots.forRun());
    const order: number[] = [];
    const takes = runs.map((run, i) => run.take().then((granted) => granted && order.push(i)));
    await settle();
    expect(order).toEqual([0, 1]);
    expect([slots.training, slots.queued]).toEqual([2, 2]);
    runs[1]!.give();
    await settle();
    expect(order).toEqual([0, 1, 2]);
    runs[0]!.give();
    await settle();
    expect(order).toEqual([0, 1, 2, 3]);
    await Promise.all(takes);
  });

  it('a run that gives its turn and asks again goes behind the run already waiting', async () => {
    const slots = new TrainingSlots(1);
    const [a, b] = [slots.forRun(), slots.forRun()];
    const order: string[] = [];
    await a.take();
    const bTurn = b.take().then(() => order.push('b'));
    a.give();
    const aAgain = a.take().then(() => order.push('a'));
    await bTurn;
    b.give();
    await aAgain;
    expect(order).toEqual(['b', 'a']);
  });

  it('serves the run that has trained least: short slices are not starved by long ones', async () => {
    const slots = new TrainingSlots(1);
    const order: string[] = [];
    // Each run passes its turn on as soon as its slice ends: lm's slices take 100 ms, env's 10.
    async function train(name: string, ms: number, slices: number) {
      const turns = slots.forRun();
      let granted = await turns.take();
      for (let i = 0; granted && i < slices; i++) {
        order.push(name);
        granted = i + 1 < slices ? await turns.pass(ms) : (turns.give(ms), false);
      }
    }
    await Promise.all([train('lm', 100, 3), train('env', 10, 25)]);
    // After lm's first 100 ms, env trains ten 10 ms slices before lm's turn comes again.
    const lm = order.flatMap((name, i) => (name === 'lm' ? [i] : []));
    expect(lm.slice(0, 3)).toEqual([0, 11, 22]);
  });

  it('a run back from a pause is set level with the runs contending: neither owed nor owing', async () => {
    const slots = new TrainingSlots(1);
    const [a, b] = [slots.forRun(), slots.forRun()];
    await a.take();
    a.give(1000); // a trained 1 s, then paused
    await b.take();
    for (let i = 0; i < 9; i++) await b.pass(10); // b trains on alone: 90 ms, holding
    let aGranted = false;
    const aBack = a.take().then((granted) => (aGranted = granted));
    await settle();
    expect(aGranted).toBe(false); // b holds the one slot
    const bNext = b.pass(10); // b has 100 ms now; a, level with b's 90, goes first
    await aBack;
    expect(aGranted).toBe(true);
    a.give(10);
    expect(await bNext).toBe(true);
  });

  it('a run that joins late is levelled too: it takes its share, not the slot', async () => {
    const slots = new TrainingSlots(1);
    const order: string[] = [];
    let joined: Promise<void> | undefined;
    async function train(name: string, slices: number): Promise<void> {
      const turns = slots.forRun();
      let granted = await turns.take();
      for (let i = 0; granted && i < slices; i++) {
        order.push(name);
        // c joins once a and b have had ten 10 ms turns between them.
        if (order.length === 10) joined = train('c', 10);
        granted = i + 1 < slices ? await turns.pass(10) : (turns.give(10), false);
      }
    }
    await Promise.all([train('a', 20), train('b', 20)]);
    await joined;
    const first = order.indexOf('c');
    expect(first).toBeGreaterThanOrEqual(10);
    // From the join on, the three take turns: c has two of the next six, not all of them.
    const next = order.slice(first, first + 6);
    expect(next.filter((name) => name === 'c')).toHaveLength(2);
  });

  it('cancel() ends a wait with false and frees nothing; give() without a turn does nothing', async () => {
    const slots = new TrainingSlots(1);
    const a = slots.forRun();
    const b = slots.forRun();
    expect(await a.take()).toBe(true);
    const waiting = b.take();
    b.give(); // holds nothing: no effect
    expect(slots.training).toBe(1);
    b.cancel();
    expect(await waiting).toBe(false);
    expect([slots.training, slots.queued]).toEqual([1, 0]);
    a.give();
    expect(slots.training).toBe(0);
  });

  it('a closed run gives its held turn on, leaves the queue, and cannot take again', async () => {
    const slots = new TrainingSlots(1);
    const [a, b, c] = [slots.forRun(), slots.forRun(), slots.forRun()];
    expect(await a.take()).toBe(true);
    const bWaits = b.take();
    const cWaits = c.take();
    b.close(); // a waiter that ends: removed from the queue
    expect(await bWaits).toBe(false);
    a.close(); // a holder that ends: its turn goes to c
    expect(await cWaits).toBe(true);
    await expect(a.take()).rejects.toThrow('this run has ended');
    expect([slots.training, slots.queued]).toEqual([1, 0]);
  });

  it('refuses a second take() while a run holds or awaits a turn, and a bad capacity', async () => {
    const slots = new TrainingSlots(1);
    const a = slots.forRun();
    await a.take();
    await expect(a.take()).rejects.toThrow('this run already has a turn');
    expect(() => new TrainingSlots(0)).toThrow('capacity must be a whole number ≥ 1, got 0');
    expect(() => new TrainingSlots(1.5)).toThrow('got 1.5');
  });

  it('property: under any interleaving, never more turns held than the capacity, and none lost', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 }),
        fc.array(
          fc.tuple(
            fc.integer({ min: 0, max: 4 }),
            fc.constantFrom('take', 'pass', 'give', 'cancel', 'close'),
          ),
          {
            maxLength: 60,
          },
        ),
        async (capacity, script) => {
          const slots = new TrainingSlots(capacity);
          const runs: { turns: RunTurns; holding: boolean; waiting: boolean; closed: boolean }[] =
            Array.from({ length: 5 }, () => ({
              turns: slots.forRun(),
              holding: false,
              waiting: false,
              closed: false,
            }));
          for (const [i, action] of script) {
            const run = runs[i]!;
            if (action === 'take' || action === 'pass') {
              if (run.closed || run.waiting || (action === 'take' && run.holding)) continue;
              run.waiting = true;
              run.holding = false; // pass gives the held turn back first
              const asked = action === 'take' ? run.turns.take() : run.turns.pass(5);
              void asked.then((granted) => {
                run.waiting = false;
                run.holding = granted;
              });
            } else {
              run.turns[action]();
              if (action !== 'cancel') run.holding = false;
              if (action === 'close') run.closed = true;
            }
            await settle();
            const held = runs.filter((r) => r.holding).length;
            expect(held).toBeLessThanOrEqual(capacity);
            expect(slots.training).toBe(held);
            // A free slot is never left while someone waits.
            if (held < capacity) expect(runs.some((r) => r.waiting)).toBe(false);
          }
        },
      ),
      { numRuns: 100 },
    );
  });
});

describe('defaultCapacity', () => {
  it('keeps one core for the page, at least one run training; 4 cores when unknown', () => {
    expect([1, 2, 4, 8, 16].map(defaultCapacity)).toEqual([1, 1, 3, 7, 15]);
    expect(defaultCapacity(undefined)).toBe(3);
    expect(defaultCapacity(0)).toBe(3);
  });
});
