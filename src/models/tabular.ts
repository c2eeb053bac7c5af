/**
 * Tabular softmax policy π(a|s) = softmax(θ[s])_a, the policy of the bandit, GridWorld and
 * FrozenLake lessons. One row of logits per state; REINFORCE on it is a few lines:
 *
 *   a = policy.sample(s, random);  …reward…;  policy.step(s, scaled(policy.gradLogProb(s, a)), lr)
 *
 * Everything is float64 on the CPU: tables are tiny, and exact numbers are easier to teach with.
 */
import { OpInputError } from '../ops/errors';
import { checkFinite, checkInt, checkLength, checkRange } from '../ops/validate';
import type { CheckpointTensor } from './checkpoint';

const OP = 'TabularSoftmaxPolicy';
/** Name of the logits tensor in checkpoints (model kind 'tabular'). */
export const TABULAR_LOGITS = 'logits';

export class TabularSoftmaxPolicy {
  readonly states: number;
  readonly actions: number;
  /** θ: (states, actions) row-major; row s holds the logits of state s. */
  readonly logits: Float64Array;

  /** θ starts at zeros (uniform policy) unless `init.logits` (copied) is given. */
  constructor(states: number, actions: number, init: { logits?: Float64Array } = {}) {
    checkInt(OP, 'states', states, 1, 2 ** 24);
    checkInt(OP, 'actions', actions, 1, 2 ** 16);
    this.states = states;
    this.actions = actions;
    this.logits = new Float64Array(states * actions);
    if (init.logits !== undefined) {
      checkLength(OP, 'logits', init.logits, states * actions, 'states × actions');
      checkFinite(OP, 'logits', init.logits, actions);
      this.logits.set(init.logits);
    }
  }

  /** π(·|s) = softmax(θ[s]), shifted by the row max so no exp overflows. (actions) */
  probs(state: number): Float64Array {
    const row = this.row(state);
    const max = rowMax(row);
    const out = new Float64Array(this.actions);
    let sum = 0;
    for (let a = 0; a < this.actions; a++) {
      out[a] = Math.exp(row[a]! - max);
      sum += out[a]!;
    }
    for (let a = 0; a < this.actions; a++) out[a]! /= sum;
    return out;
  }

  /**
   * Draws an action by inverse CDF: the first a with u < π(0|s) + … + π(a|s), u = random().
   * `random` must return uniforms in [0, 1) (seededRandom from src/util/random.ts).
   */
  sample(state: number, random: () => number): number {
    const p = this.probs(state);
    const u = random();
    checkRange(OP, 'random()', u, 0, 1, { highOpen: true });
    let cumulative = 0;
    let last = 0;
    for (let a = 0; a < this.actions; a++) {
      if (p[a]! === 0) continue; // an action of probability 0 is never drawn
      cumulative += p[a]!;
      last = a;
      if (u < cumulative) return a;
    }
    // Rounding can leave the total a hair under 1; u landed in that gap.
    return last;
  }

  /** log π(a|s) = θ[s,a] − log Σ_b exp θ[s,b], computed with the max shift. */
  logProb(state: number, action: number): number {
    const row = this.row(state);
    this.checkAction(action);
    const max = rowMax(row);
    let sum = 0;
    for (let b = 0; b < this.actions; b++) sum += Math.exp(row[b]! - max);
    return row[action]! - max - Math.log(sum);
  }

  /** ∇_θ[s] log π(a|s) = onehot(a) − π(·|s); other rows 0. (actions) */
  gradLogProb(state: number, action: number): Float64Array {
    const grad = this.probs(state);
    this.checkAction(action);
    for (let b = 0; b < this.actions; b++) grad[b] = -grad[b]!;
    grad[action]! += 1;
    return grad;
  }

  /**
   * θ[s] += lr · direction (a gradient ascent step on one row). A direction or result that is
   * not finite throws OpInputError and leaves θ untouched.
   */
  step(state: number, direction: Float64Array, lr: number): void {
    const row = this.row(state);
    checkLength(OP, 'direction', direction, this.actions, 'actions');
    checkFinite(OP, 'direction', direction);
    checkRange(OP, 'lr', lr, -Infinity, Infinity);
    const next = new Float64Array(this.actions);
    for (let a = 0; a < this.actions; a++) next[a] = row[a]! + lr * direction[a]!;
    for (let a = 0; a < this.actions; a++) {
      if (!Number.isFinite(next[a]!)) {
        throw new OpInputError(
          OP,
          'step',
          `would make θ[${state}, ${a}] = ${row[a]} + ${lr} · ${direction[a]} non-finite ` +
            `(${next[a]}); θ is unchanged`,
        );
      }
    }
    row.set(next);
  }

  /** H(π(·|s)) = −Σ_a π log π = log Σ exp(θ − m) − Σ_a π (θ_a − m), m = max θ[s]; in nats. */
  entropy(state: number): number {
    const row = this.row(state);
    const max = rowMax(row);
    const e = new Float64Array(this.actions); // exp(θ[s] − m)
    let sum = 0;
    for (let a = 0; a < this.actions; a++) {
      e[a] = Math.exp(row[a]! - max);
      sum += e[a]!;
    }
    let mean = 0; // Σ_a π_a (θ_a − m); a term with π_a = 0 adds 0 (the limit of p log p)
    for (let a = 0; a < this.actions; a++) mean += (e[a]! / sum) * (row[a]! - max);
    return Math.log(sum) - mean;
  }

  /** θ as one float32 tensor 'logits' of shape [states, actions] (float64 → float32 rounds). */
  toTensors(): CheckpointTensor[] {
    return [
      {
        name: TABULAR_LOGITS,
        shape: [this.states, this.actions],
        data: Float32Array.from(this.logits),
      },
    ];
  }

  /** Rebuilds a policy from toTensors() output (e.g. a decoded checkpoint's tensors). */
  static fromTensors(tensors: readonly CheckpointTensor[]): TabularSoftmaxPolicy {
    const names = tensors.map((t) => JSON.stringify(t.name)).join(', ');
    const t = tensors[0];
    if (tensors.length !== 1 || t?.name !== TABULAR_LOGITS) {
      throw new OpInputError(
        OP,
        'tensors',
        `must be exactly one tensor named '${TABULAR_LOGITS}', got [${names}]`,
      );
    }
    const [states, actions] = t.shape;
    if (t.shape.length !== 2 || states === undefined || actions === undefined) {
      throw new OpInputError(
        OP,
        'tensors',
        `'${TABULAR_LOGITS}' must have shape [states, actions], got [${t.shape.join(', ')}]`,
      );
    }
    checkInt(OP, 'states', states, 1, 2 ** 24);
    checkInt(OP, 'actions', actions, 1, 2 ** 16);
    checkLength(OP, 'logits', t.data, states * actions, 'states × actions');
    return new TabularSoftmaxPolicy(states, actions, { logits: Float64Array.from(t.data) });
  }

  /** θ[s] as a view (actions), after checking s. */
  private row(state: number): Float64Array {
    checkInt(OP, 'state', state, 0, this.states - 1);
    return this.logits.subarray(state * this.actions, (state + 1) * this.actions);
  }

  private checkAction(action: number): void {
    checkInt(OP, 'action', action, 0, this.actions - 1);
  }
}

function rowMax(row: Float64Array): number {
  let max = -Infinity;
  for (let a = 0; a < row.length; a++) max = Math.max(max, row[a]!);
  return max;
}
