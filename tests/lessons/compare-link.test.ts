/**
 * The lab link under side-by-side lesson widgets: it must decode, in the lab's own link reader, to
 * exactly the widgets' runs — each preset's spec with its seed and the next two — and every group
 * of side-by-side widgets in the lessons must fit in a link.
 */
import { describe, expect, it } from 'vitest';
import { comparisonFromHash } from '../../src/compare/url-state';
import { LESSONS } from '../../src/lessons/catalog';
import { lessonBlocks } from '../../src/lessons/lesson';
import { presetComparisonHash } from '../../src/lessons/compare-link';
import { buildPresetSpec, PRESETS, type PresetName } from '../../src/lessons/presets';
import { ALGORITHMS } from '../../src/rl/registry';
import { runCatalog } from '../../src/worker/run-spec';

const catalog = runCatalog();
const defaultsOf = (algo: string) => ALGORITHMS[algo]!.defaults;

describe('presetComparisonHash', () => {
  it('links PPO and GRPO on copy, seeds 1, 2 and 3 each, with every setting of the presets', () => {
    const hash = presetComparisonHash(['ppo-copy', 'grpo-copy'], catalog, defaultsOf);
    expect(hash.startsWith('#/lab?compare=')).toBe(true);
    const runs = comparisonFromHash(hash, catalog)!;
    expect(runs.map((r) => [r.algorithm, r.seed])).toEqual([
      ['ppo', 1],
      ['ppo', 2],
      ['ppo', 3],
      ['grpo', 1],
      ['grpo', 2],
      ['grpo', 3],
    ]);
    for (const run of runs) {
      const name: PresetName = run.algorithm === 'ppo' ? 'ppo-copy' : 'grpo-copy';
      const spec = buildPresetSpec(name, defaultsOf(PRESETS[name].algo));
      expect(run.task).toBe('copy');
      expect(run.config).toEqual(spec.config);
      expect(run.init).toEqual({ kind: 'shipped', model: 'copy-noisy' });
    }
    // The settings that make the presets what they are survive the trip.
    expect(runs[0]!.config.promptsPerUpdate).toBe(128);
    expect(runs[3]!.config.promptsPerUpdate).toBe(16);
    expect(runs[3]!.config.lr).toBe(1.5e-3);
    expect(runs[3]!.config.iterations).toBe(2);
  });

  it('takes the number of seeds asked for', () => {
    const hash = presetComparisonHash(['q-learning-cliff'], catalog, defaultsOf, 2);
    const runs = comparisonFromHash(hash, catalog)!;
    expect(runs.map((r) => [r.algorithm, r.task, r.seed])).toEqual([
      ['q-learning', 'cliffwalking', 1],
      ['q-learning', 'cliffwalking', 2],
    ]);
  });

  it('fits every group of side-by-side widgets in the lessons into one link', () => {
    let groups = 0;
    for (const lesson of LESSONS) {
      let run: PresetName[] = [];
      const flush = () => {
        if (run.length > 1) {
          groups += 1;
          const runs = comparisonFromHash(presetComparisonHash(run, catalog, defaultsOf), catalog);
          expect(runs, lesson.id).toHaveLength(run.length * 3);
        }
        run = [];
      };
      for (const block of lessonBlocks(lesson)) {
        if (block.kind === 'widget') run.push(block.preset);
        else if (block.kind === 'seeds') {
          // A seeds block is a side-by-side group of its own, linked to the lab the same way.
          flush();
          run = block.presets.map((p) => p.preset);
          flush();
        } else flush();
      }
      flush();
    }
    expect(groups).toBeGreaterThanOrEqual(3);
  });
});
