/**
 * The language-model trainers against their recorded traces (lm-trace.ts): every language-model
 * preset and each variant, run through the lab's run host on the CPU for its first updates, gives
 * the very metrics it gave when the trace was recorded — the same names, and every value the same
 * float (Object.is: NaN matches NaN, −0 does not match 0).
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { decode, recordTrace, TRACE_CASES, TRACE_FILE, type Trace } from './lm-trace';

const recorded = JSON.parse(readFileSync(TRACE_FILE, 'utf8')) as Trace;

describe('language-model trainers replay their recorded traces exactly', () => {
  it('has a recorded trace for every case, and no other', () => {
    expect(Object.keys(recorded).sort()).toEqual(TRACE_CASES.map((c) => c.name).sort());
  });

  it.each(TRACE_CASES.map((c) => [c.name, c] as const))(
    '%s',
    async (_name, c) => {
      const expected = recorded[c.name]!;
      const actual = await recordTrace(c);
      expect(actual).toHaveLength(expected.length);
      actual.forEach((metrics, u) => {
        expect(Object.keys(metrics).sort(), `update ${u + 1}: metric names`).toEqual(
          Object.keys(expected[u]!).sort(),
        );
        const differing = Object.keys(metrics).filter(
          (name) => !Object.is(decode(metrics[name]!), decode(expected[u]![name]!)),
        );
        const detail = differing.map((n) => `${n}: ${metrics[n]} ≠ ${expected[u]![n]}`);
        expect(detail, `update ${u + 1}: values`).toEqual([]);
      });
    },
    120_000,
  );
});
