/**
 * The lessons' stated minutes against the reading-time estimate (src/lessons/reading-time.ts):
 * the estimator counts what is on a page, every lesson states a figure close to its estimate, and
 * the route to a trained tool-using agent, as the Lessons page shows it, fits in an hour.
 */
import { describe, expect, it } from 'vitest';
import { LESSONS, routeTo, TOOL_USE_GOAL } from '../../src/lessons/catalog';
import {
  countWords,
  describeEstimate,
  estimateReading,
  READING_RATES,
} from '../../src/lessons/reading-time';

/** How far a stated figure may sit from the estimate before the lesson must be updated. */
const TOLERANCE_MINUTES = 2;

describe('estimateReading', () => {
  it('counts prose words, display equations and each kind of directive', () => {
    const body = [
      '## Returns',
      '',
      'The return $G_t$ adds the rewards that follow, discounted by $\\gamma$.',
      '',
      '$$G_t = \\sum_k \\gamma^k r_{t+k+1}$$',
      '',
      '$$',
      'V(s) = \\max_a Q(s, a)',
      '$$',
      '',
      'See [the paper](https://arxiv.org/abs/1707.06347) for more.',
      '::predict{question="Lower gamma?" answer="Values fall, paths stay."}',
      '::widget{preset="value-iteration-gridworld" check="values/converged>=1"}',
      '::source{file="src/ops/gae.ts" region="recursion"}',
      '::clip-plot',
      '::gae-plot',
    ].join('\n');
    const e = estimateReading('/lessons/x/y/index.md', body);
    // 'Returns' 1; the sentence: The return [math] adds the rewards that follow, discounted by
    // [math]. = 11; 'See the paper for more.' = 5 (the address is not read); the prediction's
    // question 2 and answer 4.
    expect(e.words).toBe(1 + 11 + 5 + 2 + 4);
    expect(e).toMatchObject({ equations: 2, predicts: 1, widgets: 1, sources: 1, plots: 2 });
    const r = READING_RATES;
    expect(e.minutes).toBeCloseTo(
      23 / r.wordsPerMinute + 2 * r.displayEquation + r.predict + r.widget + r.source + 2 * r.plot,
      10,
    );
  });

  it('reads a directive line inside a code fence as code, not as a directive', () => {
    const body = ['```text', '::widget{preset="nope"}', '```', 'After the fence.'].join('\n');
    const e = estimateReading('/lessons/x/y/index.md', body);
    expect(e.widgets).toBe(0);
    expect(e.words).toBe(2 + 3); // 'text' and '::widget{preset="nope"}' are tokens; then 3 words
  });

  it('names the file and line of a malformed directive and of an unclosed fence', () => {
    expect(() =>
      estimateReading('/lessons/x/y/index.md', 'one\n::predict{question="q"}', 10),
    ).toThrow(/index\.md:11/);
    expect(() => estimateReading('/lessons/x/y/index.md', 'a\n~~~\nb', 5)).toThrow(
      /index\.md:7.*code fence ~~~ is not closed/,
    );
  });

  it('counts tokens with a letter or digit as words, in any script', () => {
    expect(countWords('  γ — is 0.9, très   bien  ')).toBe(5);
    expect(countWords('— … ·')).toBe(0);
  });
});

describe("the lessons' stated minutes", () => {
  const estimates = LESSONS.map((lesson) => ({
    lesson,
    estimate: estimateReading(lesson.file, lesson.body, lesson.bodyLine),
  }));

  it.each(estimates.map((e) => [e.lesson.id, e] as const))(
    '%s states minutes within 2 of its estimate',
    (_id, { lesson, estimate }) => {
      const gap = Math.abs(lesson.minutes - estimate.minutes);
      const why =
        `${lesson.file} states ${lesson.minutes} minutes; its page estimates ` +
        `${estimate.minutes.toFixed(1)} (${estimate.words} words, ${estimate.equations} equations, ` +
        `${estimate.predicts} predictions, ${estimate.sources} source views, ${estimate.plots} plots, ` +
        `${estimate.widgets} widgets): set minutes to ${Math.round(estimate.minutes)}`;
      expect(gap, why).toBeLessThanOrEqual(TOLERANCE_MINUTES);
    },
  );

  it('puts the route to a trained tool-using agent under an hour, by statement and estimate', () => {
    const route = routeTo(TOOL_USE_GOAL) ?? [];
    expect(route.map((lesson) => lesson.id)).toEqual([
      '01-mdp/01-value-iteration',
      '02-policy-gradient/01-reinforce-and-baselines',
      '03-ppo/01-clipped-objective',
      '04-grpo/01-group-relative-advantages',
      '06-tool-use/01-calls-and-masks',
    ]);
    const stated = route.reduce((sum, lesson) => sum + lesson.minutes, 0);
    const estimated = estimates
      .filter((e) => route.includes(e.lesson))
      .reduce((sum, e) => sum + e.estimate.minutes, 0);
    expect(stated).toBeLessThan(60);
    expect(estimated).toBeLessThan(60);
  });
});

describe('describeEstimate', () => {
  it('lists what was counted, singular or plural, leaving out what the page lacks', () => {
    const e = {
      words: 1234,
      equations: 1,
      predicts: 2,
      sources: 1,
      plots: 1,
      widgets: 3,
      minutes: 0,
    };
    expect(describeEstimate(e)).toBe(
      '1,234 words, 1 equation, 2 predictions, 1 source view, 1 interactive plot, 3 runs',
    );
  });
});
