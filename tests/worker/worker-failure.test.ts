import { describe, expect, it } from 'vitest';
import { guardApi, watchWorker, WorkerFailure } from '../../src/worker/worker-failure';

/** A Worker stand-in: an EventTarget that counts terminate() calls. */
function fakeWorker() {
  const target = new EventTarget();
  const worker = Object.assign(target, {
    terminated: 0,
    terminate: () => (worker.terminated += 1),
  });
  return worker;
}

describe('watchWorker', () => {
  it('reports the first failure once, ends the worker, and tells late listeners at once', () => {
    const worker = fakeWorker();
    const watch = watchWorker(worker);
    const heard: string[] = [];
    watch.onFailure((reason) => heard.push(`a: ${reason}`));
    worker.dispatchEvent(new Event('messageerror'));
    worker.dispatchEvent(new Event('error')); // a second failure changes nothing
    watch.onFailure((reason) => heard.push(`b: ${reason}`));
    expect(heard).toEqual([
      'a: a message from it could not be read',
      'b: a message from it could not be read',
    ]);
    expect(worker.terminated).toBe(1);
  });

  it("names an error event's message, or a load failure where it has none", () => {
    for (const [event, reason] of [
      [
        Object.assign(new Event('error'), { message: 'Uncaught Error: boom' }),
        'Uncaught Error: boom',
      ],
      [new Event('error'), 'its script failed to load or it crashed'],
    ] as const) {
      const worker = fakeWorker();
      let heard: string | undefined;
      watchWorker(worker).onFailure((r) => (heard = r));
      worker.dispatchEvent(event);
      expect(heard).toBe(reason);
    }
  });
});

describe('guardApi', () => {
  it('settles calls pending when the worker fails, and fails later ones without calling', async () => {
    const calls: string[] = [];
    const api = {
      hang: () => (calls.push('hang'), new Promise<never>(() => {})),
      answer: async (x: number) => (calls.push('answer'), x + 1),
      size: 3,
    };
    const failure = new WorkerFailure();
    const guarded = guardApi(api, failure);
    expect(await guarded.answer(1)).toBe(2);
    expect(guarded.size).toBe(3);
    const pending = guarded.hang();
    failure.fail(new Error('worker died'));
    await expect(pending).rejects.toThrow('worker died');
    await expect(guarded.answer(1)).rejects.toThrow('worker died');
    expect(calls).toEqual(['answer', 'hang']);
    // Not a thenable: awaiting the proxy itself does not call through.
    expect(await Promise.resolve(guarded)).toBe(guarded);
  });

  it('calls a comlink-style proxy through its apply trap, where .apply is just another name', async () => {
    // comlink's Remote answers every property (even `apply`) with a proxy for that remote name.
    const called: string[] = [];
    const remote = (path: string[]): unknown =>
      new Proxy(() => {}, {
        get: (_, key) => (key === 'then' ? undefined : remote([...path, String(key)])),
        apply: (_, _this, args: unknown[]) => {
          called.push(`${path.join('.')}(${args.length})`);
          return Promise.resolve(path.join('.'));
        },
      });
    const api = remote([]) as { createRun(a: unknown, b: unknown): Promise<string> };
    const guarded = guardApi(api, new WorkerFailure());
    expect(await guarded.createRun(1, () => {})).toBe('createRun');
    expect(called).toEqual(['createRun(2)']);
  });
});
