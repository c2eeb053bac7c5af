/** Hash routing: `#/`, `#/lab`, `#/about`. Query options (e.g. `?backend=cpu`) stay in location.search. */
export const ROUTES = ['home', 'lab', 'about'] as const;
export type Route = (typeof ROUTES)[number];

export function parseRoute(hash: string): Route {
  const name = hash.replace(/^#\/?/, '').split(/[/?]/)[0] ?? '';
  return (ROUTES as readonly string[]).includes(name) ? (name as Route) : 'home';
}

export function routeHref(route: Route): string {
  return route === 'home' ? '#/' : `#/${route}`;
}

export class Router {
  route = $state<Route>(parseRoute(location.hash));

  constructor() {
    window.addEventListener('hashchange', () => {
      this.route = parseRoute(location.hash);
    });
  }
}
