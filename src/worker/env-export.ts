/**
 * ONNX files of environment runs whose trainer has a network to export (PPO's MLP actor-critic):
 * the trainer hands over the network's layout and weights, and the file is written here, because
 * src/onnx stands above src/rl.
 */
import { exportActorCriticOnnx } from '../onnx/export-mlp';
import type { Trainer } from '../rl/trainer';
import type { Settings } from './run-protocol';

/** The ONNX writer of `trainer`'s policy, or undefined when it has none to export. */
export function envOnnxExporter(
  trainer: Trainer<Settings>,
): (() => Promise<Uint8Array>) | undefined {
  if (!trainer.onnxExport) return undefined;
  return async () => {
    const { agent, params, meta } = await trainer.onnxExport!();
    return exportActorCriticOnnx(agent, params, { meta });
  };
}
