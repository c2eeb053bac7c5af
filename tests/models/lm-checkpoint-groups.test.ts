/**
 * Grouped language-model checkpoints: the ModelSpec, the groups and each group's tensors under its
 * name are written; the flat form of older files still loads to the same weights; a header whose
 * spec, groups or tokenizer disagree with its tensors is refused naming the field.
 */
import { describe, expect, it } from 'vitest';
import {
  CheckpointError,
  decodeCheckpoint,
  encodeCheckpoint,
  type Checkpoint,
} from '../../src/models/checkpoint';
import { layoutToTensors } from '../../src/models/layout-tensors';
import {
  loadLanguageModel,
  restoreLanguageModel,
  saveLanguageModel,
} from '../../src/models/lm-checkpoint';
import { CpuLanguageModel } from '../../src/models/lm-cpu';
import { fromTransformerConfig } from '../../src/models/model-spec';
import { packSequences } from '../../src/models/sequence-batch';
import { CharTokenizer } from '../../src/models/tokenizer';
import type { TransformerConfig } from '../../src/models/transformer-config';
import { transformerLayout } from '../../src/models/transformer-params';

const tokenizer = CharTokenizer.createDefault();
const config: TransformerConfig = {
  vocab: tokenizer.vocabSize,
  context: 12,
  width: 16,
  layers: 1,
  heads: 2,
  tiedEmbeddings: true,
  valueHead: false,
  positions: 'rotary',
};
const optimizer = { lr: 1e-2, weightDecay: 0.01, maxGradNorm: 1 };
const HF_TOKENIZER = { kind: 'hf', version: 1, source: 'org/model', sha256: 'ab'.repeat(32) };

async function trainedModel(): Promise<CpuLanguageModel> {
  const model = new CpuLanguageModel(config, transformerLayout(config).initialize(3));
  const batch = packSequences(tokenizer, [{ prompt: 'abc=', completion: 'cba' }], 12);
  await model.trainCrossEntropy(batch, optimizer);
  return model;
}

async function savedHeader(): Promise<Checkpoint> {
  const model = await trainedModel();
  return decodeCheckpoint(await saveLanguageModel(model, { tokenizer: tokenizer.spec, seed: 5 }));
}

/** The saved checkpoint with its model.config replaced. */
async function withConfig(edit: (config: Record<string, unknown>) => void): Promise<Uint8Array> {
  const ckpt = await savedHeader();
  const modelConfig = structuredClone(ckpt.model.config) as Record<string, unknown>;
  edit(modelConfig);
  return encodeCheckpoint({ ...ckpt, model: { ...ckpt.model, config: modelConfig } });
}

describe('grouped language-model checkpoints', () => {
  it('write the spec, the groups and the tensors of the base group under its name', async () => {
    const ckpt = await savedHeader();
    expect(ckpt.model.kind).toBe('transformer');
    const { spec, groups } = ckpt.model.config as { spec: unknown; groups: unknown };
    expect(spec).toEqual({ ...fromTransformerConfig(config) });
    expect(groups).toEqual([{ name: 'base', storage: 'f32', trainable: true }]);
    const names = transformerLayout(config).entries.map((e) => `base/${e.name}`);
    expect(ckpt.tensors.map((t) => t.name)).toEqual(names);
    expect(ckpt.optimizer!.m.map((t) => t.name)).toEqual(names);
    expect(ckpt.tokenizer).toEqual({ kind: 'char', version: 1, chars: tokenizer.spec.chars });
  });

  it('load back the spec, the groups and a config equal to the one saved', async () => {
    const model = await trainedModel();
    const loaded = loadLanguageModel(
      await saveLanguageModel(model, { tokenizer: tokenizer.spec, seed: 5 }),
    );
    expect(loaded.spec).toEqual(model.spec);
    expect(loaded.config).toEqual(config); // the default rotary base stays left out
    expect(loaded.groups.map((g) => [g.group.name, g.group.trainable])).toEqual([['base', true]]);
    expect(loaded.groups[0]!.params).toBe(loaded.params);
    expect(loaded.params).toEqual(await model.readParams('base'));
    expect(loaded.optimizer!.m).toEqual((await model.readOptimizer('base')).m);
    expect(loaded.optimizer!.stats[3]).toBe(1);
  });

  it('still load a flat checkpoint (TransformerConfig, unprefixed names) to the same weights', async () => {
    const model = await trainedModel();
    const layout = transformerLayout(config);
    const params = await model.readParams();
    const { m, v } = await model.readOptimizer();
    const flat = encodeCheckpoint({
      model: { kind: 'transformer', config },
      tokenizer: tokenizer.spec,
      step: 1,
      seed: 5,
      tensors: layoutToTensors(layout, params),
      optimizer: {
        kind: 'adamw',
        step: 1,
        hyperparams: {},
        m: layoutToTensors(layout, m),
        v: layoutToTensors(layout, v),
      },
    });
    const loaded = loadLanguageModel(flat);
    expect(loaded.config).toEqual(config);
    expect(loaded.spec).toEqual(fromTransformerConfig(config));
    expect(loaded.params).toEqual(params);
    expect(loaded.optimizer!.v).toEqual(v);
  });

  it('refuse a tensor whose shape disagrees with the spec, naming the spec field', async () => {
    // A consistent spec of another width: every field valid, the tensors of the old width.
    const wider = fromTransformerConfig({ ...config, width: 32 });
    const bytes = await withConfig((c) => (c.spec = wider));
    expect(() => loadLanguageModel(bytes)).toThrow(CheckpointError);
    expect(() => loadLanguageModel(bytes)).toThrow(
      'checkpoint tensors["base/wte"].shape: shape mismatch for "base/wte": dimension 1 is ' +
        "model.config.spec.width = 32, but the file's is 16",
    );
    const vocab = await withConfig((c) => ((c.spec as Record<string, unknown>).vocab = 90));
    expect(() => loadLanguageModel(vocab)).toThrow('model.config.spec.vocab = 90');
    // A field the tiny GPT fixes, changed alone: refused by name before any tensor is read.
    const headDim = await withConfig((c) => ((c.spec as Record<string, unknown>).headDim = 4));
    expect(() => loadLanguageModel(headDim)).toThrow(
      "checkpoint model.config.spec: is not a model this lab can load: ModelSpec: headDim must be 8 in a 'gpt' spec",
    );
  });

  it('refuse a spec that is invalid, of a family with no layout, or with wrong groups', async () => {
    const badHeads = await withConfig((c) => ((c.spec as Record<string, unknown>).kvHeads = 3));
    expect(() => loadLanguageModel(badHeads)).toThrow(/model\.config\.spec: .*kvHeads/);
    const llama = await withConfig((c) => ((c.spec as Record<string, unknown>).family = 'llama'));
    expect(() => loadLanguageModel(llama)).toThrow(
      /model\.config\.spec: .*'llama' has no parameter layout/,
    );
    const frozen = await withConfig(
      (c) => (c.groups = [{ name: 'base', storage: 'f32', trainable: false }]),
    );
    expect(() => loadLanguageModel(frozen)).toThrow(
      "checkpoint model.config.groups[0]: must list the model's groups base (trainable)",
    );
    const extra = await withConfig((c) => (c.version = 2));
    expect(() => loadLanguageModel(extra)).toThrow('model.config.version');
  });

  it('refuse moments that miss a trainable tensor, and a non-char tokenizer for the tiny GPT', async () => {
    const ckpt = await savedHeader();
    const o = ckpt.optimizer!;
    const partial = encodeCheckpoint({
      ...ckpt,
      optimizer: { ...o, m: o.m.slice(1), v: o.v.slice(1) },
    });
    expect(() => loadLanguageModel(partial)).toThrow(/checkpoint optimizer\.m: covers \d+ of \d+/);
    const hf = encodeCheckpoint({ ...ckpt, tokenizer: HF_TOKENIZER as never });
    expect(decodeCheckpoint(hf).tokenizer).toEqual(HF_TOKENIZER);
    expect(() => loadLanguageModel(hf)).toThrow(
      "checkpoint tokenizer.kind: the tiny GPT reads a character tokenizer ('char'), found 'hf'",
    );
    const model = await trainedModel();
    await expect(
      saveLanguageModel(model, { tokenizer: HF_TOKENIZER as never, seed: 1 }),
    ).rejects.toThrow('checkpoint tokenizer.kind: the tiny GPT reads a character tokenizer');
  });
});

describe('a language model by parameter group', () => {
  it('resumes group by group: save, restore into a fresh model, one more step as straight', async () => {
    const batch = packSequences(tokenizer, [{ prompt: 'ab=', completion: 'ba' }], 12);
    const straight = await trainedModel();
    const saved = await saveLanguageModel(straight, { tokenizer: tokenizer.spec, seed: 5 });
    await straight.trainCrossEntropy(batch, optimizer);
    const fresh = new CpuLanguageModel(config, transformerLayout(config).initialize(9));
    restoreLanguageModel(fresh, loadLanguageModel(saved));
    await fresh.trainCrossEntropy(batch, optimizer);
    expect(await fresh.readParams()).toEqual(await straight.readParams());
    const other = new CpuLanguageModel(
      { ...config, width: 32 },
      transformerLayout({ ...config, width: 32 }).initialize(1),
    );
    expect(() => restoreLanguageModel(other, loadLanguageModel(saved))).toThrow(
      /checkpoint model\.config\.spec: does not describe this model/,
    );
  });

  it('reads and writes its one trainable group, base, and knows no other', async () => {
    const model = await trainedModel();
    expect(model.spec).toEqual(fromTransformerConfig(config));
    expect(model.groups.map((g) => g.name)).toEqual(['base']);
    expect(model.groups[0]!.layout.total).toBe(model.layout.total);
    const before = await model.readParams();
    expect(await model.readParams('base')).toEqual(before);
    await expect(model.readParams('lora')).rejects.toThrow("no group 'lora' (groups: base)");
    await expect(model.readOptimizer('lora')).rejects.toThrow("no group 'lora'");
    expect(() => model.writeParams(before, 'lora')).toThrow("no group 'lora'");
    model.writeParams(
      before.map((x) => x * 2),
      'base',
    );
    expect(await model.readParams()).toEqual(before.map((x) => x * 2));
  });
});
