/**
 * Hash routing: `#/`, `#/lab`, `#/about`, `#/learn` and `#/learn/<unit>/<lesson>`. Query options
 * (e.g. `?backend=cpu`) stay in location.search.
 */
export const ROUTES = ['home', 'lab', 'about', 'learn'] as const;
export type Route = (typeof ROUTES)[number];

export function parseRoute(hash: string): Route {
  const name = hash.replace(/^#\/?/, '').split(/[/?]/)[0] ?? '';
  return (ROUTES as readonly string[]).includes(name) ? (name as Route) : 'home';
}

/** `#/learn/01-mdp/01-value-iteration` → `01-mdp/01-value-iteration`; undefined otherwise. */
export function parseLessonId(hash: string): string | undefined {
  const match = /^#\/learn\/(\d{2}-[a-z0-9-]+)\/(\d{2}-[a-z0-9-]+)\/?(?:\?.*)?$/.exec(hash);
  return match ? `${match[1]}/${match[2]}` : undefined;
}

export function routeHref(route: Route): string {
  return route === 'home' ? '#/' : `#/${route}`;
}

export function lessonHref(id: string): string {
  return `#/learn/${id}`;
}

export class Router {
  route = $state<Route>(parseRoute(location.hash));
  /** The lesson open under `#/learn/…`, if any. */
  lesson = $state<string | undefined>(parseLessonId(location.hash));

  constructor() {
    window.addEventListener('hashchange', () => {
      this.route = parseRoute(location.hash);
      this.lesson = parseLessonId(location.hash);
    });
  }
}
