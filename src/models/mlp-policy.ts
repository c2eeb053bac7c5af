/**
 * CleanRL's PPO `Agent` as the trainers see it: an actor MLP (logits over A discrete actions) and a
 * critic MLP (one value), trained together by ONE optimizer over all their parameters — CleanRL's
 * `optim.Adam(agent.parameters(), eps=1e-5)` with `clip_grad_norm_(agent.parameters(), max_norm)`,
 * so the gradient norm that is clipped is the norm over actor and critic together.
 *
 * The two networks keep their own flat parameter arrays (laid out by mlpLayout(), what mlp-cpu.ts
 * and mlp-gpu.ts run on); the optimizer works on a joint flat array laid out by agentLayout():
 * every tensor of both networks, named `actor.l0.w`, `critic.l0.w`, …, weights first. A step
 * gathers both gradients into the joint layout, runs the optimizer there (the joint parameters and
 * AdamW moments are the master copy), and scatters the updated parameters back to the networks.
 *
 * Shapes: B = batch, D = observation size, A = actions.
 *   forward(obs (B, D), B) → logits (B, A), values (B); keeps the activations.
 *   backward(dLogits (B, A), dValues (B), optimizer) → one optimizer step; applies to the most
 *   recent forward() (same B), with the parameters of that forward.
 */
import type { CommandBatch } from '../gpu/batch';
import type { OptimizerSnapshot } from './language-model';
import type { GpuContext } from '../gpu/context';
import { OpInputError } from '../ops/errors';
import { checkLength } from '../ops/validate';
import { fmix32 } from '../util/counter-rng';
import { mlpBackward, mlpForward, type MlpActivations } from './mlp-cpu';
import { MlpGpu } from './mlp-gpu';
import {
  type MlpConfig,
  initMlp,
  mlpLayout,
  mlpParamSpecs,
  ppoActorConfig,
  ppoCriticConfig,
} from './mlp-params';
import {
  CpuOptimizerState,
  checkOptimizerConfig,
  optimizerStepCpu,
  readStats,
  STATS_LENGTH,
  type OptimizerConfig,
  type OptimizerStats,
} from './optimizer';
import { encodeOptimizerStep, GpuOptimizerState } from './optimizer-gpu';
import { ParamLayout } from './param-layout';

const OP = 'actorCritic';

export interface ActorCriticOutput {
  /** (B, A) unnormalised log-probabilities of the actions. */
  logits: Float32Array;
  /** (B) V(s) of each observation. */
  values: Float32Array;
}

export interface ActorCritic {
  readonly backend: 'webgpu' | 'cpu';
  readonly actorConfig: MlpConfig;
  readonly criticConfig: MlpConfig;
  /** The joint layout of readParams() / writeParams() and of the optimizer (agentLayout()). */
  readonly layout: ParamLayout;
  /** Observation size D. */
  readonly observations: number;
  /** Number of discrete actions A. */
  readonly actions: number;
  /**
   * obs (B, D) → logits (B, A), values (B). On the GPU this is the sync point (one readback). The
   * CPU backend keeps `obs` by reference for backward(): do not change it before then.
   */
  forward(obs: Float32Array, batch: number): Promise<ActorCriticOutput>;
  /**
   * ∂loss/∂logits (B, A) and ∂loss/∂values (B) of the last forward() → one optimizer step over the
   * actor and the critic together (global-norm clipping, then AdamW). A non-finite gradient norm
   * skips the step (`applied: false`), parameters and moments untouched.
   */
  backward(
    dLogits: Float32Array,
    dValues: Float32Array,
    optimizer: OptimizerConfig,
  ): Promise<OptimizerStats>;
  /** The joint parameters (layout). GPU: a sync point. */
  readParams(): Promise<Float32Array>;
  /** Replaces the joint parameters (layout.total floats); AdamW moments are kept. */
  writeParams(params: Float32Array): void;
  /** AdamW moments (joint layout) and stats [norm, scale, applied, step], for checkpoints. */
  readOptimizer(): Promise<OptimizerSnapshot>;
  writeOptimizer(snapshot: OptimizerSnapshot): void;
  dispose(): void;
}

function checkSnapshot(layout: ParamLayout, snapshot: OptimizerSnapshot): void {
  if (snapshot.m.length !== layout.total || snapshot.v.length !== layout.total) {
    throw new Error(`optimizer moments: expected ${layout.total} floats each (the joint layout)`);
  }
  if (snapshot.stats.length !== STATS_LENGTH) {
    throw new Error(
      `optimizer stats: expected ${STATS_LENGTH} floats, got ${snapshot.stats.length}`,
    );
  }
}

/** One tensor's place in a network's own flat array and in the joint one. */
interface Piece {
  net: 'actor' | 'critic';
  /** Offset in the network's flat array (mlpLayout). */
  from: number;
  /** Offset in the joint flat array (agentLayout). */
  to: number;
  size: number;
}

/** Both networks' layouts, the joint layout, and the map between them. */
export class AgentLayout {
  readonly actor: ParamLayout;
  readonly critic: ParamLayout;
  readonly joint: ParamLayout;
  readonly pieces: readonly Piece[];

  constructor(
    readonly actorConfig: MlpConfig,
    readonly criticConfig: MlpConfig,
  ) {
    this.actor = mlpLayout(actorConfig);
    this.critic = mlpLayout(criticConfig);
    this.joint = new ParamLayout([
      ...mlpParamSpecs(actorConfig).map((s) => ({ ...s, name: `actor.${s.name}` })),
      ...mlpParamSpecs(criticConfig).map((s) => ({ ...s, name: `critic.${s.name}` })),
    ]);
    const pieces: Piece[] = [];
    for (const [net, layout] of [
      ['actor', this.actor],
      ['critic', this.critic],
    ] as const) {
      for (const e of layout.entries) {
        const to = this.joint.entry(`${net}.${e.name}`).offset;
        pieces.push({ net, from: e.offset, to, size: e.size });
      }
    }
    this.pieces = pieces;
  }

  /** Copies each network's tensors into the joint array (padding untouched). */
  gather(actor: Float32Array, critic: Float32Array, joint: Float32Array): void {
    for (const p of this.pieces) {
      const src = p.net === 'actor' ? actor : critic;
      joint.set(src.subarray(p.from, p.from + p.size), p.to);
    }
  }

  /** Copies the joint array's tensors back into each network's array. */
  scatter(joint: Float32Array, actor: Float32Array, critic: Float32Array): void {
    for (const p of this.pieces) {
      const dst = p.net === 'actor' ? actor : critic;
      dst.set(joint.subarray(p.to, p.to + p.size), p.from);
    }
  }
}

/** CleanRL's Agent for D observations and A actions: 64-64 tanh actor and critic. */
export function ppoAgentLayout(observations: number, actions: number): AgentLayout {
  return new AgentLayout(ppoActorConfig(observations, actions), ppoCriticConfig(observations));
}

/**
 * CleanRL's layer_init for both networks, in the joint layout. The actor is drawn from `seed` and
 * the critic from a hash of it, so the two streams differ. Same seed, same parameters.
 */
export function initAgent(layout: AgentLayout, seed: number): Float32Array {
  const joint = new Float32Array(layout.joint.total);
  layout.gather(
    initMlp(layout.actorConfig, seed),
    initMlp(layout.criticConfig, fmix32(seed ^ 0x0c217c)),
    joint,
  );
  return joint;
}

/**
 * Shape checks shared by both backends. Non-finite gradients are not rejected here: they make the
 * gradient norm non-finite, and the optimizer then skips the step on both backends alike.
 */
export function checkActorCriticGrads(
  actions: number,
  batch: number | undefined,
  dLogits: Float32Array,
  dValues: Float32Array,
): number {
  if (batch === undefined) {
    throw new OpInputError(OP, 'backward', 'needs a forward() first (it uses its activations)');
  }
  checkLength(OP, 'dLogits', dLogits, batch * actions, 'batch × actions of the last forward');
  checkLength(OP, 'dValues', dValues, batch, 'batch of the last forward');
  return batch;
}

function checkJoint(layout: AgentLayout, params: Float32Array): void {
  checkLength(OP, 'params', params, layout.joint.total, 'layout.total');
}

/** The CPU backend: mlp-cpu.ts forward/backward and optimizerStepCpu, in float32. */
export class CpuActorCritic implements ActorCritic {
  readonly backend = 'cpu';
  readonly layout: ParamLayout;
  readonly observations: number;
  readonly actions: number;
  private readonly joint: Float32Array; // master parameters (joint layout)
  private readonly actorParams: Float32Array;
  private readonly criticParams: Float32Array;
  private readonly state: CpuOptimizerState<Float32Array>;
  private last:
    { actor: MlpActivations<Float32Array>; critic: MlpActivations<Float32Array> } | undefined;

  constructor(
    readonly agent: AgentLayout,
    initial: Float32Array,
  ) {
    checkJoint(agent, initial);
    this.layout = agent.joint;
    this.observations = agent.actorConfig.inputs;
    this.actions = agent.actorConfig.outputs;
    this.joint = initial.slice();
    this.actorParams = new Float32Array(agent.actor.total);
    this.criticParams = new Float32Array(agent.critic.total);
    agent.scatter(this.joint, this.actorParams, this.criticParams);
    this.state = new CpuOptimizerState(this.joint);
  }

  get actorConfig(): MlpConfig {
    return this.agent.actorConfig;
  }
  get criticConfig(): MlpConfig {
    return this.agent.criticConfig;
  }

  // async: bad input rejects the promise, as on the GPU, instead of throwing synchronously.
  async forward(obs: Float32Array, batch: number): Promise<ActorCriticOutput> {
    const { agent } = this;
    const actor = mlpForward(agent.actorConfig, agent.actor, this.actorParams, obs, batch);
    const critic = mlpForward(agent.criticConfig, agent.critic, this.criticParams, obs, batch);
    this.last = { actor: actor.acts, critic: critic.acts };
    // The critic's output is (B, 1): the values, one per row.
    return { logits: actor.out, values: critic.out };
  }

  async backward(
    dLogits: Float32Array,
    dValues: Float32Array,
    optimizer: OptimizerConfig,
  ): Promise<OptimizerStats> {
    checkOptimizerConfig(optimizer);
    checkActorCriticGrads(this.actions, this.last?.actor.batch, dLogits, dValues);
    const { agent } = this;
    const last = this.last!;
    const gActor = mlpBackward(
      agent.actorConfig,
      agent.actor,
      this.actorParams,
      last.actor,
      dLogits,
    );
    const gCritic = mlpBackward(
      agent.criticConfig,
      agent.critic,
      this.criticParams,
      last.critic,
      dValues,
    );
    const grads = new Float32Array(agent.joint.total);
    agent.gather(gActor, gCritic, grads);
    const stats = optimizerStepCpu(agent.joint, this.joint, grads, this.state, optimizer);
    if (stats.applied) agent.scatter(this.joint, this.actorParams, this.criticParams);
    return stats;
  }

  async readParams(): Promise<Float32Array> {
    return this.joint.slice();
  }

  writeParams(params: Float32Array): void {
    checkJoint(this.agent, params);
    this.joint.set(params);
    this.agent.scatter(this.joint, this.actorParams, this.criticParams);
  }

  async readOptimizer(): Promise<OptimizerSnapshot> {
    const { m, v, stats } = this.state;
    return { m: m.slice(), v: v.slice(), stats: Float32Array.from(stats) };
  }

  writeOptimizer(snapshot: OptimizerSnapshot): void {
    checkSnapshot(this.layout, snapshot);
    this.state.m.set(snapshot.m);
    this.state.v.set(snapshot.v);
    this.state.stats.set(snapshot.stats);
  }

  dispose(): void {
    this.last = undefined;
  }
}

/**
 * The GPU backend: two MlpGpu models, a joint parameter / gradient buffer and GpuOptimizerState.
 * forward(): upload obs, both forward passes, both outputs copied into one buffer, ONE readback
 * (the sync point). backward(): upload dLogits and dValues, then in ONE command encoder: both
 * backward passes, gradients copied into the joint layout, grad norm + clip + AdamW on the joint
 * buffers, updated parameters copied back into each model; then the 4-float optimizer stats are
 * read back (a second, small sync point per step — the trainer needs `applied` to record skips).
 */
export class GpuActorCritic implements ActorCritic {
  readonly backend = 'webgpu';
  readonly layout: ParamLayout;
  readonly observations: number;
  readonly actions: number;
  readonly actor: MlpGpu;
  readonly critic: MlpGpu;
  private readonly jointParams: GPUBuffer;
  private readonly jointGrads: GPUBuffer;
  private readonly state: GpuOptimizerState;
  private lastBatch: number | undefined;

  constructor(
    readonly gpu: GpuContext,
    readonly agent: AgentLayout,
    initial: Float32Array,
  ) {
    checkJoint(agent, initial);
    this.layout = agent.joint;
    this.observations = agent.actorConfig.inputs;
    this.actions = agent.actorConfig.outputs;
    const actorParams = new Float32Array(agent.actor.total);
    const criticParams = new Float32Array(agent.critic.total);
    agent.scatter(initial, actorParams, criticParams);
    this.actor = new MlpGpu(gpu, agent.actorConfig, actorParams);
    this.critic = new MlpGpu(gpu, agent.criticConfig, criticParams);
    const bytes = agent.joint.total * 4;
    this.jointParams = gpu.storage(bytes, 'agent params');
    this.jointGrads = gpu.storage(bytes, 'agent grads');
    this.state = new GpuOptimizerState(gpu, agent.joint);
    // Padding of the joint buffers is never copied into: it must read zero (grad norm, AdamW).
    const zero = gpu.beginBatch('agent: zero');
    zero.encoder.clearBuffer(this.jointGrads);
    zero.submit();
    this.writeParams(initial);
  }

  get actorConfig(): MlpConfig {
    return this.agent.actorConfig;
  }
  get criticConfig(): MlpConfig {
    return this.agent.criticConfig;
  }

  async forward(obs: Float32Array, batch: number): Promise<ActorCriticOutput> {
    const { gpu, actions } = this;
    const wsActor = this.actor.writeObservations(obs, batch);
    const wsCritic = this.critic.writeObservations(obs, batch);
    const logitBytes = batch * actions * 4;
    const out = gpu.storage(logitBytes + batch * 4, 'agent forward out'); // (B·A logits, B values)
    try {
      const step = gpu.beginBatch('agent forward');
      await this.actor.encodeForward(step, wsActor);
      await this.critic.encodeForward(step, wsCritic);
      step.endPass();
      step.encoder.copyBufferToBuffer(wsActor.out, 0, out, 0, logitBytes);
      step.encoder.copyBufferToBuffer(wsCritic.out, 0, out, logitBytes, batch * 4);
      step.submit();
      this.lastBatch = batch;
      // The sync point of every forward: logits and values come back together.
      const data = await gpu.readF32(out, batch * (actions + 1));
      return { logits: data.slice(0, batch * actions), values: data.slice(batch * actions) };
    } finally {
      gpu.pool.release(out);
    }
  }

  async backward(
    dLogits: Float32Array,
    dValues: Float32Array,
    optimizer: OptimizerConfig,
  ): Promise<OptimizerStats> {
    checkOptimizerConfig(optimizer);
    const batch = checkActorCriticGrads(this.actions, this.lastBatch, dLogits, dValues);
    const { gpu } = this;
    const dLogitsBuffer = gpu.upload(dLogits, 'agent dLogits');
    const dValuesBuffer = gpu.upload(dValues, 'agent dValues');
    try {
      const step = gpu.beginBatch('agent train step');
      await this.actor.encodeBackward(step, this.actor.workspaceFor(batch), dLogitsBuffer);
      await this.critic.encodeBackward(step, this.critic.workspaceFor(batch), dValuesBuffer);
      this.copyPieces(step, 'toJoint');
      await encodeOptimizerStep(
        gpu,
        step,
        { params: this.jointParams, grads: this.jointGrads },
        this.state,
        optimizer,
      );
      // A skipped step leaves the joint parameters as they were, so copying them back is harmless.
      this.copyPieces(step, 'fromJoint');
      step.submit();
      return readStats(await gpu.readF32(this.state.stats, STATS_LENGTH));
    } finally {
      gpu.pool.release(dLogitsBuffer);
      gpu.pool.release(dValuesBuffer);
    }
  }

  readParams(): Promise<Float32Array> {
    return this.gpu.readF32(this.jointParams, this.agent.joint.total);
  }

  writeParams(params: Float32Array): void {
    checkJoint(this.agent, params);
    const actorParams = new Float32Array(this.agent.actor.total);
    const criticParams = new Float32Array(this.agent.critic.total);
    this.agent.scatter(params, actorParams, criticParams);
    this.actor.writeParams(actorParams);
    this.critic.writeParams(criticParams);
    this.gpu.device.queue.writeBuffer(
      this.jointParams,
      0,
      params.buffer,
      params.byteOffset,
      params.byteLength,
    );
  }

  async readOptimizer(): Promise<OptimizerSnapshot> {
    const total = this.layout.total;
    const [m, v, stats] = await Promise.all([
      this.gpu.readF32(this.state.m, total),
      this.gpu.readF32(this.state.v, total),
      this.gpu.readF32(this.state.stats, STATS_LENGTH),
    ]);
    return { m, v, stats };
  }

  writeOptimizer(snapshot: OptimizerSnapshot): void {
    checkSnapshot(this.layout, snapshot);
    this.state.write(snapshot.m, snapshot.v, snapshot.stats);
  }

  dispose(): void {
    this.actor.release();
    this.critic.release();
    this.state.release();
    this.gpu.pool.release(this.jointParams);
    this.gpu.pool.release(this.jointGrads);
  }

  /** Per-tensor copies: model grads → joint grads, or joint params → model params. */
  private copyPieces(step: CommandBatch, direction: 'toJoint' | 'fromJoint'): void {
    step.endPass();
    for (const p of this.agent.pieces) {
      const model = p.net === 'actor' ? this.actor : this.critic;
      if (direction === 'toJoint') {
        step.encoder.copyBufferToBuffer(
          model.grads,
          p.from * 4,
          this.jointGrads,
          p.to * 4,
          p.size * 4,
        );
      } else {
        step.encoder.copyBufferToBuffer(
          this.jointParams,
          p.to * 4,
          model.params,
          p.from * 4,
          p.size * 4,
        );
      }
    }
  }
}

/** A CPU agent for D observations and A actions with CleanRL's architecture and init. */
export function createCpuActorCritic(
  observations: number,
  actions: number,
  seed: number,
): CpuActorCritic {
  const layout = ppoAgentLayout(observations, actions);
  return new CpuActorCritic(layout, initAgent(layout, seed));
}

/** The same agent on the GPU (identical initial parameters for the same seed). */
export function createGpuActorCritic(
  gpu: GpuContext,
  observations: number,
  actions: number,
  seed: number,
): GpuActorCritic {
  const layout = ppoAgentLayout(observations, actions);
  return new GpuActorCritic(gpu, layout, initAgent(layout, seed));
}
