// Which Node versions the project supports, and what `npm test` says about the one running it.
// The range is the intersection of what the dependencies declare: eslint's packages want
// ^20.19.0 || ^22.13.0 || >=24, vite and rolldown ^20.19.0 || >=22.12.0. One package is outside
// it on Node 20: commander 15 (>=22.12.0), which katex depends on for its command-line tool only;
// the lab imports katex's library, never that tool, so `npm ci`'s engine warning for it on Node 20
// is harmless.

/** The versions the project supports (package.json "engines" says the same). */
export const SUPPORTED_NODE = '^20.19.0 || ^22.13.0 || >=24';

/** Node 20's end of life: it still works, but gets no security fixes after this day. */
export const NODE_20_END_OF_LIFE = '2026-04-30';

/**
 * @param {string} version e.g. process.version, "v20.20.2"
 * @returns {{ level: 'ok' | 'warn' | 'error', message: string }}
 */
export function nodeSupport(version) {
  const match = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (!match) return { level: 'error', message: `node: cannot read the version "${version}"` };
  const [major, minor] = [Number(match[1]), Number(match[2])];
  const supported = `supported: ${SUPPORTED_NODE}`;
  if (major >= 24 || (major === 22 && minor >= 13)) {
    return { level: 'ok', message: `node: ${version} (${supported})` };
  }
  if (major === 20 && minor >= 19) {
    return {
      level: 'warn',
      message:
        `node: ${version} works, but Node 20 reached its end of life on ${NODE_20_END_OF_LIFE}; ` +
        'use Node 24 (or 22.13+). On Node 20 `npm ci` warns that commander needs >=22.12.0: ' +
        "it is katex's command-line tool, which the lab never runs.",
    };
  }
  return {
    level: 'error',
    message: `node: ${version} is not supported (${supported}); install Node 24 and run npm ci again`,
  };
}
