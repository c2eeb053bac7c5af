/**
 * PPO with a clipped surrogate, an actor-critic MLP and GAE, on vectorized gymnasium-style envs
 * with discrete actions (CartPole): CleanRL's ppo.py, top to bottom, one update per call.
 *
 * One update (CleanRL's loop body for one `iteration`):
 *   1. learning rate: lr·(1 − (iteration − 1)/numIterations) when annealLr, numIterations =
 *      ⌊totalTimesteps / batch⌋ (after the schedule ends it stays at its last value, lr/numIterations);
 *   2. rollout: numSteps vector steps of numEnvs envs; each step samples a ~ softmax(logits) with the
 *      seeded stream and stores obs, action, log π(a|s), V(s), reward and whether the episode ended;
 *      ended episodes restart at once (SyncVectorEnv, same-step autoreset);
 *   3. GAE(γ, λ) with the value of the next observation as bootstrap. Truncated episodes (the time
 *      limit, not a terminal state): gymnasium's semantics bootstrap them from V(final_obs), by
 *      adding γ·V(final_obs) to the reward of the truncating step, when bootstrapTruncated is on
 *      (the default). CleanRL's ppo.py treats truncation as termination (bootstrap 0); turn
 *      bootstrapTruncated off to reproduce it exactly;
 *   4. updateEpochs epochs over the batch (numEnvs·numSteps samples), each shuffled with the seeded
 *      stream and cut into numMinibatches minibatches. Per minibatch: advantages normalised over
 *      the minibatch (normAdv), clipped surrogate (clipCoef), value loss (clipped with clipCoef when
 *      clipVloss: ½·max((v − R)², (v_clip − R)²)), entropy bonus:
 *        loss = pg_loss − entCoef·entropy + vfCoef·v_loss
 *      then one Adam step (eps 1e-5) over actor and critic together, global gradient norm clipped
 *      to maxGradNorm. With targetKl > 0 the epochs stop after the epoch whose last minibatch has
 *      approx_kl > targetKl.
 *
 * Ops used (their CPU references define the numbers): tokenLogprobs / tokenLogprobsBackward (a
 * CartPole action is a "token" over V = A actions), gae, whiten, policyLoss, valueLoss,
 * explainedVariance. Where they differ from ppo.py:
 *   - normAdv: whiten gives (A − mean)/√(var + 1e-8); CleanRL (A − mean)/(std + 1e-8), both with
 *     the unbiased std. Equal up to ~1e-8 relative unless the minibatch's advantages are constant.
 *   - storage is env-major (N, T) (the ops' row layout), not CleanRL's (T, N); minibatches are
 *     random permutations either way.
 *
 * Metrics (CleanRL names; losses/* are those of the LAST minibatch, as ppo.py logs them):
 *   charts/episodic_return      mean return of the episodes that ended in this rollout (absent
 *                               when none ended)
 *   charts/episodic_length      their mean length (absent when none ended)
 *   charts/learning_rate        the (annealed) learning rate of this update
 *   charts/env_steps            env steps since creation (CleanRL global_step)
 *   charts/SPS                  env steps per second, counting only time inside update()
 *   losses/value_loss           ½·mean(max(l_unclipped, l_clipped)) (before vfCoef)
 *   losses/policy_loss          clipped surrogate loss, mean over the minibatch
 *   losses/entropy              mean entropy of π(·|s) in nats
 *   losses/old_approx_kl        mean(−log r), r = π_new(a|s)/π_old(a|s)
 *   losses/approx_kl            mean((r − 1) − log r) (the k3 estimator)
 *   losses/clipfrac             fraction of samples with |r − 1| > clipCoef, over every minibatch
 *   losses/explained_variance   1 − Var[R − V_old]/Var[R] over the batch (np.var); absent when
 *                               Var[R] = 0 (CleanRL logs NaN there)
 * Events: an update in which any optimizer step met a non-finite gradient norm (that step is
 * skipped by the optimizer, parameters untouched) is recorded as 'skipped-update' with the count;
 * five such updates in a row mark the run unhealthy (RunControl).
 */
import type { Env } from '../envs/types';
import { endedEpisodes, RecordEpisodeStatistics, SyncVectorEnv } from '../envs/vector';
import { AgentLayout, createCpuActorCritic, type ActorCritic } from '../models/mlp-policy';
import type { OptimizerConfig } from '../models/optimizer';
import { OpInputError } from '../ops/errors';
import { explainedVariance } from '../ops/explained-variance';
import { gae } from '../ops/gae';
import { policyLoss, type PolicyLossOptions } from '../ops/policy-loss';
import { tokenLogprobs, tokenLogprobsBackward } from '../ops/token-logprobs';
import { checkInt } from '../ops/validate';
import { valueLoss } from '../ops/value-loss';
import { whiten } from '../ops/whiten';
import { fmix32 } from '../util/counter-rng';
import { checkConfig, checkPartial } from '../util/hyperparams';
import { cartPoleEpisode } from './episode-inspection';
import { DEFAULT_PPO_CONFIG, PPO_CONFIG_SPEC, type PpoConfig } from './ppo-config';
import type { CartPoleInspection } from './inspection';
import {
  RunControl,
  type ActorCriticExport,
  type EnvRunState,
  type Metrics,
  type RunEvent,
  type Trainer,
  type TrainerState,
} from './trainer';
import { RandomStreams, stateHooks } from './trainer-state';

const ALGORITHM = 'ppo';
/** CleanRL: optim.Adam(agent.parameters(), lr=learning_rate, eps=1e-5); betas (0.9, 0.999). */
export const PPO_ADAM_EPS = 1e-5;

/** One episode that ended during a rollout. */
export interface EpisodeRecord {
  episodeReturn: number;
  episodeLength: number;
  /** Env steps taken (all envs) when it ended: CleanRL's global_step of its log line. */
  globalStep: number;
}

export interface PpoTrainer extends Trainer<PpoConfig> {
  readonly model: ActorCritic;
  /** The model, as the run host reads and writes it for checkpoints. */
  readonly network: ActorCritic;
  /** The control, the random streams and the environments mid-episode (EnvRunState). */
  saveState(): TrainerState;
  loadState(state: TrainerState): void;
  readonly envs: SyncVectorEnv<Float32Array, number>;
  /** Env steps since creation (all envs). */
  readonly globalStep: number;
  /** The episodes that ended in the last update's rollout, in order. */
  readonly lastEpisodes: readonly EpisodeRecord[];
  /** The last update's rollout (env-major (N, T)) with its GAE, for inspectors and tests. */
  readonly lastRollout: PpoRolloutResult | undefined;
}

export interface PpoRolloutResult extends PpoRollout {
  /** (N, T) GAE advantages, not normalised. */
  advantages: Float32Array;
  /** (N, T) advantages + values: the value targets. */
  returns: Float32Array;
}

/** batch must split into numMinibatches equal minibatches; the anneal horizon ≥ one update. */
function checkBatchShape(config: PpoConfig): void {
  const batch = config.numEnvs * config.numSteps;
  if (batch % config.numMinibatches !== 0) {
    throw new OpInputError(
      ALGORITHM,
      'numMinibatches',
      `must divide the batch numEnvs × numSteps = ${config.numEnvs} × ${config.numSteps} = ` +
        `${batch}, got ${config.numMinibatches} (${batch} / ${config.numMinibatches} is not an integer)`,
    );
  }
  if (config.totalTimesteps < batch) {
    throw new OpInputError(
      ALGORITHM,
      'totalTimesteps',
      `must be at least one batch numEnvs × numSteps = ${batch}, got ${config.totalTimesteps}`,
    );
  }
}

/** Rollout tensors, env-major (N, T): index i·T + t is env i at step t. */
export interface PpoRollout {
  /** (N, T) rewards r_t. */
  rewards: Float32Array;
  /** (N, T) V(s_t) at rollout time. */
  values: Float32Array;
  /** (N, T) 1 where the step ended the episode by reaching a terminal state. */
  terminated: Float32Array;
  /** (N, T) 1 where the step ended the episode by the time limit (and not terminated). */
  truncated: Float32Array;
  /** (N, T) V(final_obs) where truncated = 1, else 0. */
  finalValues: Float32Array;
  /** (N) V of the observation after the last step (the next rollout's first state). */
  nextValues: Float32Array;
}

/**
 * GAE over a rollout: episodes end after terminated or truncated steps (nothing flows across),
 * the rollout's last step bootstraps from nextValues, and with bootstrapTruncated a truncated step
 * gets r_t + γ·V(final_obs) as its reward — δ_t = r_t + γ·V(final_obs) − V(s_t), as if the episode
 * went on. Without it, truncation is termination (CleanRL ppo.py: next_done = term | trunc).
 */
export function ppoAdvantages(
  rollout: PpoRollout,
  numEnvs: number,
  numSteps: number,
  options: { gamma: number; gaeLambda: number; bootstrapTruncated: boolean },
): { advantages: Float32Array; returns: Float32Array } {
  const n = numEnvs * numSteps;
  const rewards = new Float32Array(n);
  const dones = new Float32Array(n);
  for (let i = 0; i < n; i++) {
    const trunc = rollout.truncated[i] === 1 && rollout.terminated[i] !== 1;
    const boot = options.bootstrapTruncated && trunc ? options.gamma * rollout.finalValues[i]! : 0;
    rewards[i] = rollout.rewards[i]! + boot;
    dones[i] = rollout.terminated[i] === 1 || rollout.truncated[i] === 1 ? 1 : 0;
  }
  return gae(
    {
      rewards,
      values: rollout.values,
      mask: new Float32Array(n).fill(1),
      dones,
      bootstrapValue: rollout.nextValues,
    },
    numEnvs,
    numSteps,
    { gamma: options.gamma, lambda: options.gaeLambda, maskMode: 'skip' },
  );
}

/** The learning rate of update `iteration` (1-based): CleanRL's linear annealing, floored at its last step. */
export function annealedLearningRate(config: PpoConfig, iteration: number): number {
  if (!config.annealLr) return config.learningRate;
  const numIterations = Math.floor(config.totalTimesteps / (config.numEnvs * config.numSteps));
  const frac = 1 - (Math.min(iteration, numIterations) - 1) / numIterations;
  return frac * config.learningRate;
}

/**
 * A PPO trainer on config.numEnvs copies of the env `makeEnv()` makes (Box observations of shape
 * [D], Discrete(A) actions), each wrapped in RecordEpisodeStatistics inside a SyncVectorEnv.
 * `seed` (integer) seeds the envs (sub-env i gets seed + i), the initial parameters (when no model
 * is given: a CPU agent with CleanRL's init) and, hashed, the action draws and the shuffles.
 */
export function createPpo(
  makeEnv: () => Env<Float32Array, number>,
  config: PpoConfig = DEFAULT_PPO_CONFIG,
  seed = 0,
  options: { model?: ActorCritic } = {},
): PpoTrainer {
  return new Ppo(makeEnv, config, seed, options.model);
}

class Ppo implements PpoTrainer {
  readonly algorithm = ALGORITHM;
  readonly model: ActorCritic;
  readonly envs: SyncVectorEnv<Float32Array, number>;
  globalStep = 0;
  lastEpisodes: EpisodeRecord[] = [];
  lastRollout: PpoRolloutResult | undefined;
  private readonly control: RunControl<PpoConfig>;
  /** action: the rollout's action draws; shuffle: the minibatch permutations. */
  private readonly streams: RandomStreams<'action' | 'shuffle'>;
  private readonly hooks: Required<Pick<Trainer<PpoConfig>, 'saveState' | 'loadState'>>;
  private readonly obsSize: number;
  private readonly numActions: number;
  private nextObs: Float32Array; // (N, D)
  private updateSeconds = 0;

  constructor(
    makeEnv: () => Env<Float32Array, number>,
    config: PpoConfig,
    seed: number,
    model: ActorCritic | undefined,
  ) {
    checkConfig(ALGORITHM, PPO_CONFIG_SPEC, config);
    checkBatchShape(config);
    checkInt(ALGORITHM, 'seed', seed, 0, 2 ** 32 - config.numEnvs);
    this.envs = new SyncVectorEnv(
      Array.from({ length: config.numEnvs }, () => () => new RecordEpisodeStatistics(makeEnv())),
    );
    const obsSpace = this.envs.singleObservationSpace;
    const actSpace = this.envs.singleActionSpace;
    if (obsSpace.kind !== 'box' || obsSpace.shape.length !== 1 || actSpace.kind !== 'discrete') {
      throw new OpInputError(
        ALGORITHM,
        'env',
        `must have a 1-D Box observation space and a Discrete action space, got ${this.envs.id} ` +
          `with ${obsSpace.kind} observations and ${actSpace.kind} actions`,
      );
    }
    this.obsSize = obsSpace.shape[0]!;
    this.numActions = actSpace.n;
    this.model = model ?? createCpuActorCritic(this.obsSize, this.numActions, seed);
    if (this.model.observations !== this.obsSize || this.model.actions !== this.numActions) {
      throw new OpInputError(
        ALGORITHM,
        'model',
        `must take ${this.obsSize} observations and give ${this.numActions} logits (the env's ` +
          `spaces), got ${this.model.observations} and ${this.model.actions}`,
      );
    }
    this.control = new RunControl({ ...config });
    this.streams = new RandomStreams({
      action: fmix32(seed ^ 0x9e3779b9),
      shuffle: fmix32(seed ^ 0x7f4a7c15),
    });
    this.hooks = stateHooks({
      // The registry's name, as a checkpoint names its run's algorithm ('ppo' is the LM trainer).
      algorithm: 'ppo-mlp',
      control: this.control,
      streams: this.streams,
      checkConfig: (c: PpoConfig) => {
        checkConfig(ALGORITHM, PPO_CONFIG_SPEC, c);
        checkBatchShape(c);
      },
    });
    // CleanRL: next_obs, _ = envs.reset(seed=args.seed).
    this.nextObs = stack(this.envs.reset(seed).obs, this.obsSize);
  }

  get config(): Readonly<PpoConfig> {
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

  get network(): ActorCritic {
    return this.model;
  }

  /** The control, the random streams and the environments mid-episode (the network: `network`). */
  saveState(): TrainerState {
    const env: EnvRunState = {
      globalStep: this.globalStep,
      seconds: this.updateSeconds,
      nextObs: Array.from(this.nextObs),
      vector: this.envs.snapshot(),
    };
    return { ...this.hooks.saveState(), env };
  }

  /**
   * Goes on from saveState(): every part is checked before the run changes, and a refused one
   * leaves the trainer as it was. The weights and AdamW state are the run host's to write.
   */
  loadState(state: TrainerState): void {
    const env = state.env;
    if (!env) throw new Error('checkpoint: trainer.env is missing (a ppo-mlp run keeps its envs)');
    if (!Number.isSafeInteger(env.globalStep) || env.globalStep < 0) {
      throw new Error(
        `checkpoint: trainer.env.globalStep must be a whole number ≥ 0, got ${env.globalStep}`,
      );
    }
    if (!Number.isFinite(env.seconds) || env.seconds < 0) {
      throw new Error(`checkpoint: trainer.env.seconds must be a number ≥ 0, got ${env.seconds}`);
    }
    const size = this.envs.numEnvs * this.obsSize;
    const obs = env.nextObs;
    if (!Array.isArray(obs) || obs.length !== size || !obs.every((x) => Number.isFinite(x))) {
      throw new Error(
        `checkpoint: trainer.env.nextObs must be ${size} finite numbers (numEnvs × obs size)`,
      );
    }
    const before = this.envs.snapshot();
    this.envs.restore(env.vector);
    try {
      this.hooks.loadState(state);
    } catch (error) {
      this.envs.restore(before);
      throw error;
    }
    this.globalStep = env.globalStep;
    this.updateSeconds = env.seconds;
    this.nextObs = Float32Array.from(obs);
    this.lastEpisodes = [];
    this.lastRollout = undefined;
  }

  /** A greedy episode of the current actor on CartPole (see episode-inspection.ts). */
  inspect(): Promise<CartPoleInspection> | undefined {
    if (!this.envs.id.includes('CartPole')) return undefined;
    return cartPoleEpisode(this.model, ALGORITHM, this.control.step);
  }

  /** Actor and critic, for one ONNX file: obs (B, D) → logits (B, A), values (B). */
  async onnxExport(): Promise<ActorCriticExport> {
    const { actorConfig, criticConfig } = this.model;
    return {
      agent: new AgentLayout(actorConfig, criticConfig),
      params: await this.model.readParams(),
      meta: { env: this.envs.id, step: this.control.step },
    };
  }

  setHyperparams(partial: Partial<PpoConfig>): void {
    checkPartial(ALGORITHM, PPO_CONFIG_SPEC, partial, { liveOnly: true });
    checkBatchShape({ ...this.control.config, ...partial });
    this.control.queue(partial);
  }

  async update(): Promise<Metrics> {
    const cfg = this.control.beginUpdate();
    const started = performance.now();
    const { model, envs, obsSize: D, numActions: A } = this;
    const N = cfg.numEnvs;
    const T = cfg.numSteps;
    const batch = N * T;

    // 1. Learning rate of this iteration.
    const lrNow = annealedLearningRate(cfg, this.control.step + 1);

    // 2. Rollout. Storage is env-major: sample k = i·T + t.
    const obs = new Float32Array(batch * D);
    const actions = new Int32Array(batch);
    const logprobs = new Float32Array(batch);
    const rollout: PpoRollout = {
      rewards: new Float32Array(batch),
      values: new Float32Array(batch),
      terminated: new Float32Array(batch),
      truncated: new Float32Array(batch),
      finalValues: new Float32Array(batch),
      nextValues: new Float32Array(N),
    };
    const episodes: EpisodeRecord[] = [];
    for (let t = 0; t < T; t++) {
      this.globalStep += N;
      const { logits, values } = await model.forward(this.nextObs, N); // (N, A), (N)
      const stepActions = new Int32Array(N);
      for (let i = 0; i < N; i++) {
        stepActions[i] = sampleCategorical(logits, i, A, this.streams.get('action'));
      }
      const { logp } = tokenLogprobs(logits, stepActions, N, A, { withEntropy: false });
      for (let i = 0; i < N; i++) {
        const k = i * T + t;
        obs.set(this.nextObs.subarray(i * D, (i + 1) * D), k * D);
        actions[k] = stepActions[i]!;
        logprobs[k] = logp[i]!;
        rollout.values[k] = values[i]!;
      }
      const out = envs.step(Array.from(stepActions));
      const cut: number[] = []; // envs truncated (not terminated) at this step
      for (let i = 0; i < N; i++) {
        const k = i * T + t;
        rollout.rewards[k] = out.rewards[i]!;
        rollout.terminated[k] = out.terminated[i] ? 1 : 0;
        rollout.truncated[k] = out.truncated[i] && !out.terminated[i] ? 1 : 0;
        if (rollout.truncated[k] === 1) cut.push(i);
      }
      if (cut.length > 0 && cfg.bootstrapTruncated) {
        // V(final_obs) of the truncated episodes, with the parameters of this rollout.
        const finals = new Float32Array(cut.length * D);
        cut.forEach((i, j) => finals.set(out.finalObs[i]!, j * D));
        const { values: finalValues } = await model.forward(finals, cut.length);
        cut.forEach((i, j) => (rollout.finalValues[i * T + t] = finalValues[j]!));
      }
      for (const e of endedEpisodes(out)) {
        episodes.push({
          episodeReturn: e.episodeReturn,
          episodeLength: e.episodeLength,
          globalStep: this.globalStep,
        });
      }
      this.nextObs = stack(out.obs, D);
    }

    // 3. Bootstrap value and GAE.
    rollout.nextValues.set((await model.forward(this.nextObs, N)).values);
    const { advantages, returns } = ppoAdvantages(rollout, N, T, cfg);

    // 4. Epochs of minibatch updates.
    const mb = batch / cfg.numMinibatches;
    const ones = new Float32Array(mb).fill(1);
    const optimizer: OptimizerConfig = {
      lr: lrNow,
      eps: PPO_ADAM_EPS,
      beta1: 0.9,
      beta2: 0.999,
      weightDecay: 0,
      maxGradNorm: cfg.maxGradNorm,
    };
    const pgOptions: PolicyLossOptions = {
      flavor: 'trl',
      lossType: 'ppo',
      clipLow: cfg.clipCoef,
      clipHigh: cfg.clipCoef,
      dualClip: null,
      logRatioClamp: null,
      delta: null,
      aggregation: 'token-mean',
    };
    const inds = Int32Array.from({ length: batch }, (_, k) => k);
    const mbObs = new Float32Array(mb * D);
    const mbActions = new Int32Array(mb);
    const mbOldLogp = new Float32Array(mb);
    const mbAdv = new Float32Array(mb);
    const mbReturns = new Float32Array(mb);
    const mbOldValues = new Float32Array(mb);
    let last = { pgLoss: 0, vLoss: 0, entropy: 0, oldApproxKl: 0, approxKl: 0 };
    let clipped = 0;
    let seen = 0;
    let steps = 0;
    let skipped = 0;
    for (let epoch = 0; epoch < cfg.updateEpochs; epoch++) {
      shuffle(inds, this.streams.get('shuffle'));
      for (let start = 0; start < batch; start += mb) {
        for (let j = 0; j < mb; j++) {
          const k = inds[start + j]!;
          mbObs.set(obs.subarray(k * D, (k + 1) * D), j * D);
          mbActions[j] = actions[k]!;
          mbOldLogp[j] = logprobs[k]!;
          mbAdv[j] = advantages[k]!;
          mbReturns[j] = returns[k]!;
          mbOldValues[j] = rollout.values[k]!;
        }
        const { logits, values: newValues } = await model.forward(mbObs, mb);
        const { logp, entropy } = tokenLogprobs(logits, mbActions, mb, A);

        // KL estimates and clip fraction (CleanRL computes them under no_grad).
        let oldKl = 0;
        let kl = 0;
        for (let j = 0; j < mb; j++) {
          const logRatio = logp[j]! - mbOldLogp[j]!;
          const ratio = Math.exp(logRatio);
          oldKl += -logRatio;
          kl += ratio - 1 - logRatio;
          if (Math.abs(ratio - 1) > cfg.clipCoef) clipped += 1;
        }
        seen += mb;

        const adv = cfg.normAdv
          ? whiten(mbAdv, ones, 1, mb, { unbiased: true, epsilonMode: 'add', epsilon: 1e-8 }).output
          : mbAdv;
        const pg = policyLoss(logp, mbOldLogp, adv, ones, 1, mb, pgOptions);
        const v = valueLoss(newValues, mbOldValues, mbReturns, ones, 1, mb, {
          cliprangeValue: cfg.clipVloss ? cfg.clipCoef : null,
          aggregation: { mode: 'token-mean' },
        });
        let entropySum = 0;
        for (let j = 0; j < mb; j++) entropySum += entropy![j]!;

        // loss = pg_loss − entCoef·mean(entropy) + vfCoef·v_loss, differentiated by hand:
        // ∂/∂logp from the policy loss, ∂/∂entropy_j = −entCoef/mb, ∂/∂v = vfCoef·∂v_loss/∂v.
        const dEntropy = new Float32Array(mb).fill(-cfg.entCoef / mb);
        const dLogits = tokenLogprobsBackward(logits, mbActions, pg.gradLogp, dEntropy, mb, A);
        const dValues = v.gradVpreds.map((g) => cfg.vfCoef * g);
        const stats = await model.backward(dLogits, dValues, optimizer);
        steps += 1;
        if (!stats.applied) skipped += 1;

        last = {
          pgLoss: pg.loss,
          vLoss: v.loss,
          entropy: entropySum / mb,
          oldApproxKl: oldKl / mb,
          approxKl: kl / mb,
        };
      }
      if (cfg.targetKl > 0 && last.approxKl > cfg.targetKl) break;
    }

    // 5. Logging.
    const ev = explainedVariance(returns, rollout.values, new Float32Array(batch).fill(1), N, T, {
      correction: 0,
      epsilon: 0,
    });
    this.updateSeconds += (performance.now() - started) / 1000;
    const metrics: Metrics = {};
    if (episodes.length > 0) {
      let r = 0;
      let l = 0;
      for (const e of episodes) {
        r += e.episodeReturn;
        l += e.episodeLength;
      }
      metrics['charts/episodic_return'] = r / episodes.length;
      metrics['charts/episodic_length'] = l / episodes.length;
    }
    metrics['charts/learning_rate'] = lrNow;
    metrics['charts/env_steps'] = this.globalStep;
    metrics['charts/SPS'] =
      this.updateSeconds > 0 ? Math.round(this.globalStep / this.updateSeconds) : 0;
    metrics['losses/value_loss'] = last.vLoss;
    metrics['losses/policy_loss'] = last.pgLoss;
    metrics['losses/entropy'] = last.entropy;
    metrics['losses/old_approx_kl'] = last.oldApproxKl;
    metrics['losses/approx_kl'] = last.approxKl;
    metrics['losses/clipfrac'] = seen > 0 ? clipped / seen : 0;
    if (ev.value !== undefined) metrics['losses/explained_variance'] = ev.value;
    this.lastEpisodes = episodes;
    this.lastRollout = { ...rollout, advantages, returns };
    this.control.endUpdate(
      skipped > 0
        ? { skipped: `${skipped} of ${steps} optimizer steps skipped: non-finite gradient norm` }
        : {},
    );
    return metrics;
  }
}

/** Observations of N envs, each (D), as one (N, D) array. */
function stack(rows: readonly Float32Array[], size: number): Float32Array {
  const out = new Float32Array(rows.length * size);
  rows.forEach((row, i) => {
    if (row.length !== size) {
      throw new OpInputError(
        ALGORITHM,
        'obs',
        `env ${i} returned ${row.length} values, expected ${size}`,
      );
    }
    out.set(row, i * size);
  });
  return out;
}

/** a ~ softmax(logits[row]) by inverse CDF with one uniform draw (float64 probabilities). */
export function sampleCategorical(
  logits: Float32Array,
  row: number,
  actions: number,
  random: () => number,
): number {
  const base = row * actions;
  let max = -Infinity;
  for (let a = 0; a < actions; a++) max = Math.max(max, logits[base + a]!);
  let sum = 0;
  for (let a = 0; a < actions; a++) sum += Math.exp(logits[base + a]! - max);
  const u = random() * sum;
  let acc = 0;
  for (let a = 0; a < actions - 1; a++) {
    acc += Math.exp(logits[base + a]! - max);
    if (u < acc) return a;
  }
  return actions - 1;
}

/** Fisher–Yates in place (np.random.shuffle of CleanRL's b_inds, from our seeded stream). */
function shuffle(values: Int32Array, random: () => number): void {
  for (let i = values.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const tmp = values[i]!;
    values[i] = values[j]!;
    values[j] = tmp;
  }
}
