/**
 * The CartPole inspector's data: one greedy episode (argmax of the actor's logits) of the current
 * policy from a fixed start, recorded as frames of cart position and pole angle for the lab's
 * animation. The same seed every time, so episodes after different updates compare directly.
 */
import { CartPole } from '../envs/cartpole';
import type { ActorCritic } from '../models/mlp-policy';
import type { CartPoleInspection } from './inspection';

/** The start the animation always uses. */
export const INSPECTION_SEED = 2024;

export async function cartPoleEpisode(
  model: ActorCritic,
  algorithm: string,
  step: number,
): Promise<CartPoleInspection> {
  const env = new CartPole();
  let { obs } = env.reset(INSPECTION_SEED);
  const x: number[] = [];
  const theta: number[] = [];
  for (;;) {
    const state = env.state; // float64 (x, ẋ, θ, θ̇)
    x.push(state[0]!);
    theta.push(state[2]!);
    const { logits } = await model.forward(obs, 1);
    let action = 0;
    for (let a = 1; a < logits.length; a++) if (logits[a]! > logits[action]!) action = a;
    const result = env.step(action);
    obs = result.obs;
    if (result.terminated || result.truncated) {
      const last = env.state;
      x.push(last[0]!);
      theta.push(last[2]!);
      const end = result.terminated ? 'fell' : 'truncated';
      return { kind: 'cartpole', algorithm, step, x, theta, steps: x.length - 1, end };
    }
  }
}
