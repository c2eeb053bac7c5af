/**
 * Picks the language-model backend for a CLI run: WebGPU (Dawn in Node) where a hardware adapter
 * exists. `auto` passes over a fallback adapter (src/gpu/backend-choice.ts: for the lab's small
 * models a software one is several times slower than the CPU; 300 SFT steps on reverse took about
 * 4.5 min against 27 s on a 2-core machine); `--backend=webgpu` still uses it.
 */
import { acquireForChoice, describeAdapter, type BackendChoice } from '../gpu';
import type { GptLanguageModel } from '../models/language-model';
import { CpuLanguageModel } from '../models/lm-cpu';
import { GpuLanguageModel } from '../models/lm-gpu';
import type { TransformerConfig } from '../models/transformer-config';

export type { BackendChoice };

export async function createLanguageModel(
  choice: BackendChoice,
  config: TransformerConfig,
  params: Float32Array,
): Promise<{ model: GptLanguageModel; description: string }> {
  if (choice === 'cpu') {
    return { model: new CpuLanguageModel(config, params), description: 'CPU (requested)' };
  }
  const found = await acquireForChoice(choice, '--backend=webgpu');
  if (found.ok) {
    return {
      model: new GpuLanguageModel(found.gpu, config, params),
      description: `WebGPU: ${describeAdapter(found.gpu.summary)}`,
    };
  }
  if (choice === 'webgpu') {
    throw new Error(`--backend=webgpu, but no adapter: ${found.reason.message}`);
  }
  const why = found.reason.code === 'fallback-adapter' ? '' : 'no WebGPU adapter: ';
  return {
    model: new CpuLanguageModel(config, params),
    description: `CPU (${why}${found.reason.message})`,
  };
}
