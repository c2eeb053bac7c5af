/**
 * Throughput discipline: after the first training step, 150 more steps create no GPU buffer —
 * activations, gradients, optimizer state and the metrics ring are reused, and per-dispatch uniform
 * buffers come back to the pool on submit. The metrics are read in bulk (every 64 steps at most).
 */
import { describe, expect, it } from 'vitest';
import { GpuLanguageModel, METRICS_CAPACITY } from '../../../src/models/lm-gpu';
import { CharTokenizer } from '../../../src/models/tokenizer';
import type { TransformerConfig } from '../../../src/models/transformer-config';
import { transformerLayout } from '../../../src/models/transformer-params';
import { packSequences } from '../../../src/models/sequence-batch';
import { IN_BROWSER, testGpu } from '../../support/gpu';

const gpu = await testGpu();

// A buffer created per step shows after the second; the steps between reads outnumber the ring's
// slots, so the ring fills and is flushed into the host-side backlog between every two reads.
const STEPS = 150;
const READ_EVERY = 70;

// The pool is the same JavaScript in Node and in the browser; running the software-rendered
// steps once (in Node) is enough.
describe.skipIf(!gpu || IN_BROWSER)(`buffer pool over ${STEPS} training steps`, () => {
  it('allocates nothing after the first step', { timeout: 240_000 }, async () => {
    expect(READ_EVERY).toBeGreaterThan(METRICS_CAPACITY);
    const device = gpu!;
    const tokenizer = CharTokenizer.createDefault();
    // The smallest model the config allows: the test is about allocation, not arithmetic.
    const config: TransformerConfig = {
      vocab: tokenizer.vocabSize,
      context: 6,
      width: 16,
      layers: 1,
      heads: 1,
      tiedEmbeddings: true,
      valueHead: false,
    };
    const model = new GpuLanguageModel(device, config, transformerLayout(config).initialize(1));
    const batch = packSequences(tokenizer, [{ prompt: 'ab=', completion: 'ba' }], 6);
    const optimizer = { lr: 1e-3, maxGradNorm: 1 };
    try {
      await model.trainCrossEntropy(batch, optimizer);
      await model.takeMetrics();
      const after1 = device.pool.stats();
      let seen = 0;
      for (let step = 0; step < STEPS; step++) {
        await model.trainCrossEntropy(batch, optimizer);
        // Read rarely: the ring must keep (not drop) what it flushes when it fills up.
        if (step % READ_EVERY === READ_EVERY - 1) seen += (await model.takeMetrics()).length;
      }
      seen += (await model.takeMetrics()).length;
      const after = device.pool.stats();
      expect(seen).toBe(STEPS);
      expect(after.created).toBe(after1.created);
      expect(after.bytes).toBe(after1.bytes);
      expect(after.inUse).toBe(after1.inUse);
    } finally {
      model.dispose();
    }
  });
});
