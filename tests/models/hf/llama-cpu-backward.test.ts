import { describe, expect, it } from 'vitest';
import { llamaBackward } from '../../../src/models/hf/llama-cpu-backward';
import { llamaForward } from '../../../src/models/hf/llama-cpu';
import {
  llamaModelFromWeights,
  llamaTensorEntries,
} from '../../../src/models/hf/llama-cpu-weights';
import { seededRandom } from '../../../src/util/random';
import { dot, gradCheck, probeWeights } from '../../support/gradcheck';
import { tinyLlamaSpec } from '../../support/tiny-llama-specs';

const spec = tinyLlamaSpec;

describe.each(['llama', 'qwen2', 'qwen3'] as const)('llamaBackward (%s), float64', (family) => {
  const s = spec(family);
  const next = seededRandom(3);
  const weights = new Map<string, Float64Array>();
  for (const { name, shape } of llamaTensorEntries(s)) {
    const size = shape.reduce((a, b) => a * b, 1);
    const norm = name.endsWith('norm.weight');
    weights.set(
      name,
      Float64Array.from({ length: size }, () => (norm ? 1 : 0) + next() - 0.5),
    );
  }
  const model = llamaModelFromWeights(s, weights);
  const ids = Int32Array.from([1, 7, 3, 10, 0, 5, 5, 2]); // B = 2, T = 4
  const probe = probeWeights(2 * 4 * s.vocab, 9);
  // L = Σ probe · logits, so ∂L/∂logits = probe.
  const loss = () => dot(probe, llamaForward(model, ids, 2, 4).logits);
  const grads = llamaBackward(model, llamaForward(model, ids, 2, 4), probe);

  it('returns one gradient per tensor, under its name and with its size', () => {
    const names = llamaTensorEntries(s).map((e) => e.name);
    expect([...grads.keys()].sort()).toEqual([...names].sort());
    for (const name of names) expect(grads.get(name)!.length).toBe(weights.get(name)!.length);
  });

  it.each(llamaTensorEntries(s).map((e) => e.name))('%s matches central differences', (name) => {
    const result = gradCheck(weights.get(name)!, grads.get(name)!, loss, { maxEntries: 12 });
    expect(result.maxRelError, JSON.stringify(result.worst)).toBeLessThan(1e-6);
  });
});
