/**
 * An MLP actor-critic ⇄ a checkpoint file: both networks' configs, the joint parameters and the
 * AdamW moments by tensor name, step and seed. Loading checks every tensor against the configs the
 * file declares; a mismatched, truncated or corrupted file is refused whole (CheckpointError).
 */
import { CheckpointError, decodeCheckpoint, encodeCheckpoint } from './checkpoint';
import type { OptimizerSnapshot } from './language-model';
import { layoutToTensors, tensorsToLayout } from './layout-tensors';
import type { ActorCritic } from './mlp-policy';
import { AgentLayout } from './mlp-policy';
import { checkMlpConfig, type MlpConfig } from './mlp-params';

export const ACTOR_CRITIC_KIND = 'mlp-actor-critic';

export async function saveActorCritic(
  model: ActorCritic,
  options: { seed: number; meta?: Record<string, string | number | boolean> },
): Promise<Uint8Array> {
  const { layout } = model;
  const [params, snapshot] = await Promise.all([model.readParams(), model.readOptimizer()]);
  const step = snapshot.stats[3]!;
  return encodeCheckpoint({
    model: {
      kind: ACTOR_CRITIC_KIND,
      config: { actor: model.actorConfig, critic: model.criticConfig },
    },
    step,
    seed: options.seed,
    tensors: layoutToTensors(layout, params),
    optimizer: {
      kind: 'adamw',
      step,
      hyperparams: {},
      m: layoutToTensors(layout, snapshot.m),
      v: layoutToTensors(layout, snapshot.v),
    },
    ...(options.meta ? { meta: options.meta } : {}),
  });
}

export interface LoadedActorCritic {
  agent: AgentLayout;
  params: Float32Array;
  optimizer: OptimizerSnapshot | undefined;
}

export function loadActorCritic(bytes: Uint8Array): LoadedActorCritic {
  const loose = decodeCheckpoint(bytes, { kind: ACTOR_CRITIC_KIND });
  const config = loose.model.config as { actor?: MlpConfig; critic?: MlpConfig };
  try {
    checkMlpConfig(config.actor!);
    checkMlpConfig(config.critic!);
  } catch (error) {
    throw new CheckpointError(
      'model.config',
      `is not a valid actor-critic config: ${String(error)}`,
    );
  }
  const agent = new AgentLayout(config.actor!, config.critic!);
  const layout = agent.joint;
  const ckpt = decodeCheckpoint(bytes, {
    kind: ACTOR_CRITIC_KIND,
    tensors: layout.entries.map((e) => ({ name: e.name, shape: [...e.shape] })),
  });
  if (ckpt.optimizer && ckpt.optimizer.m.length !== layout.entries.length) {
    throw new CheckpointError(
      'optimizer.m',
      `covers ${ckpt.optimizer.m.length} of ${layout.entries.length} tensors; this model trains them all`,
    );
  }
  return {
    agent,
    params: tensorsToLayout(layout, ckpt.tensors),
    optimizer: ckpt.optimizer
      ? {
          m: tensorsToLayout(layout, ckpt.optimizer.m),
          v: tensorsToLayout(layout, ckpt.optimizer.v),
          stats: Float32Array.from([0, 1, 1, ckpt.optimizer.step]),
        }
      : undefined,
  };
}
