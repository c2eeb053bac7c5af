/**
 * The tiny GPT on the GPU behind the grouped interface: one trainable 'base' group over its one
 * flat buffer, read and written by name, and a grouped checkpoint saved from the GPU that loads
 * into the CPU model and trains on to the same weights as the GPU model (within f32 tolerance).
 */
import { describe, expect, it } from 'vitest';
import { loadLanguageModel, saveLanguageModel } from '../../../src/models/lm-checkpoint';
import { CpuLanguageModel } from '../../../src/models/lm-cpu';
import { GpuLanguageModel } from '../../../src/models/lm-gpu';
import { packSequences } from '../../../src/models/sequence-batch';
import { CharTokenizer } from '../../../src/models/tokenizer';
import type { TransformerConfig } from '../../../src/models/transformer-config';
import { transformerLayout } from '../../../src/models/transformer-params';
import { testGpu } from '../../support/gpu';

const gpu = await testGpu();

describe.skipIf(!gpu)('the GPU language model by parameter group', () => {
  it('reads, writes and checkpoints its base group as the CPU model does', async () => {
    const tokenizer = CharTokenizer.createDefault();
    const config: TransformerConfig = {
      vocab: tokenizer.vocabSize,
      context: 8,
      width: 16,
      layers: 1,
      heads: 2,
      tiedEmbeddings: false,
      valueHead: false,
    };
    const initial = transformerLayout(config).initialize<Float32Array>(4);
    const model = new GpuLanguageModel(gpu!, config, initial);
    const batch = packSequences(tokenizer, [{ prompt: 'abc=', completion: 'cba' }], 8);
    const optimizer = { lr: 1e-2, maxGradNorm: 1 };
    try {
      const cpu = new CpuLanguageModel(config, initial);
      expect(model.spec).toEqual(cpu.spec);
      expect(model.groups.map((g) => [g.name, g.storage, g.trainable])).toEqual([
        ['base', 'f32', true],
      ]);
      expect(await model.readParams('base')).toEqual(initial);
      await expect(model.readParams('lora')).rejects.toThrow("no group 'lora' (groups: base)");
      await expect(model.readOptimizer('lora')).rejects.toThrow("no group 'lora'");
      expect(() => model.writeOptimizer(cpu as never, 'lora')).toThrow("no group 'lora'");

      await model.trainCrossEntropy(batch, optimizer);
      const loaded = loadLanguageModel(
        await saveLanguageModel(model, { tokenizer: tokenizer.spec, seed: 4 }),
      );
      expect(loaded.params).toEqual(await model.readParams('base'));
      expect(loaded.optimizer!.m).toEqual((await model.readOptimizer('base')).m);
      // Resumed on the CPU from the GPU's checkpoint, one more step: the two backends agree.
      const resumed = new CpuLanguageModel(loaded.config, loaded.params);
      resumed.writeOptimizer(loaded.optimizer!, 'base');
      await resumed.trainCrossEntropy(batch, optimizer);
      await model.trainCrossEntropy(batch, optimizer);
      const [a, b] = [await resumed.readParams(), await model.readParams()];
      let worst = 0;
      for (let i = 0; i < a.length; i++) worst = Math.max(worst, Math.abs(a[i]! - b[i]!));
      expect(worst).toBeLessThan(1e-5);
    } finally {
      model.dispose();
    }
  });
});
