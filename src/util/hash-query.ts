/**
 * A location hash with its own query, as the lab's routes carry options:
 * `#/learn/03-ppo/01-clipped-objective?classroom=1`, `#/lab?compare=v1.…`. Split at the first `?`
 * and decoded by URLSearchParams: the hash is untrusted text and is never evaluated.
 */
export function splitHash(hash: string): { path: string; params: URLSearchParams } {
  const at = hash.indexOf('?');
  return at < 0
    ? { path: hash, params: new URLSearchParams() }
    : { path: hash.slice(0, at), params: new URLSearchParams(hash.slice(at + 1)) };
}
