/**
 * Export → onnxruntime-web (wasm EP, Node) → logits, against our CPU forward (transformer-cpu.ts)
 * on seeded random models.
 *
 * Tolerance: max |ORT − CPU| ≤ 1e-4 · max(1, max |logit|). Both sides compute in float32 (the
 * CPU ops accumulate sums in float64 and round each layer's output to float32; ORT accumulates in
 * float32), so they differ by float32 rounding through a few layers: a few 1e-6 relative to the
 * logit scale. A real mistake (wrong transpose, mask, scale, bias axis, GELU constant) moves
 * logits by 1e-2 or more.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TransformerConfig } from '../../src/models/transformer-config';
import { transformerForward } from '../../src/models/transformer-cpu';
import { exportTransformerOnnx } from '../../src/onnx/export-transformer';
import { nodeOrtOptions } from '../../src/onnx/ort-node';
import { createOrtSession, ortForward, type OrtPolicySession } from '../../src/onnx/ort-reference';
import { maxAbsDiff } from '../support/random';
import { maxAbs, randomTokens, transformerModel, warmUpOrt } from './helpers';

const TOLERANCE = 1e-4;

const base: TransformerConfig = {
  vocab: 23,
  context: 12,
  width: 16,
  layers: 1,
  heads: 2,
  tiedEmbeddings: true,
  valueHead: false,
};

const cases: { name: string; config: TransformerConfig; shapes: [number, number][] }[] = [
  {
    name: 'tied, 1 layer, 2 heads',
    config: base,
    shapes: [
      [1, 1],
      [2, 5],
      [3, 12],
    ],
  },
  {
    name: 'untied, 2 layers, 4 heads, value head',
    config: { ...base, layers: 2, heads: 4, width: 32, tiedEmbeddings: false, valueHead: true },
    shapes: [
      [1, 12],
      [2, 7],
    ],
  },
  {
    name: 'tied with value head, 1 head',
    config: { ...base, heads: 1, valueHead: true, context: 9, vocab: 40 },
    shapes: [
      [4, 3],
      [1, 9],
    ],
  },
  {
    name: 'rotary positions, 2 layers, 4 heads, value head',
    config: { ...base, layers: 2, heads: 4, width: 32, valueHead: true, positions: 'rotary' },
    shapes: [
      [1, 1],
      [2, 7],
      [1, 12],
    ],
  },
  {
    name: 'rotary positions, base 1e6, untied, 1 head',
    config: { ...base, heads: 1, tiedEmbeddings: false, positions: 'rotary', rotaryBase: 1e6 },
    shapes: [[3, 12]],
  },
];

describe('transformer export runs in onnxruntime-web (wasm) like our CPU forward', () => {
  const sessions: OrtPolicySession[] = [];
  // Compiling ORT's wasm (~12 MB) takes seconds on this machine: once per file, not per test.
  beforeAll(() => warmUpOrt({ executionProviders: ['wasm'], ...nodeOrtOptions() }), 60_000);
  afterAll(async () => {
    for (const s of sessions) await s.release();
  });

  for (const [index, { name, config, shapes }] of cases.entries()) {
    it(name, async () => {
      const model = transformerModel(config, 100 + index);
      const bytes = exportTransformerOnnx(config, model.params, model.tokenizer);
      const session = await createOrtSession(bytes, {
        executionProviders: ['wasm'],
        ...nodeOrtOptions(),
      });
      sessions.push(session);
      for (const [batch, seq] of shapes) {
        const tokens = randomTokens(batch * seq, config.vocab, 7 * batch + seq);
        const cpu = transformerForward(config, model.layout, model.params, tokens, batch, seq);
        const ort = await ortForward(session, tokens, batch, seq);
        const scale = Math.max(1, maxAbs(cpu.logits));
        const diff = maxAbsDiff(ort.logits, cpu.logits);
        expect(scale, 'the random model has a non-trivial logit scale').toBeGreaterThan(0.5);
        expect(diff, `logits B=${batch} T=${seq}`).toBeLessThanOrEqual(TOLERANCE * scale);
        if (config.valueHead) {
          const vscale = Math.max(1, maxAbs(cpu.values!));
          expect(maxAbsDiff(ort.values!, cpu.values!), 'values').toBeLessThanOrEqual(
            TOLERANCE * vscale,
          );
        } else {
          expect(ort.values).toBeUndefined();
        }
      }
    });
  }

  it('the check can fail: one bias changed by 0.05 after export is caught', async () => {
    const model = transformerModel(base, 5);
    const session = await createOrtSession(
      exportTransformerOnnx(base, model.params, model.tokenizer),
      { executionProviders: ['wasm'], ...nodeOrtOptions() },
    );
    sessions.push(session);
    model.layout.view(model.params, 'h0.mlp.proj.b')[3]! += 0.05;
    const tokens = randomTokens(8, base.vocab, 1);
    const cpu = transformerForward(base, model.layout, model.params, tokens, 2, 4);
    const ort = await ortForward(session, tokens, 2, 4);
    expect(maxAbsDiff(ort.logits, cpu.logits)).toBeGreaterThan(TOLERANCE * maxAbs(cpu.logits) * 10);
  });
});
