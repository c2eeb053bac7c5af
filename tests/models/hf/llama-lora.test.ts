/**
 * LoRA on the Llama-family CPU model: adapter gradients against float64 central differences with
 * the base frozen (no base gradient computed), the adapters switched off giving the base model
 * from the same weights, PEFT's names and shapes, and the refusals.
 */
import { describe, expect, it } from 'vitest';
import { llamaBackward, llamaLoraBackward } from '../../../src/models/hf/llama-cpu-backward';
import { llamaForward } from '../../../src/models/hf/llama-cpu';
import { llamaGenerate } from '../../../src/models/hf/llama-cpu-generate';
import {
  llamaModelFromWeights,
  llamaTensorEntries,
} from '../../../src/models/hf/llama-cpu-weights';
import {
  createLlamaLora,
  llamaLoraFromParams,
  llamaLoraFromTensors,
  llamaLoraGroups,
  loraParamLayout,
  loraTensorEntries,
  resolveLoraTargets,
  type LoraSettings,
} from '../../../src/models/hf/llama-lora';
import type { ModelSpec } from '../../../src/models/model-spec';
import { trainableGroupNamed } from '../../../src/models/param-groups';
import { seededRandom } from '../../../src/util/random';
import { dot, gradCheck, probeWeights } from '../../support/gradcheck';
import { tinyLlamaSpec } from '../../support/tiny-llama-specs';

const spec = tinyLlamaSpec;

function randomWeights<T extends Float32Array | Float64Array>(
  s: ModelSpec,
  make: (n: number) => T,
  seed: number,
): Map<string, T> {
  const next = seededRandom(seed);
  const weights = new Map<string, T>();
  for (const { name, shape } of llamaTensorEntries(s)) {
    const data = make(shape.reduce((a, b) => a * b, 1));
    const norm = name.endsWith('norm.weight');
    for (let i = 0; i < data.length; i++) data[i] = (norm ? 1 : 0) + next() - 0.5;
    weights.set(name, data);
  }
  return weights;
}

const ALL: LoraSettings = { rank: 2, alpha: 3, targets: resolveLoraTargets('all-linear') };

describe.each(['llama', 'qwen2', 'qwen3'] as const)('LoRA on %s, float64', (family) => {
  const s = spec(family);
  const model = llamaModelFromWeights(
    s,
    randomWeights(s, (n) => new Float64Array(n), 3),
  );
  const layout = loraParamLayout(s, ALL);
  // Non-zero A and B (a fresh adapter's B = 0 would make every dA zero).
  const params = Float64Array.from({ length: layout.total }, (_, i) => Math.sin(i * 0.37) * 0.6);
  const lora = llamaLoraFromParams(s, ALL, params);
  const ids = Int32Array.from([1, 7, 3, 10, 0, 5, 5, 2]); // B = 2, T = 4
  const probe = probeWeights(2 * 4 * s.vocab, 9);
  const loss = () => dot(probe, llamaForward(model, ids, 2, 4, { lora }).logits);
  const forward = llamaForward(model, ids, 2, 4, { lora });
  const { grads, byName } = llamaLoraBackward(model, forward, probe);

  it('adapter gradients match central differences for every tensor', () => {
    expect([...byName.keys()].sort()).toEqual(layout.entries.map((e) => e.name).sort());
    expect(byName.size).toBe(2 * 7 * 2);
    for (const entry of layout.entries) {
      const view = layout.view(params, entry.name);
      const result = gradCheck(view, byName.get(entry.name)!, loss, { maxEntries: 12 });
      expect(result.maxRelError, `${entry.name}: ${JSON.stringify(result.worst)}`).toBeLessThan(
        1e-6,
      );
    }
    expect(grads.length).toBe(layout.total);
  });

  it('base gradients of the adapted model (llamaBackward) match central differences', () => {
    const base = llamaBackward(model, forward, probe);
    for (const [name, weight] of [
      ['model.layers.0.self_attn.q_proj.weight', model.layers[0]!.q],
      ['model.embed_tokens.weight', model.embed],
    ] as const) {
      const result = gradCheck(weight, base.get(name)!, loss, { maxEntries: 12 });
      expect(result.maxRelError, name).toBeLessThan(1e-6);
    }
  });

  it('adapters off is the base model, from the same weight arrays', () => {
    const base = llamaForward(model, ids, 2, 4);
    expect(base.activations.lora).toBeUndefined();
    expect(Object.keys(base.activations.layers[0]!.loraU)).toEqual([]);
    const maxDiff = Math.max(...forward.logits.map((v, i) => Math.abs(v - base.logits[i]!)));
    expect(maxDiff).toBeGreaterThan(1e-3); // the adapters do change the model
    // A fresh adapter (B = 0) changes nothing, bit for bit.
    const fresh = llamaLoraFromParams(s, ALL, loraParamLayout(s, ALL).initialize(5, 'f64'));
    const same = llamaForward(model, ids, 2, 4, { lora: fresh });
    expect(Array.from(same.logits)).toEqual(Array.from(base.logits));
  });
});

describe('LoRA settings, layout and tensors', () => {
  const s = spec('qwen2');

  it('targets: "all-linear" is every block projection; a list keeps the modules named', () => {
    expect(resolveLoraTargets('all-linear')).toEqual([
      'q_proj',
      'k_proj',
      'v_proj',
      'o_proj',
      'gate_proj',
      'up_proj',
      'down_proj',
    ]);
    expect(resolveLoraTargets(['v_proj', 'q_proj', 'q_proj'])).toEqual(['q_proj', 'v_proj']);
    expect(resolveLoraTargets([])).toEqual([]);
    expect(() => resolveLoraTargets(['lm_head'])).toThrow(
      /target_modules\[0\] must be one of q_proj, k_proj, v_proj, o_proj, gate_proj, up_proj, down_proj, got "lm_head"/,
    );
    expect(() => resolveLoraTargets('.*proj')).toThrow(/target_modules must be "all-linear" or/);
  });

  it('PEFT names and shapes: A [r, in], B [out, r], only the targeted modules', () => {
    const entries = loraTensorEntries(s, { rank: 3, alpha: 6, targets: ['k_proj', 'down_proj'] });
    expect(entries).toEqual([
      { name: 'base_model.model.model.layers.0.self_attn.k_proj.lora_A.weight', shape: [3, 8] },
      { name: 'base_model.model.model.layers.0.self_attn.k_proj.lora_B.weight', shape: [4, 3] },
      { name: 'base_model.model.model.layers.0.mlp.down_proj.lora_A.weight', shape: [3, 6] },
      { name: 'base_model.model.model.layers.0.mlp.down_proj.lora_B.weight', shape: [8, 3] },
      { name: 'base_model.model.model.layers.1.self_attn.k_proj.lora_A.weight', shape: [3, 8] },
      { name: 'base_model.model.model.layers.1.self_attn.k_proj.lora_B.weight', shape: [4, 3] },
      { name: 'base_model.model.model.layers.1.mlp.down_proj.lora_A.weight', shape: [3, 6] },
      { name: 'base_model.model.model.layers.1.mlp.down_proj.lora_B.weight', shape: [8, 3] },
    ]);
  });

  it('a fresh group: trainable f32 "lora", A within ±1/√in, B zero, scale alpha / r', () => {
    const lora = createLlamaLora(s, { rank: 4, alpha: 8, targets: ['q_proj', 'down_proj'] }, 1);
    expect(lora.group.name).toBe('lora');
    expect(lora.group.trainable).toBe(true);
    expect(lora.group.storage).toBe('f32');
    expect(lora.scale).toBe(2);
    const q = lora.layers[1]!.q_proj!;
    const down = lora.layers[1]!.down_proj!;
    expect(lora.layers[1]!.k_proj).toBeUndefined();
    expect(Math.max(...q.a.map(Math.abs))).toBeLessThanOrEqual(1 / Math.sqrt(8));
    expect(Math.max(...down.a.map(Math.abs))).toBeLessThanOrEqual(1 / Math.sqrt(6));
    expect(Math.max(...down.a.map(Math.abs))).toBeGreaterThan(1 / Math.sqrt(8)); // its own fan-in
    expect(q.b.every((v) => v === 0) && down.b.every((v) => v === 0)).toBe(true);
    // The views share the group's one array.
    q.a[0] = 42;
    const name = 'base_model.model.model.layers.1.self_attn.q_proj.lora_A.weight';
    expect(lora.params[lora.group.layout.entry(name).offset]).toBe(42);
  });

  it('a LoRA run: frozen base group (f16), trainable lora group; only lora has a gradient', () => {
    const lora = createLlamaLora(s, { rank: 4, alpha: 8, targets: ['q_proj'] }, 1);
    const groups = llamaLoraGroups(s, lora);
    expect(groups.map((g) => [g.name, g.trainable, g.storage])).toEqual([
      ['base', false, 'f16'],
      ['lora', true, 'f32'],
    ]);
    expect(trainableGroupNamed(groups, 'lora').layout.parameterCount).toBe(2 * (4 * 8 + 8 * 4));
    expect(() => trainableGroupNamed(groups, 'base')).toThrow(/group 'base' is frozen/);
  });

  it('the forward refuses adapters made for a model of other shapes', () => {
    const model = llamaModelFromWeights(
      s,
      randomWeights(s, (n) => new Float32Array(n), 4),
    );
    const other = createLlamaLora(spec('qwen3'), { rank: 2, alpha: 2, targets: ['q_proj'] }, 1);
    expect(() => llamaForward(model, Int32Array.of(1, 2), 1, 2, { lora: other })).toThrow(
      "llamaForward: lora adapts layer 0's q_proj as 8 → 16, the model's is 8 → 8",
    );
  });

  it('refuses bad settings naming the PEFT field', () => {
    expect(() => createLlamaLora(s, { rank: 0, alpha: 8, targets: ['q_proj'] }, 1)).toThrow(
      /lora: r must be an integer in \[1, 1024\], got 0/,
    );
    expect(() => createLlamaLora(s, { rank: 4, alpha: -1, targets: ['q_proj'] }, 1)).toThrow(
      /lora_alpha must be a finite number > 0, got -1/,
    );
  });

  it('tensors: a missing, an extra and a wrong-sized tensor are named with the expected shape', () => {
    const settings: LoraSettings = { rank: 2, alpha: 4, targets: ['v_proj'] };
    const tensors = new Map(
      loraTensorEntries(s, settings).map((e) => [
        e.name,
        new Float32Array(e.shape[0]! * e.shape[1]!),
      ]),
    );
    expect(llamaLoraFromTensors(s, settings, tensors).layers).toHaveLength(2);
    const missing = new Map(tensors);
    missing.delete('base_model.model.model.layers.1.self_attn.v_proj.lora_B.weight');
    expect(() => llamaLoraFromTensors(s, settings, missing)).toThrow(
      "adapter is missing the tensor 'base_model.model.model.layers.1.self_attn.v_proj.lora_B.weight' [4, 2]",
    );
    const extra = new Map(tensors);
    extra.set(
      'base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight',
      new Float32Array(16),
    );
    expect(() => llamaLoraFromTensors(s, settings, extra)).toThrow(
      /holds the tensor 'base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight', which r = 2 on v_proj/,
    );
    const wrong = new Map(tensors);
    wrong.set(
      'base_model.model.model.layers.0.self_attn.v_proj.lora_A.weight',
      new Float32Array(15),
    );
    expect(() => llamaLoraFromTensors(s, settings, wrong)).toThrow(
      /\['base_model.model.model.layers.0.self_attn.v_proj.lora_A.weight'\] must have \[2, 8\] = 16 elements, got 15/,
    );
  });

  it('generation applies the adapters: the greedy token is the adapted forward argmax', () => {
    const model = llamaModelFromWeights(
      s,
      randomWeights(s, (n) => new Float32Array(n), 4),
    );
    const settings: LoraSettings = { rank: 2, alpha: 4, targets: resolveLoraTargets('all-linear') };
    const layout = loraParamLayout(s, settings);
    const lora = llamaLoraFromParams(
      s,
      settings,
      Float32Array.from({ length: layout.total }, (_, i) => Math.cos(i * 0.91)),
    );
    const prompt = Int32Array.of(3, 1, 4);
    const argmax = (logits: Float32Array) => {
      const last = logits.subarray(2 * s.vocab);
      return last.indexOf(Math.max(...last));
    };
    const adapted = argmax(llamaForward(model, prompt, 1, 3, { lora }).logits);
    const base = argmax(llamaForward(model, prompt, 1, 3).logits);
    const out = llamaGenerate(model, [prompt], { maxNewTokens: 1, temperature: 0, lora });
    expect(out.tokens[0]![0]).toBe(adapted);
    const plain = llamaGenerate(model, [prompt], { maxNewTokens: 1, temperature: 0 });
    expect(plain.tokens[0]![0]).toBe(base);
  });
});
