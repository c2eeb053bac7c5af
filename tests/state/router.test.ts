import { describe, expect, it } from 'vitest';
import { parseRoute, routeHref } from '../../src/state/router.svelte';

describe('hash routes', () => {
  it.each([
    ['', 'home'],
    ['#/', 'home'],
    ['#/lab', 'lab'],
    ['#/about', 'about'],
    ['#/models', 'models'],
    ['#/lab/run-3', 'lab'],
    ['#/nowhere', 'home'],
    ['#/__proto__', 'home'],
  ])('%s → %s', (hash, route) => expect(parseRoute(hash)).toBe(route));

  it('round-trips every route through its href', () => {
    for (const route of ['home', 'lab', 'models', 'about'] as const) {
      expect(parseRoute(routeHref(route))).toBe(route);
    }
  });
});
