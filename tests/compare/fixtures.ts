/** Shared inputs of the compare tests: the real catalog and a small run builder. */
import type { RunRecord } from '../../src/compare/run-record';
import { runCatalog } from '../../src/worker/run-spec';

/** The catalog the lab worker sends the UI, built from the real registry. */
export const catalog = runCatalog();

export function defaultsOf(algorithm: string): Record<string, number | boolean | string> {
  const algo = catalog.algorithms.find((a) => a.name === algorithm);
  if (!algo) throw new Error(`no algorithm ${algorithm}`);
  return { ...algo.defaults };
}

/** A run record with the algorithm's defaults, overridable field by field. */
export function makeRun(overrides: Partial<RunRecord> & { algorithm: string }): RunRecord {
  return {
    task: 'reverse',
    seed: 1,
    config: defaultsOf(overrides.algorithm),
    metrics: {},
    events: [],
    ...overrides,
  };
}
