/**
 * Policy iteration (Sutton & Barto §4.3) over a TabularModel. Each update is one round:
 *
 * 1. Evaluation — synchronous sweeps V(s) ← Σ_{s'} p(s'|s,π(s)) · [ r + γ · V(s') ] until a sweep
 *    changes no value by θ or more, or `maxEvalSweeps` sweeps ran (warm-started from the last V).
 * 2. Improvement — π(s) ← argmax_a Q(s, a); a state switches only when the new action is better
 *    than its current one beyond rounding, so equally good actions do not flip back and forth.
 *
 * The reward r includes the live `livingReward` on steps that do not end the episode
 * (living-reward.ts), so the world's rewards can change while the planner runs.
 *
 * The policy starts as action 0 everywhere. It is stable (converged) when an improvement changes
 * no state; later updates evaluate and check again, which costs one sweep, and pick up edits of
 * the world (the lab repaints a GridWorld while the planner runs).
 *
 * Metrics (one update = evaluation + improvement):
 *   policy/changed_states   states whose action the improvement changed
 *   policy/converged        1 when no state changed (the policy is stable), else 0
 *   values/eval_sweeps      evaluation sweeps this update ran
 *   values/max_delta        Δ of the last evaluation sweep (≥ θ when the sweep cap stopped it)
 *   values/mean             mean of V^π over all states
 */
import type { TabularModel } from '../envs/types';
import { checkConfig, checkPartial, type ConfigSpec } from '../util/hyperparams';
import { LIVING_REWARD_FIELD, withLivingReward } from './living-reward';
import { RunControl, type Metrics } from './trainer';
import { actionValue, argmaxWithTies, qTable, type PlanningTrainer } from './value-iteration';

export interface PolicyIterationConfig {
  /** Discount γ in [0, 1] (Sutton & Barto γ; CleanRL/verl: gamma). */
  gamma: number;
  /** Evaluation threshold θ > 0: evaluation stops once a sweep changes every value by < θ. */
  theta: number;
  /** Most evaluation sweeps per update, an integer in [1, 1e6] (caps γ = 1 loops that never end). */
  maxEvalSweeps: number;
  /** Added to the reward of every step that does not end the episode (living-reward.ts). */
  livingReward: number;
}

export const DEFAULT_POLICY_ITERATION_CONFIG: PolicyIterationConfig = {
  gamma: 0.99,
  theta: 1e-8,
  maxEvalSweeps: 10_000,
  livingReward: 0,
};

export const POLICY_ITERATION_CONFIG_SPEC: ConfigSpec<PolicyIterationConfig> = {
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
    doc: 'evaluation threshold θ: evaluation stops once a sweep changes every value by less than θ',
    framework: 'Sutton & Barto: θ',
    live: true,
  },
  maxEvalSweeps: {
    kind: 'int',
    min: 1,
    max: 1e6,
    doc: 'most evaluation sweeps per update (1 gives value-iteration-like rounds)',
    live: true,
  },
  livingReward: LIVING_REWARD_FIELD,
};

const SCOPE = 'policy-iteration';

/**
 * @param model the MDP to plan in
 * @param _seed accepted for the factories' common shape; planning draws no random numbers
 */
export function createPolicyIteration(
  model: TabularModel,
  config: Partial<PolicyIterationConfig> = {},
  _seed = 0,
): PlanningTrainer<PolicyIterationConfig> {
  const initial = { ...DEFAULT_POLICY_ITERATION_CONFIG, ...config };
  checkConfig(SCOPE, POLICY_ITERATION_CONFIG_SPEC, initial);
  const control = new RunControl(initial);
  const { states, actions } = model;

  let values = new Float64Array(states); // V^π: (states), starts at 0
  const policy = new Int32Array(states); // π: (states), starts at action 0

  return control.expose({
    algorithm: SCOPE,
    setHyperparams(partial) {
      checkPartial(SCOPE, POLICY_ITERATION_CONFIG_SPEC, partial, { liveOnly: true });
      control.queue(partial);
    },

    async update(): Promise<Metrics> {
      const { gamma, theta, maxEvalSweeps, livingReward } = control.beginUpdate();
      const world = withLivingReward(model, livingReward);

      // #region evaluate-improve
      // 1. Policy evaluation: synchronous sweeps of the Bellman expectation backup for π.
      let sweeps = 0;
      let delta = Infinity;
      while (delta >= theta && sweeps < maxEvalSweeps) {
        const next = new Float64Array(states);
        delta = 0;
        for (let s = 0; s < states; s++) {
          if (!world.isTerminal(s)) next[s] = actionValue(world, values, gamma, s, policy[s]!);
          delta = Math.max(delta, Math.abs(next[s]! - values[s]!));
        }
        values = next;
        sweeps += 1;
      }

      // 2. Policy improvement: greedy in Q^π, keeping the current action unless beaten.
      const q = new Float64Array(actions);
      let changed = 0;
      for (let s = 0; s < states; s++) {
        if (model.isTerminal(s)) continue;
        for (let a = 0; a < actions; a++) q[a] = actionValue(world, values, gamma, s, a);
        const best = argmaxWithTies(q);
        const current = policy[s]!;
        const margin = 1e-9 * Math.max(1, Math.abs(q[current]!));
        if (q[best]! > q[current]! + margin) {
          policy[s] = best;
          changed += 1;
        }
      }
      // #endregion evaluate-improve

      control.endUpdate();
      return {
        'policy/changed_states': changed,
        'policy/converged': changed === 0 ? 1 : 0,
        'values/eval_sweeps': sweeps,
        'values/max_delta': delta,
        'values/mean': values.reduce((sum, v) => sum + v, 0) / states,
      };
    },

    values: () => values.slice(),
    policy: () => policy.slice(),
    qValues: () =>
      qTable(withLivingReward(model, control.config.livingReward), values, control.config.gamma),
  });
}
