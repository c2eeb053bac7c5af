/**
 * Language-model lesson presets, run as the lab runs them, each to its check — and a control that
 * must not reach the check by the update the preset did. Shared by lm-presets-a … e.test.ts,
 * split so that the test workers share them evenly.
 */
import { describe, expect, it } from 'vitest';
import { LESSONS } from '../../src/lessons/catalog';
import { metricCheckPassed } from '../../src/lessons/checks';
import { buildPresetSpec, PRESETS, type PresetName } from '../../src/lessons/presets';
import { ALGORITHMS } from '../../src/rl/registry';
import { createRunHost } from '../../src/worker/run-host';
import type { Settings } from '../../src/worker/run-protocol';
import { readShipped } from '../onnx/shipped';

const defaultsOf = (algo: string): Settings => ALGORITHMS[algo]!.defaults;

/**
 * Drives a language-model preset through the lab's own path (the run host builds the run from the
 * preset's spec, shipped start included, and steps it) until the widget's check passes; returns
 * the update it passed at (Infinity: not within `budget`). `change` alters settings first: the
 * controls below.
 */
export async function updatesToCheck(
  name: PresetName,
  check: string,
  budget: number,
  change: Settings = {},
): Promise<number> {
  const widget = LESSONS.flatMap((l) => l.blocks).find(
    (b) => b.kind === 'widget' && b.preset === name && b.check.text === check,
  );
  if (widget?.kind !== 'widget' || widget.check.kind !== 'metric') {
    throw new Error(`no widget ${name} with a metric check ${check}`);
  }
  const metric = widget.check.metric;
  const preset = buildPresetSpec(name, defaultsOf(PRESETS[name].algo));
  const spec = { ...preset, config: { ...preset.config, ...change }, backend: 'cpu' as const };
  const values: number[] = [];
  const api = createRunHost({ flushMs: 1, lm: { readShipped: async (file) => readShipped(file) } });
  await api.createRun(spec, (m) => {
    if (m.type === 'update') for (const p of m.points) values.push(p.metrics[metric]!);
  });
  const started = performance.now();
  let update = Infinity;
  for (let u = 1; u <= budget; u++) {
    await api.step();
    if (metricCheckPassed(widget.check, values)) {
      update = u;
      break;
    }
  }
  await api.dispose();
  const seconds = (performance.now() - started) / 1000;
  const what = Object.keys(change).length ? ` with ${JSON.stringify(change)}` : '';
  console.log(`${name}${what}: ${check} after ${update} updates, ${seconds.toFixed(1)} s`);
  return update;
}

/** One row: the preset, its check, its budget, and the control's change (null: none). */
export type PresetRow = [PresetName, string, number, Settings | null];

/** The preset passes within its budget; the control has not passed by the update it did. */
export function presetTests(rows: PresetRow[]): void {
  describe('language-model presets reach their checks on CPU, and a control does not', () => {
    it.each(rows)(
      '%s reaches %s within %i updates; not with %o',
      async (name, check, budget, control) => {
        const passed = await updatesToCheck(name, check, budget);
        expect(passed).toBeLessThanOrEqual(budget);
        if (control) expect(await updatesToCheck(name, check, passed, control)).toBe(Infinity);
      },
      600_000,
    );
  });
}
