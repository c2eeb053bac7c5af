/** SFT warm-up on the CPU backend: a tiny-budget run that must move the model off chance. */
import { describe, expect, it } from 'vitest';
import { reverseTask } from '../../src/envs/token-tasks/reverse';
import { CpuLanguageModel } from '../../src/models/lm-cpu';
import { CharTokenizer } from '../../src/models/tokenizer';
import type { TransformerConfig } from '../../src/models/transformer-config';
import { transformerLayout } from '../../src/models/transformer-params';
import { evaluateTask } from '../../src/rl/evaluate';
import { DEFAULT_SFT_CONFIG, runSft } from '../../src/rl/sft';

describe('runSft', () => {
  it(
    'teaches reversal of 2–3 letters from chance to most prompts',
    { timeout: 120_000 },
    async () => {
      const tokenizer = CharTokenizer.createDefault();
      const task = reverseTask({ minLength: 2, maxLength: 3, alphabet: 'abc' });
      const config: TransformerConfig = {
        vocab: tokenizer.vocabSize,
        context: task.maxChars + 2,
        width: 32,
        layers: 2,
        heads: 4,
        tiedEmbeddings: true,
        valueHead: false,
      };
      const model = new CpuLanguageModel(config, transformerLayout(config).initialize(3));
      const before = await evaluateTask(model, tokenizer, task, { seed: 5, samples: 64 });
      const result = await runSft(model, tokenizer, task, {
        ...DEFAULT_SFT_CONFIG,
        steps: 300,
        batchSize: 16,
        evalSamples: 64,
        seed: 2,
      });
      expect(before.successRate).toBe(0);
      expect(result.history).toHaveLength(300);
      const first = result.history[0]!.loss;
      const last = result.history[299]!.loss;
      expect(first).toBeGreaterThan(3); // ≈ ln 79 = 4.37 at chance
      expect(last).toBeLessThan(0.5);
      expect(result.final.successRate).toBeGreaterThan(0.9); // 1.0 with these seeds
    },
  );
});
