/** scripts/node-version.mjs: the supported Node versions, as package.json and `npm test` state them. */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { nodeSupport, SUPPORTED_NODE } from '../../scripts/node-version.mjs';

describe('nodeSupport', () => {
  it.each<[string, 'ok' | 'warn' | 'error']>([
    ['v24.0.0', 'ok'],
    ['v25.2.1', 'ok'],
    ['v22.13.0', 'ok'],
    ['v22.12.0', 'error'], // eslint's packages want ^22.13.0 on the 22 line
    ['v23.11.0', 'error'],
    ['v20.20.2', 'warn'], // works (CI runs it) but is past its end of life
    ['v20.19.0', 'warn'],
    ['v20.18.3', 'error'],
    ['v18.20.0', 'error'],
    ['nonsense', 'error'],
  ])('%s → %s', (version, level) => {
    expect(nodeSupport(version).level).toBe(level);
  });

  it('says why Node 20 warns: its end of life, and the one engine warning npm ci gives', () => {
    expect(nodeSupport('v20.20.2').message).toContain('end of life on 2026-04-30');
    expect(nodeSupport('v20.20.2').message).toContain('commander needs >=22.12.0');
  });

  it('is what package.json states, and what the lockfile says of the package warning on Node 20', () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
    expect(pkg.engines.node).toBe(SUPPORTED_NODE);
    const lock = JSON.parse(readFileSync('package-lock.json', 'utf8'));
    expect(lock.packages[''].engines.node).toBe(SUPPORTED_NODE);
    expect(lock.packages['node_modules/commander'].engines.node).toBe('>=22.12.0');
    expect(Object.keys(lock.packages['node_modules/katex'].dependencies)).toEqual(['commander']);
  });
});
