/**
 * The living reward r(s) of Russell & Norvig's 4×3 world (AIMA §17.1): a reward added to every
 * step that does not end the episode. A small negative one makes the agent hurry, a large negative
 * one makes ending the episode anyhow (even in a −1 pit) better than living, and a positive one
 * makes it avoid every exit. The planners take it as a live setting, so a reader can change the
 * world's rewards while the planner runs and watch the greedy policy re-form.
 */
import type { TabularModel, Transition } from '../envs/types';

/**
 * `model` with `living` added to the reward of each transition whose next state is not terminal,
 * from a state the agent can be in (a wall's self-loop keeps reward 0, so its value stays 0 and
 * γ = 1 planning still converges). The model itself is not changed; with `living` = 0 it is
 * returned as it is. Build a fresh view after an edit of the model: the view keeps what it read.
 */
export function withLivingReward(model: TabularModel, living: number): TabularModel {
  if (living === 0) return model;
  const canOccupy = (state: number) => model.canOccupy?.(state) ?? true;
  const shifted = (state: number, action: number): readonly Transition[] => {
    const outcomes = model.transitions(state, action);
    if (!canOccupy(state)) return outcomes;
    return outcomes.map((t) => (t.terminal ? t : { ...t, reward: t.reward + living }));
  };
  // The planners build this view once per update and sweep it many times (policy evaluation runs
  // up to maxEvalSweeps sweeps): each (state, action) is shifted once, as the model caches its own.
  const cache: (readonly Transition[] | undefined)[] = [];
  return {
    states: model.states,
    actions: model.actions,
    isTerminal: (state) => model.isTerminal(state),
    canOccupy,
    transitions: (state, action) =>
      (cache[state * model.actions + action] ??= shifted(state, action)),
  };
}

/** The planners' `livingReward` field (value iteration, policy iteration). */
export const LIVING_REWARD_FIELD = {
  kind: 'number',
  min: -5,
  max: 5,
  doc: 'living reward r(s): added to the reward of every step that does not end the episode (0 leaves the world as built)',
  framework: 'Russell & Norvig (AIMA §17.1): R(s), the reward of a non-terminal state',
  live: true,
} as const;
