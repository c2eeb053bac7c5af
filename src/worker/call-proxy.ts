/**
 * The one way the page wraps a worker's API (or a handler the worker calls back): every method
 * call goes through `around`, which decides whether and how to make it (`invoke` makes it) and
 * what the caller gets back; other members pass through. worker-failure.ts settles calls when the
 * worker dies, worker-hang.ts counts them toward its silence.
 */
export function aroundCalls<T extends object>(
  target: T,
  around: (invoke: () => unknown) => unknown,
): T {
  return new Proxy(target, {
    get(object, key) {
      // Never a thenable: `await wrapped` must not call through to the worker (a comlink proxy
      // answers every name, `then` included).
      if (key === 'then') return undefined;
      const member = Reflect.get(object, key) as unknown;
      if (typeof member !== 'function') return member;
      // Reflect.apply, not member.apply: on a comlink proxy, `.apply` would be a remote name.
      return (...args: unknown[]) =>
        around(() => Reflect.apply(member as (...a: unknown[]) => unknown, object, args));
    },
  });
}

export function isThenable(value: unknown): value is PromiseLike<unknown> {
  return (
    (typeof value === 'object' || typeof value === 'function') &&
    value !== null &&
    typeof (value as { then?: unknown }).then === 'function'
  );
}
