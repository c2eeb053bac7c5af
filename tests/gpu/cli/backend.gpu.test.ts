/**
 * The CLI's backend choice on the adapter this machine has: `auto` trains on a hardware adapter
 * and passes over a fallback (software) one for the CPU, saying why; `webgpu` takes either.
 */
import { describe, expect, it } from 'vitest';
import { createLanguageModel } from '../../../src/cli/backend';
import type { TransformerConfig } from '../../../src/models/transformer-config';
import { transformerLayout } from '../../../src/models/transformer-params';
import { testGpu } from '../../support/gpu';

const gpu = await testGpu();

const config: TransformerConfig = {
  vocab: 12,
  context: 8,
  width: 16,
  layers: 1,
  heads: 2,
  tiedEmbeddings: true,
  valueHead: false,
};
const params = () => transformerLayout(config).initialize<Float32Array>(1);

describe.skipIf(!gpu)('CLI backend choice', () => {
  const fallback = gpu!.summary.isFallbackAdapter;

  it(`auto: ${fallback ? 'the CPU, naming the fallback adapter it passed over' : 'the hardware adapter'}`, async () => {
    const { model, description } = await createLanguageModel('auto', config, params());
    if (fallback) {
      expect(model.backend).toBe('cpu');
      expect(description).toMatch(
        /^CPU \(the only adapter is a software fallback, slower than the CPU for these models \(--backend=webgpu uses it\): WebGPU — .* — fallback adapter — /,
      );
    } else {
      expect(model.backend).toBe('webgpu');
      expect(description).toMatch(/^WebGPU: WebGPU — .* — not a fallback adapter/);
    }
    model.dispose();
  });

  it('webgpu: the adapter, fallback or not', async () => {
    const { model, description } = await createLanguageModel('webgpu', config, params());
    expect(model.backend).toBe('webgpu');
    expect(description).toContain(fallback ? '— fallback adapter —' : '— not a fallback adapter —');
    model.dispose();
  });
});
