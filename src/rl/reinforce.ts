/**
 * REINFORCE (Williams 1992; Sutton & Barto 2nd ed. §13.3–13.4) with a tabular softmax policy
 * π(a|s) = softmax(θ[s]), for bandits and small tabular environments (any Env<number, number>
 * whose observation and action spaces are discrete).
 *
 * One update, top to bottom:
 *   1. roll out N = batchEpisodes episodes with the current policy;
 *   2. returns-to-go G_t = Σ_{k≥t} γ^{k−t} r_k for every step of every episode;
 *   3. advantages A_t = G_t − b(s_t), with the baseline chosen by `baseline`:
 *        'none'   b = 0;
 *        'mean'   b = the batch mean of all returns-to-go G_t (all states pooled; for a bandit, the
 *                 mean reward of the batch). The mean includes the episode's own return, which
 *                 shrinks the expected gradient by a factor (1 − 1/N) — the direction is unchanged;
 *        'value'  b = V(s_t), a tabular state-value baseline trained by Monte Carlo:
 *                 V(s) ← V(s) + valueLr · mean over the batch's visits of s of (G_t − V(s));
 *   4. per-episode gradient estimates g_i = Σ_t A_t ∇_θ log π(a_t|s_t) and their mean ḡ;
 *   5. θ ← θ + lr · (ḡ + entropyCoef · (1/N) Σ_i Σ_t ∇_θ H(π(·|s_t))).
 * Practice drops the γ^t factor of the textbook update (S&B eq. 13.8); so do we, as CleanRL and
 * verl do. Per-episode sums averaged over the batch are verl's loss_agg_mode "seq-mean-token-sum".
 *
 * Metrics (all computed with the policy BEFORE this update's step):
 *   charts/episodic_return     mean undiscounted return Σ_t r_t of the batch's episodes
 *   charts/episodic_length     mean episode length in steps
 *   charts/env_steps           environment steps taken since the trainer was created
 *   actor/pg_loss              −(1/N) Σ_i Σ_t A_t log π(a_t|s_t) (entropy term not included)
 *   actor/entropy              mean of H(π(·|s_t)) in nats over every step of the batch
 *   actor/grad_variance        Σ_params sample variance of the per-episode estimates g_i:
 *                              (1/(N−1)) Σ_i ‖g_i − ḡ‖² (two passes; 0 when N = 1). The quantity
 *                              a baseline lowers; the entropy term is left out of it.
 *   actor/grad_norm            ‖direction‖₂ of the step actually taken (ḡ plus the entropy term)
 *   actor/lr                   the policy step size in force
 *   critic/vf_loss             ½ · mean over steps of (G_t − V(s_t))² ('value' baseline only)
 * For environments whose step info reports `regret` and `optimal` (the bandits):
 *   charts/regret              mean per-episode expected regret Σ_t (max_b q*(b) − q*(a_t))
 *   charts/cumulative_regret   total expected regret since the trainer was created
 *   charts/optimal_action_rate fraction of the batch's actions that were optimal (S&B Fig. 2.2)
 */
import type { Env } from '../envs/types';
import { TabularSoftmaxPolicy } from '../models/tabular';
import { OpInputError } from '../ops/errors';
import { checkInt, checkRange } from '../ops/validate';
import { fmix32 } from '../util/counter-rng';
import { seededRandom } from '../util/random';
import { checkConfig, checkPartial, type ConfigSpec } from '../util/hyperparams';
import { RunControl, type Metrics, type RunEvent, type Trainer } from './trainer';

const ALGORITHM = 'reinforce';

export type ReinforceBaseline = 'none' | 'mean' | 'value';

export interface ReinforceConfig {
  /** Episodes per update N, an integer in [1, 100000]. */
  batchEpisodes: number;
  /** Discount γ of the returns-to-go, in [0, 1]. */
  gamma: number;
  /** Policy step size (gradient ascent on θ), in (0, 1000]. */
  lr: number;
  /** What is subtracted from G_t: 'none' | 'mean' (batch mean) | 'value' (learned V(s)). */
  baseline: ReinforceBaseline;
  /** Step size of the 'value' baseline's V(s) towards the batch's returns, in (0, 1]. */
  valueLr: number;
  /** Weight of the entropy bonus, in [0, 100]. 0 turns it off. */
  entropyCoef: number;
  /** Steps after which an episode is cut (no bootstrap), an integer in [1, 10⁶]. */
  maxEpisodeSteps: number;
}

export const DEFAULT_REINFORCE_CONFIG: ReinforceConfig = {
  batchEpisodes: 16,
  gamma: 0.99,
  lr: 0.1,
  baseline: 'mean',
  valueLr: 0.1,
  entropyCoef: 0,
  maxEpisodeSteps: 1000,
};

export const REINFORCE_CONFIG_SPEC: ConfigSpec<ReinforceConfig> = {
  batchEpisodes: {
    kind: 'int',
    min: 1,
    max: 100000,
    live: true,
    doc: 'episodes collected per update; the policy-gradient estimate averages over them',
    framework: 'verl: data.train_batch_size; CleanRL: num_envs × num_steps (in steps)',
  },
  gamma: {
    kind: 'number',
    min: 0,
    max: 1,
    live: true,
    doc: 'discount factor of the returns-to-go',
    framework: 'verl: algorithm.gamma; CleanRL: gamma',
  },
  lr: {
    kind: 'number',
    min: 0,
    max: 1000,
    minOpen: true,
    live: true,
    doc: 'policy step size: θ ← θ + lr · (policy gradient estimate)',
    framework: 'verl: actor_rollout_ref.actor.optim.lr; TRL: learning_rate',
  },
  baseline: {
    kind: 'choice',
    options: ['none', 'mean', 'value'],
    live: true,
    doc: 'subtracted from the return: none, the batch mean return, or a learned V(s)',
  },
  valueLr: {
    kind: 'number',
    min: 0,
    max: 1,
    minOpen: true,
    live: true,
    doc: "step size of the 'value' baseline: V(s) moves this fraction towards the batch mean return from s",
    framework: 'verl: critic.optim.lr',
  },
  entropyCoef: {
    kind: 'number',
    min: 0,
    max: 100,
    live: true,
    doc: 'weight of the entropy bonus added to the objective (0 = off)',
    framework: 'verl: actor_rollout_ref.actor.entropy_coeff; CleanRL: ent_coef',
  },
  maxEpisodeSteps: {
    kind: 'int',
    min: 1,
    max: 1e6,
    live: false,
    doc: 'an episode still running after this many steps is cut (no bootstrap)',
    framework: 'gymnasium: max_episode_steps',
  },
};

/** One collected episode: s_t, a_t, r_t for t = 0 … T−1. */
export interface Episode {
  states: number[];
  actions: number[];
  rewards: number[];
}

export interface ReinforceTrainer extends Trainer<ReinforceConfig> {
  /** π: the policy being trained (θ changes in place at every update). */
  readonly policy: TabularSoftmaxPolicy;
  /** V(s) of the 'value' baseline (states); it trains only while baseline = 'value'. */
  readonly values: Float64Array;
  /** The episodes of the last update, for inspectors and tests. */
  readonly lastBatch: readonly Episode[];
}

/** Returns-to-go G_t = r_t + γ G_{t+1}, G_T = 0 (accumulated backwards in float64). */
export function discountedReturns(rewards: ArrayLike<number>, gamma: number): Float64Array {
  checkRange(ALGORITHM, 'gamma', gamma, 0, 1);
  const out = new Float64Array(rewards.length);
  let g = 0;
  for (let t = rewards.length - 1; t >= 0; t--) {
    g = rewards[t]! + gamma * g;
    out[t] = g;
  }
  return out;
}

/**
 * A REINFORCE trainer on `env` (discrete observations and actions) with a uniform initial policy.
 * `seed` (an integer in [0, 2³² − 1]) seeds the env (first reset) and, hashed, the action draws.
 */
export function createReinforce(
  env: Env<number, number>,
  config: ReinforceConfig = DEFAULT_REINFORCE_CONFIG,
  seed = 0,
): ReinforceTrainer {
  return new Reinforce(env, config, seed);
}

class Reinforce implements ReinforceTrainer {
  readonly algorithm = ALGORITHM;
  readonly policy: TabularSoftmaxPolicy;
  readonly values: Float64Array;
  lastBatch: Episode[] = [];
  private readonly control: RunControl<ReinforceConfig>;
  private readonly random: () => number;
  private envSeed: number | undefined;
  private envSteps = 0;
  private cumulativeRegret = 0;

  constructor(
    private readonly env: Env<number, number>,
    config: ReinforceConfig,
    seed: number,
  ) {
    checkConfig(ALGORITHM, REINFORCE_CONFIG_SPEC, config);
    checkInt(ALGORITHM, 'seed', seed, 0, 2 ** 32 - 1);
    const obs = env.observationSpace;
    const act = env.actionSpace;
    if (obs.kind !== 'discrete' || act.kind !== 'discrete') {
      throw new OpInputError(
        ALGORITHM,
        'env',
        `must have discrete observation and action spaces (tabular), got ${env.id} with ` +
          `${obs.kind} observations and ${act.kind} actions`,
      );
    }
    this.control = new RunControl({ ...config });
    this.policy = new TabularSoftmaxPolicy(obs.n, act.n);
    this.values = new Float64Array(obs.n);
    this.envSeed = seed;
    // The env gets `seed` itself; the action draws a hash of it, so the two streams differ.
    this.random = seededRandom(fmix32(seed));
  }

  get config(): Readonly<ReinforceConfig> {
    return this.control.config;
  }
  get step(): number {
    return this.control.step;
  }
  get events(): readonly RunEvent[] {
    return this.control.events;
  }
  get health(): { healthy: boolean; reason?: string } {
    return this.control.health;
  }

  setHyperparams(partial: Partial<ReinforceConfig>): void {
    checkPartial(ALGORITHM, REINFORCE_CONFIG_SPEC, partial, { liveOnly: true });
    this.control.queue(partial);
  }

  async update(): Promise<Metrics> {
    const cfg = this.control.beginUpdate();
    const { policy, env } = this;
    const N = cfg.batchEpisodes;
    const A = policy.actions;

    // 1. Rollout: N episodes with the current policy. The env is seeded once, at its first reset.
    const episodes: Episode[] = [];
    let regretSum = 0;
    let optimalCount = 0;
    let reportsRegret = false;
    for (let i = 0; i < N; i++) {
      let obs = env.reset(this.envSeed).obs;
      this.envSeed = undefined;
      const ep: Episode = { states: [], actions: [], rewards: [] };
      for (let t = 0; t < cfg.maxEpisodeSteps; t++) {
        const action = policy.sample(obs, this.random);
        const out = env.step(action);
        ep.states.push(obs);
        ep.actions.push(action);
        ep.rewards.push(out.reward);
        if (typeof out.info.regret === 'number') {
          reportsRegret = true;
          regretSum += out.info.regret;
          if (out.info.optimal === true) optimalCount += 1;
        }
        if (out.terminated || out.truncated) break;
        obs = out.obs;
      }
      episodes.push(ep);
    }
    const returns = episodes.map((ep) => discountedReturns(ep.rewards, cfg.gamma));
    let totalSteps = 0;
    for (const ep of episodes) totalSteps += ep.rewards.length;

    // #region baseline-advantages
    // 2–3. Baselines and advantages A_t = G_t − b(s_t). V is read before it is trained.
    let meanReturn = 0; // 'mean': all G_t of the batch pooled
    for (const G of returns) for (const g of G) meanReturn += g;
    meanReturn /= totalSteps;
    const baselineOf = (s: number): number =>
      cfg.baseline === 'mean' ? meanReturn : cfg.baseline === 'value' ? this.values[s]! : 0;
    const advantages = episodes.map((ep, i) =>
      Float64Array.from(ep.states, (s, t) => returns[i]![t]! - baselineOf(s)),
    );
    // #endregion baseline-advantages

    // 4. Per-episode gradient estimates g_i = Σ_t A_t (onehot(a_t) − π(·|s_t)), rows by state,
    //    and the loss and entropy of the batch.
    const perEpisode: Map<number, Float64Array>[] = [];
    const entropyGrad = new Map<number, Float64Array>(); // Σ_i Σ_t ∇H(π(·|s_t)), rows (A)
    let pgLoss = 0;
    let entropySum = 0;
    episodes.forEach((ep, i) => {
      const g = new Map<number, Float64Array>();
      ep.states.forEach((s, t) => {
        const adv = advantages[i]![t]!;
        const probs = policy.probs(s); // (A)
        const rowOf = (m: Map<number, Float64Array>): Float64Array => {
          let row = m.get(s);
          if (!row) m.set(s, (row = new Float64Array(A)));
          return row;
        };
        const gRow = rowOf(g);
        const grad = policy.gradLogProb(s, ep.actions[t]!);
        for (let a = 0; a < A; a++) gRow[a]! += adv * grad[a]!;
        pgLoss -= adv * policy.logProb(s, ep.actions[t]!);
        const h = policy.entropy(s);
        entropySum += h;
        // ∂H/∂θ_b = −π_b (log π_b + H); a term with π_b = 0 contributes 0.
        const hRow = rowOf(entropyGrad);
        for (let a = 0; a < A; a++) {
          const p = probs[a]!;
          if (p > 0) hRow[a]! -= p * (Math.log(p) + h);
        }
      });
      perEpisode.push(g);
    });

    // ḡ = (1/N) Σ_i g_i, and its spread (two passes: mean first, then squared deviations).
    const mean = new Map<number, Float64Array>();
    for (const g of perEpisode) {
      for (const [s, row] of g) {
        let m = mean.get(s);
        if (!m) mean.set(s, (m = new Float64Array(A)));
        for (let a = 0; a < A; a++) m[a]! += row[a]! / N;
      }
    }
    let squaredDeviation = 0;
    for (const g of perEpisode) {
      for (const [s, m] of mean) {
        const row = g.get(s);
        for (let a = 0; a < A; a++) {
          const d = (row ? row[a]! : 0) - m[a]!;
          squaredDeviation += d * d;
        }
      }
    }
    const gradVariance = N > 1 ? squaredDeviation / (N - 1) : 0;

    // 5. Policy step θ[s] ← θ[s] + lr · (ḡ[s] + c · (1/N) ∇H[s]) on every visited state.
    let directionNormSq = 0;
    for (const [s, m] of mean) {
      const direction = new Float64Array(A);
      const hRow = entropyGrad.get(s)!;
      for (let a = 0; a < A; a++) direction[a] = m[a]! + (cfg.entropyCoef * hRow[a]!) / N;
      for (let a = 0; a < A; a++) directionNormSq += direction[a]! * direction[a]!;
      policy.step(s, direction, cfg.lr);
    }

    // The 'value' baseline: V(s) ← V(s) + valueLr · mean over visits of s of (G_t − V(s)).
    const metrics: Metrics = {};
    if (cfg.baseline === 'value') {
      const errorSum = new Map<number, { sum: number; count: number }>();
      let vfLoss = 0;
      episodes.forEach((ep, i) =>
        ep.states.forEach((s, t) => {
          const e = returns[i]![t]! - this.values[s]!;
          vfLoss += 0.5 * e * e;
          const acc = errorSum.get(s) ?? { sum: 0, count: 0 };
          acc.sum += e;
          acc.count += 1;
          errorSum.set(s, acc);
        }),
      );
      for (const [s, { sum, count }] of errorSum) this.values[s]! += (cfg.valueLr * sum) / count;
      metrics['critic/vf_loss'] = vfLoss / totalSteps;
    }

    // Logging.
    let returnSum = 0;
    for (const ep of episodes) for (const r of ep.rewards) returnSum += r;
    this.envSteps += totalSteps;
    metrics['charts/episodic_return'] = returnSum / N;
    metrics['charts/episodic_length'] = totalSteps / N;
    metrics['charts/env_steps'] = this.envSteps;
    metrics['actor/pg_loss'] = pgLoss / N;
    metrics['actor/entropy'] = entropySum / totalSteps;
    metrics['actor/grad_variance'] = gradVariance;
    metrics['actor/grad_norm'] = Math.sqrt(directionNormSq);
    metrics['actor/lr'] = cfg.lr;
    if (reportsRegret) {
      this.cumulativeRegret += regretSum;
      metrics['charts/regret'] = regretSum / N;
      metrics['charts/cumulative_regret'] = this.cumulativeRegret;
      metrics['charts/optimal_action_rate'] = optimalCount / totalSteps;
    }
    this.lastBatch = episodes;
    this.control.endUpdate();
    return metrics;
  }
}
