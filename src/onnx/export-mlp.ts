/**
 * The MLP actor-critic (CleanRL's PPO Agent, mlp-policy.ts) → an ONNX model (opset 17) computing
 * what mlp-cpu.ts computes for both networks from one observation batch:
 *
 *   input   obs     float [batch, D]
 *   output  logits  float [batch, A]     the actor's action logits
 *   output  values  float [batch]        the critic's V(s) (its (B, 1) output, squeezed)
 *
 * Each layer is x·Wᵀ + b (Transpose(W) → MatMul → Add, see GraphBuilder.linear) followed by the
 * hidden activation (Tanh, Relu, or GELU composed as in export-transformer.ts). Initializers are
 * the joint layout's tensors (`actor.l0.w`, …, `critic.l2.b`), so importActorCriticOnnx() reads
 * them back into AgentLayout.joint; the configs ride in metadata_props "config" as
 * { actor, critic }.
 */
import type { Activation } from '../ops/nn/activation';
import { ACTOR_CRITIC_KIND } from '../models/mlp-checkpoint';
import { mlpLayerNames, type MlpConfig } from '../models/mlp-params';
import type { AgentLayout } from '../models/mlp-policy';
import { addWeights, checkParams } from './export-common';
import { geluConstants, geluNodes } from './export-transformer';
import { CONFIG_KEY, buildModel, type ExportExtra } from './format';
import { GraphBuilder } from './graph-builder';
import { OnnxError } from './onnx-error';
import { DataType } from './onnx-proto';

export const OBS_INPUT = 'obs';

/**
 * `agent`'s two networks with the joint parameters `params` (agent.joint.total floats, as
 * ActorCritic.readParams() returns them) → ONNX bytes. The networks must read the same D.
 */
export function exportActorCriticOnnx(
  agent: AgentLayout,
  params: Float32Array,
  extra: ExportExtra = {},
): Uint8Array {
  const { actorConfig: actor, criticConfig: critic } = agent;
  if (actor.inputs !== critic.inputs) {
    throw new OnnxError(
      'input',
      'critic.inputs',
      `must equal actor.inputs (${actor.inputs}): both read one observation, got ${critic.inputs}`,
    );
  }
  if (critic.outputs !== 1) {
    throw new OnnxError('input', 'critic.outputs', `must be 1 (one value), got ${critic.outputs}`);
  }
  checkParams(agent.joint, params);

  const g = new GraphBuilder();
  addWeights(g, agent.joint, params);
  const obs = g.input(OBS_INPUT);
  const needsGelu = actor.activation === 'gelu' || critic.activation === 'gelu';
  const gelu = needsGelu ? geluConstants(g) : undefined;

  const network = (config: MlpConfig, net: string, output: string): string => {
    let x = obs;
    const last = config.hidden.length;
    for (let l = 0; l <= last; l++) {
      const n = mlpLayerNames(l);
      const name = l === last ? output : `${net}.z${l}`;
      x = g.linear(x, `${net}.${n.w}`, `${net}.${n.b}`, name);
      if (l < last) x = activation(config.activation, x, `${net}.x${l + 1}`);
    }
    return x;
  };
  const activation = (kind: Activation, x: string, out: string): string => {
    if (kind === 'tanh') return g.op('Tanh', [x], out);
    if (kind === 'relu') return g.op('Relu', [x], out);
    return geluNodes(g, gelu!, x, out);
  };

  network(actor, 'actor', 'logits');
  const value = network(critic, 'critic', 'critic.out'); // (B, 1)
  g.op('Squeeze', [value, g.ints('value_axis', [1])], 'values');

  const graph = {
    name: 'actor_critic',
    nodes: g.nodes,
    initializers: g.initializers,
    inputs: [{ name: OBS_INPUT, elemType: DataType.FLOAT, shape: ['batch', actor.inputs] }],
    outputs: [
      { name: 'logits', elemType: DataType.FLOAT, shape: ['batch', actor.outputs] },
      { name: 'values', elemType: DataType.FLOAT, shape: ['batch'] },
    ],
  };
  return buildModel(
    graph,
    ACTOR_CRITIC_KIND,
    { [CONFIG_KEY]: JSON.stringify({ actor, critic }) },
    extra,
  );
}
