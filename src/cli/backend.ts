/**
 * Picks the language-model backend for a CLI run: WebGPU (Dawn in Node) where a hardware adapter
 * exists. `auto` passes over a fallback adapter (a software one such as SwiftShader): for the lab's
 * small models it is several times slower than the CPU (300 SFT steps on reverse: about 4.5 min
 * against 27 s on a 2-core machine); `--backend=webgpu` still uses it.
 */
import { acquireGpu, describeAdapter } from '../gpu';
import type { LanguageModel } from '../models/language-model';
import { CpuLanguageModel } from '../models/lm-cpu';
import { GpuLanguageModel } from '../models/lm-gpu';
import type { TransformerConfig } from '../models/transformer-config';

export type BackendChoice = 'auto' | 'webgpu' | 'cpu';

export async function createLanguageModel(
  choice: BackendChoice,
  config: TransformerConfig,
  params: Float32Array,
): Promise<{ model: LanguageModel; description: string }> {
  if (choice === 'cpu') {
    return { model: new CpuLanguageModel(config, params), description: 'CPU (requested)' };
  }
  const found = await acquireGpu();
  if (found.ok && choice === 'auto' && found.gpu.summary.isFallbackAdapter) {
    const line = describeAdapter(found.gpu.summary);
    found.gpu.destroy();
    return {
      model: new CpuLanguageModel(config, params),
      description: `CPU (the only WebGPU adapter is a fallback adapter, slower than the CPU here; --backend=webgpu uses it: ${line})`,
    };
  }
  if (found.ok) {
    return {
      model: new GpuLanguageModel(found.gpu, config, params),
      description: `WebGPU: ${describeAdapter(found.gpu.summary)}`,
    };
  }
  if (choice === 'webgpu') {
    throw new Error(`--backend=webgpu, but no adapter: ${found.reason.message}`);
  }
  return {
    model: new CpuLanguageModel(config, params),
    description: `CPU (no WebGPU adapter: ${found.reason.message})`,
  };
}
