/**
 * Hash routing: `#/`, `#/lab`, `#/models`, `#/about`, `#/learn` and `#/learn/<unit>/<lesson>`. Query options
 * (e.g. `?backend=cpu`) stay in location.search; lesson options (`?classroom=1`) ride in the hash
 * after the path, so a shared lesson link keeps them (src/state/lesson-options.ts).
 */
import { createSubscriber } from 'svelte/reactivity';
import {
  lessonQuery,
  parseLessonOptions,
  withLessonOptions,
  type LessonOptions,
} from './lesson-options';

export const ROUTES = ['home', 'lab', 'models', 'about', 'learn'] as const;
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

/** `lessonHref('03-ppo/01-clipped-objective', { classroom: true })` → `#/learn/03-ppo/01-clipped-objective?classroom=1`. */
export function lessonHref(id: string, options: Partial<LessonOptions> = {}): string {
  return `#/learn/${id}${lessonQuery(options)}`;
}

/** The lesson index, `#/learn`, with the same options. */
export function learnHref(options: Partial<LessonOptions> = {}): string {
  return `#/learn${lessonQuery(options)}`;
}

// Classroom mode follows the hash: a link followed or typed (hashchange), or the page's own toggle,
// which replaces the history entry (no hashchange) and so bumps `replaced` to be read again.
const subscribeHash = createSubscriber((update) => {
  window.addEventListener('hashchange', update);
  return () => window.removeEventListener('hashchange', update);
});
let replaced = $state(0);

/** Whether the page open now is in classroom mode; reactive when read in a component or effect. */
export function classroomMode(): boolean {
  subscribeHash();
  void replaced;
  return parseLessonOptions(location.hash).classroom;
}

/**
 * Turns classroom mode on or off for the page open now, in place: the history entry is replaced,
 * so Back still leaves the lesson, and the route (and the lesson's open runs) stay as they are.
 */
export function setClassroomMode(on: boolean): void {
  history.replaceState(history.state, '', withLessonOptions(location.hash, { classroom: on }));
  replaced++;
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
