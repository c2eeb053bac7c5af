/**
 * Every lesson file parses, every widget preset is a valid run spec, every source view shows a
 * region that exists and holds code, and each environment preset reaches its check on CPU within a small budget,
 * driven through the same registry the lab's workers use.
 */
import { describe, expect, it } from 'vitest';
import { LESSONS, routeTo, TOOL_USE_GOAL } from '../../src/lessons/catalog';
import { lessonBlocks, lessonWidgets } from '../../src/lessons/lesson';
import { metricCheckPassed, pathCheckPassed } from '../../src/lessons/checks';
import { sourceRegions, SOURCE_VIEWS } from '../../src/lessons/source-views';
import {
  buildPresetSpec,
  PRESETS,
  type LessonPreset,
  type PresetName,
} from '../../src/lessons/presets';
import { ALGORITHMS } from '../../src/rl/registry';
import type { Inspection } from '../../src/rl/inspection';
import { checkRunSpec } from '../../src/worker/run-spec';
import type { Settings } from '../../src/worker/run-protocol';
import { clipPoint } from '../../src/lessons/clip-curve';

const defaultsOf = (algo: string): Settings => ALGORITHMS[algo]!.defaults;

describe('the lesson catalog', () => {
  it('holds the first lessons, in order', () => {
    expect(LESSONS.map((l) => l.id)).toEqual([
      '01-mdp/01-value-iteration',
      '01-mdp/02-q-learning-vs-sarsa',
      '02-policy-gradient/01-reinforce-and-baselines',
      '03-ppo/01-clipped-objective',
      '03-ppo/02-gae-and-cartpole',
      '03-ppo/03-ppo-on-tokens',
      '04-grpo/01-group-relative-advantages',
      '04-grpo/02-std-and-length-bias',
      '04-grpo/03-kl-to-reference',
      '04-grpo/04-dpo-offline-contrast',
      '04-grpo/05-dynamic-sampling-and-clip-higher',
      '04-grpo/06-ppo-vs-grpo',
      '05-reward-engineering/01-reward-hacking',
      '05-reward-engineering/02-learned-reward-models',
      '06-tool-use/01-calls-and-masks',
      '06-tool-use/02-curriculum-and-forgetting',
      '07-reading-a-run/01-reading-a-run',
      '08-real-models/01-lora-grpo',
    ]);
  });

  it.each(LESSONS.map((l) => [l.id, l] as const))(
    '%s: widgets, source views and references',
    (_id, lesson) => {
      expect(lesson.goals.length).toBeGreaterThan(0);
      for (const block of lessonBlocks(lesson)) {
        if (block.kind === 'widget') {
          const spec = buildPresetSpec(block.preset, defaultsOf(PRESETS[block.preset].algo));
          expect(checkRunSpec(spec), `${lesson.file}:${block.line}`).toEqual([]);
        }
        if (block.kind === 'seeds') {
          // Every preset × seed run the block opens, as it opens them.
          for (const { preset } of block.presets) {
            for (const seed of block.seeds) {
              const spec = {
                ...buildPresetSpec(preset, defaultsOf(PRESETS[preset].algo), {}, []),
                seed,
              };
              expect(checkRunSpec(spec), `${lesson.file}:${block.line}: ${preset}`).toEqual([]);
            }
          }
        }
        if (block.kind === 'source') {
          const where = `${lesson.file}:${block.line}: ${block.file} region ${block.region}`;
          const regions = sourceRegions(block.file);
          if (typeof regions === 'string') throw new Error(regions);
          const region = regions.get(block.region);
          expect(region, where).toBeDefined();
          // Non-empty, and the shown lines are the file's own lines at their numbers.
          expect(
            block.lines.some((l) => l.text.trim() !== ''),
            where,
          ).toBe(true);
          const source = SOURCE_VIEWS[block.file]!.split('\n');
          for (const l of block.lines) expect(source[l.number - 1], where).toBe(l.text);
          expect(block.lines[0]!.number, where).toBeGreaterThan(region!.open);
          expect(block.lines.at(-1)!.number, where).toBeLessThan(region!.close);
        }
      }
      const html = lessonBlocks(lesson)
        .map((b) => (b.kind === 'markdown' ? b.html : ''))
        .join('');
      expect(html).toContain('References');
    },
  );

  it('every source-view file has well-formed regions, and each region is shown by a lesson', () => {
    const shown = new Set(
      LESSONS.flatMap(lessonBlocks).flatMap((b) =>
        b.kind === 'source' ? [`${b.file}#${b.region}`] : [],
      ),
    );
    const marked: string[] = [];
    for (const file of Object.keys(SOURCE_VIEWS)) {
      const regions = sourceRegions(file);
      if (typeof regions === 'string') throw new Error(regions);
      for (const name of regions.keys()) marked.push(`${file}#${name}`);
    }
    // A marker no lesson shows is clutter in the code, and a sign that a lesson lost its view.
    expect(marked.filter((key) => !shown.has(key))).toEqual([]);
    expect(marked.length).toBe(shown.size);
    // Every allow-listed file is shown somewhere, or it has no business in the allow-list.
    expect(
      Object.keys(SOURCE_VIEWS).filter((f) => !marked.some((k) => k.startsWith(`${f}#`))),
    ).toEqual([]);
  });

  it('every preset is a valid run spec', () => {
    for (const [name, p] of Object.entries(PRESETS)) {
      expect(checkRunSpec(buildPresetSpec(name as PresetName, defaultsOf(p.algo))), name).toEqual(
        [],
      );
    }
    expect(() =>
      buildPresetSpec('value-iteration-gridworld', defaultsOf('value-iteration'), { theta: 1 }, [
        'gamma',
      ]),
    ).toThrow('theta is locked in preset value-iteration-gridworld');
  });
});

/** Drives the preset's trainer until its check passes; returns updates and seconds taken. */
async function reachCheck(name: PresetName, check: string, budget: number) {
  const p: LessonPreset = PRESETS[name];
  const algo = ALGORITHMS[p.algo]!;
  if (algo.family !== 'env') throw new Error('env presets only');
  const spec = buildPresetSpec(name, algo.defaults);
  const trainer = algo.create(p.env as never, spec.config, spec.seed);
  const lesson = LESSONS.flatMap((l) => lessonWidgets(lessonBlocks(l))).find(
    (b) => b.preset === name && b.check.text === check,
  );
  if (!lesson || lesson.kind !== 'widget') throw new Error(`no widget ${name} with ${check}`);
  const series: Record<string, number[]> = {};
  const started = performance.now();
  for (let update = 1; update <= budget; update++) {
    const metrics = await trainer.update();
    for (const [key, value] of Object.entries(metrics)) (series[key] ??= []).push(value);
    const c = lesson.check;
    const passed =
      c.kind === 'metric'
        ? metricCheckPassed(c, series[c.metric] ?? [])
        : pathCheckPassed(c, trainer.inspect!() as Extract<Inspection, { kind: 'grid' }>);
    if (passed) return { update, seconds: (performance.now() - started) / 1000 };
  }
  return { update: Infinity, seconds: (performance.now() - started) / 1000 };
}

describe('presets reach their checks on CPU', () => {
  it.each([
    ['value-iteration-gridworld', 'values/converged>=1', 500],
    ['policy-iteration-4x3', 'policy/converged>=1', 20],
    ['q-learning-cliff', 'path<=13', 1000],
    ['sarsa-cliff', 'charts/episodic_return>=-40', 1000],
    ['reinforce-bandit-none', 'charts/optimal_action_rate>=0.8', 100],
    ['reinforce-bandit-mean', 'charts/optimal_action_rate>=0.8', 100],
    // Measured: update 21, about 6 s on the 2-core CPU.
    ['ppo-cartpole', 'charts/episodic_return>=150', 40],
  ] as const)(
    '%s reaches %s within %i updates',
    async (name, check, budget) => {
      const { update, seconds } = await reachCheck(name, check, budget);
      console.log(`${name}: ${check} after ${update} updates, ${seconds.toFixed(3)} s`);
      expect(update).toBeLessThanOrEqual(budget);
    },
    // PPO on CartPole trains a network: seconds, where the tabular presets take milliseconds.
    60_000,
  );
});

describe('the clip plot uses the real op', () => {
  // Worked by hand, ε = 0.2, c = 3: J = min(r·A, clip(r, 0.8, 1.2)·A), then for A < 0 max(J, c·A).
  it.each([
    [1.5, 1, null, 1.2, true, false], // A > 0, r > 1 + ε: clipped at 1.2·1
    [0.5, 1, null, 0.5, false, false], // A > 0, r < 1 − ε: min picks r·A = 0.5
    [0.5, -1, null, -0.8, true, false], // A < 0, r < 1 − ε: clipped at 0.8·(−1)
    [2, -1, null, -2, false, false], // A < 0, r > 1 + ε: unbounded r·A = −2
    [5, -1, 3, -3, false, true], // dual clip: max(−5, 3·(−1)) = −3
    [2, -1, 3, -2, false, false], // r < c: dual clip inactive
  ] as const)('r=%f A=%f c=%s → J=%f', (ratio, a, c, objective, clipped, dualHit) => {
    const point = clipPoint(ratio, a, { epsilon: 0.2, dualClip: c });
    expect(point.objective).toBeCloseTo(objective, 5);
    expect(point.clipped).toBe(clipped);
    expect(point.dualHit).toBe(dualHit);
  });
});

describe('routeTo', () => {
  it('follows prerequisites transitively, in reading order', () => {
    // 06-tool-use/01 needs 04-grpo/01, which needs 03-ppo/01, which needs 02-policy-gradient/01
    // (the ratio weighs an advantage: a return minus a baseline), which needs 01-mdp/01 (returns
    // and discount); Q-learning is off this route (the lessons' front matter).
    expect(routeTo(TOOL_USE_GOAL)!.map((l) => l.id)).toEqual([
      '01-mdp/01-value-iteration',
      '02-policy-gradient/01-reinforce-and-baselines',
      '03-ppo/01-clipped-objective',
      '04-grpo/01-group-relative-advantages',
      '06-tool-use/01-calls-and-masks',
    ]);
    // Two prerequisites whose routes overlap: each lesson once.
    const route = routeTo('04-grpo/06-ppo-vs-grpo')!.map((l) => l.id);
    expect(new Set(route).size).toBe(route.length);
    expect(route).toContain('03-ppo/03-ppo-on-tokens');
    expect(route).toContain('04-grpo/05-dynamic-sampling-and-clip-higher');
    expect(route).not.toContain('04-grpo/04-dpo-offline-contrast');
    expect(route.at(-1)).toBe('04-grpo/06-ppo-vs-grpo');
  });

  it('is the lesson alone when it needs nothing, and undefined for an unknown id', () => {
    expect(routeTo('01-mdp/01-value-iteration')!.map((l) => l.id)).toEqual([
      '01-mdp/01-value-iteration',
    ]);
    expect(routeTo('99-nope/01-x')).toBeUndefined();
  });
});
