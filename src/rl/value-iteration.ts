/**
 * Value iteration (Sutton & Barto §4.4) over a TabularModel: each update is one synchronous sweep
 *
 *   V_{k+1}(s) = max_a Σ_{s'} p(s'|s,a) · [ r + γ · V_k(s') ]      (V = 0 beyond a terminal step)
 *
 * over every state, from V_k into a fresh table; r includes the live `livingReward` on steps that
 * do not end the episode (living-reward.ts). After each sweep the greedy policy
 * π(s) = argmax_a Q(s, a) is read off V (ties: the lowest action index, up to rounding).
 *
 * Stopping: once a sweep moves no value by θ or more (Δ < θ) the run has converged and V stops
 * changing. Each later update still computes a sweep, to notice an edited world (the lab repaints
 * a GridWorld while the planner runs): a sweep whose Δ ≥ θ again is kept and planning resumes.
 *
 * Metrics (one update = one sweep):
 *   values/max_delta        Δ = max_s |V_{k+1}(s) − V_k(s)| of this sweep
 *   values/mean             mean of V over all states after the update
 *   policy/changed_states   states whose greedy action changed in this update
 *   values/converged        1 once Δ < θ (V no longer changes), else 0
 */
import type { TabularModel } from '../envs/types';
import { checkConfig, checkPartial, type ConfigSpec } from '../util/hyperparams';
import { LIVING_REWARD_FIELD, withLivingReward } from './living-reward';
import { RunControl, type Metrics, type Trainer } from './trainer';

export interface ValueIterationConfig {
  /** Discount γ in [0, 1] (Sutton & Barto γ; CleanRL/verl: gamma). γ = 1 needs a reachable end. */
  gamma: number;
  /** Convergence threshold θ > 0: stop once a sweep changes no value by θ or more. */
  theta: number;
  /** Added to the reward of every step that does not end the episode (living-reward.ts). */
  livingReward: number;
}

export const DEFAULT_VALUE_ITERATION_CONFIG: ValueIterationConfig = {
  gamma: 0.99,
  theta: 1e-8,
  livingReward: 0,
};

export const VALUE_ITERATION_CONFIG_SPEC: ConfigSpec<ValueIterationConfig> = {
  gamma: {
    kind: 'number',
    min: 0,
    max: 1,
    doc: 'discount factor γ: weight of the next state’s value',
    framework: 'Sutton & Barto: γ; CleanRL, verl: gamma',
    live: true,
  },
  theta: {
    kind: 'number',
    min: 0,
    max: 1e6,
    minOpen: true,
    doc: 'convergence threshold θ: converged once a sweep changes every value by less than θ',
    framework: 'Sutton & Barto: θ',
    live: true,
  },
  livingReward: LIVING_REWARD_FIELD,
};

/** A planner's tables, for the lab's inspectors. */
export interface PlanningTrainer<C> extends Trainer<C> {
  /** V (states), a copy. */
  values(): Float64Array;
  /** Greedy action per state (states), a copy. */
  policy(): Int32Array;
  /** Q(s, a) = Σ p · (r + γ V(s')) from the current V: (states, actions) row-major. */
  qValues(): Float64Array;
}

const SCOPE = 'value-iteration';

/**
 * @param model the MDP to plan in (a GridWorld, FrozenLake, CliffWalking or any TabularModel)
 * @param _seed accepted for the factories' common shape; planning draws no random numbers
 */
export function createValueIteration(
  model: TabularModel,
  config: Partial<ValueIterationConfig> = {},
  _seed = 0,
): PlanningTrainer<ValueIterationConfig> {
  const initial = { ...DEFAULT_VALUE_ITERATION_CONFIG, ...config };
  checkConfig(SCOPE, VALUE_ITERATION_CONFIG_SPEC, initial);
  const control = new RunControl(initial);
  const { states, actions } = model;

  let values = new Float64Array(states); // V: (states), starts at 0
  const policy = new Int32Array(states); // greedy π: (states)
  let converged = false;

  return control.expose({
    algorithm: SCOPE,
    setHyperparams(partial) {
      checkPartial(SCOPE, VALUE_ITERATION_CONFIG_SPEC, partial, { liveOnly: true });
      control.queue(partial);
    },

    async update(): Promise<Metrics> {
      const before = control.config;
      const { gamma, theta, livingReward } = control.beginUpdate();
      // A new γ, θ or living reward changes the fixed point or the stopping rule: plan again.
      if (
        before.gamma !== gamma ||
        before.theta !== theta ||
        before.livingReward !== livingReward
      ) {
        converged = false;
      }
      const world = withLivingReward(model, livingReward);

      // #region sweep
      // One synchronous sweep: every backup reads V_k, writes V_{k+1}.
      const next = new Float64Array(states);
      let delta = 0;
      for (let s = 0; s < states; s++) {
        if (!model.isTerminal(s)) {
          let best = -Infinity;
          for (let a = 0; a < actions; a++) {
            best = Math.max(best, actionValue(world, values, gamma, s, a));
          }
          next[s] = best;
        }
        delta = Math.max(delta, Math.abs(next[s]! - values[s]!));
      }

      // Converged and still within θ: keep V as it is (it "stops changing").
      if (!(converged && delta < theta)) values = next;
      // #endregion sweep
      converged = delta < theta;

      const changed = greedyPolicy(world, values, gamma, policy);
      control.endUpdate();
      return {
        'values/max_delta': delta,
        'values/mean': mean(values),
        'policy/changed_states': changed,
        'values/converged': converged ? 1 : 0,
      };
    },

    values: () => values.slice(),
    policy: () => policy.slice(),
    qValues: () =>
      qTable(withLivingReward(model, control.config.livingReward), values, control.config.gamma),
  });
}

/**
 * The one-step lookahead Q(s, a) = Σ_{s'} p · (r + γ · V(s')), with no bootstrap past a terminal
 * step. Shared with policy iteration.
 */
export function actionValue(
  model: TabularModel,
  values: Float64Array,
  gamma: number,
  state: number,
  action: number,
): number {
  let q = 0;
  for (const t of model.transitions(state, action)) {
    q += t.probability * (t.reward + (t.terminal ? 0 : gamma * values[t.next]!));
  }
  return q;
}

/** Q for every (state, action) from V: (states, actions) row-major; terminal rows are 0. */
export function qTable(model: TabularModel, values: Float64Array, gamma: number): Float64Array {
  const q = new Float64Array(model.states * model.actions);
  for (let s = 0; s < model.states; s++) {
    if (model.isTerminal(s)) continue;
    for (let a = 0; a < model.actions; a++) {
      q[s * model.actions + a] = actionValue(model, values, gamma, s, a);
    }
  }
  return q;
}

/**
 * The first action whose value is within rounding of the best. A relative tolerance keeps ties
 * that differ only in the last bits (0.1 + 0.2 vs 0.3) from picking different actions in
 * different planners.
 */
export function argmaxWithTies(row: ArrayLike<number>): number {
  let best = -Infinity;
  for (let a = 0; a < row.length; a++) best = Math.max(best, row[a]!);
  const tolerance = 1e-9 * Math.max(1, Math.abs(best));
  for (let a = 0; a < row.length; a++) if (row[a]! >= best - tolerance) return a;
  return 0;
}

/** Writes the greedy policy of V into `policy` (terminal states: 0); returns how many changed. */
function greedyPolicy(
  model: TabularModel,
  values: Float64Array,
  gamma: number,
  policy: Int32Array,
): number {
  const q = new Float64Array(model.actions);
  let changed = 0;
  for (let s = 0; s < model.states; s++) {
    let action = 0;
    if (!model.isTerminal(s)) {
      for (let a = 0; a < model.actions; a++) q[a] = actionValue(model, values, gamma, s, a);
      action = argmaxWithTies(q);
    }
    if (policy[s] !== action) changed += 1;
    policy[s] = action;
  }
  return changed;
}

function mean(values: Float64Array): number {
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}
