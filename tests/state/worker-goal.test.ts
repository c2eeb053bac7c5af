import { describe, expect, it } from 'vitest';
import { parseCheck, type Check } from '../../src/lessons/checks';
import { workerGoal, type LessonGoal } from '../../src/state/lesson-goal';

const metric = parseCheck('values/converged>=1') as Check;
const path = parseCheck('path<=13') as Check;
const series = { 'values/converged': { x: [1, 2, 3], y: [0, 0, 1] } };

describe('the goal a lesson run hands its worker at start', () => {
  it('a metric check not yet passed, with the values so far, and a budget ahead', () => {
    const goal: LessonGoal = { check: metric, budget: 40 };
    expect(workerGoal(goal, { steps: 3, checkPassedAt: undefined, series })).toEqual({
      check: metric,
      history: [0, 0, 1],
      budget: 40,
    });
  });

  it('no values yet: an empty history', () => {
    const goal: LessonGoal = { check: metric };
    expect(workerGoal(goal, { steps: 0, checkPassedAt: undefined, series: {} })).toEqual({
      check: metric,
      history: [],
    });
  });

  it('leaves out a check that passed and a budget already spent: the run trains on', () => {
    const goal: LessonGoal = { check: metric, budget: 40 };
    expect(workerGoal(goal, { steps: 3, checkPassedAt: 2, series })).toEqual({ budget: 40 });
    expect(workerGoal(goal, { steps: 40, checkPassedAt: 2, series })).toBeUndefined();
    expect(workerGoal(goal, { steps: 41, checkPassedAt: undefined, series })).toEqual({
      check: metric,
      history: [0, 0, 1],
    });
  });

  it('a path check stays with the page (it reads the grid); no goal, nothing', () => {
    expect(workerGoal({ check: path }, { steps: 0, checkPassedAt: undefined, series })).toBe(
      undefined,
    );
    expect(
      workerGoal({ check: path, budget: 9 }, { steps: 0, checkPassedAt: undefined, series }),
    ).toEqual({ budget: 9 });
    expect(workerGoal(undefined, { steps: 0, checkPassedAt: undefined, series })).toBeUndefined();
  });

  it('hands over copies: the run series growing later does not change the goal sent', () => {
    const own = { 'values/converged': { x: [1], y: [0] } };
    const sent = workerGoal({ check: metric }, { steps: 1, checkPassedAt: undefined, series: own });
    own['values/converged'].y.push(1);
    expect(sent?.history).toEqual([0]);
  });
});
