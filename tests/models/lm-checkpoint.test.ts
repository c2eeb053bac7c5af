/** Saving and loading a language model: exact round trip, resumable training, clear refusals. */
import { describe, expect, it } from 'vitest';
import { CheckpointError } from '../../src/models/checkpoint';
import { loadLanguageModel, saveLanguageModel } from '../../src/models/lm-checkpoint';
import { CpuLanguageModel } from '../../src/models/lm-cpu';
import type { OptimizerConfig } from '../../src/models/optimizer';
import { CharTokenizer } from '../../src/models/tokenizer';
import type { TransformerConfig } from '../../src/models/transformer-config';
import { transformerLayout } from '../../src/models/transformer-params';
import { packSequences } from '../../src/models/sequence-batch';

const tokenizer = CharTokenizer.createDefault();
const config: TransformerConfig = {
  vocab: tokenizer.vocabSize,
  context: 10,
  width: 16,
  layers: 1,
  heads: 2,
  tiedEmbeddings: false,
  valueHead: true,
};
const optimizer: OptimizerConfig = { lr: 1e-2, weightDecay: 0.01, maxGradNorm: 1 };
const batches = ['ab=', 'cab=', 'e=', 'dd='].map((prompt) =>
  packSequences(
    tokenizer,
    [{ prompt, completion: [...prompt.slice(0, -1)].reverse().join('') }],
    10,
  ),
);

async function trained(steps: number) {
  const model = new CpuLanguageModel(config, transformerLayout(config).initialize(7));
  for (let i = 0; i < steps; i++) await model.trainCrossEntropy(batches[i]!, optimizer);
  return model;
}

describe('language model checkpoints', () => {
  it('round-trips weights, moments and step exactly', async () => {
    const model = await trained(2);
    const bytes = await saveLanguageModel(model, { tokenizer: tokenizer.spec, seed: 7, optimizer });
    const loaded = loadLanguageModel(bytes);
    expect(loaded.config).toEqual(config);
    expect(loaded.tokenizer).toEqual(tokenizer.spec);
    expect(loaded.params).toEqual(await model.readParams());
    const snapshot = await model.readOptimizer();
    expect(loaded.optimizer!.m).toEqual(snapshot.m);
    expect(loaded.optimizer!.v).toEqual(snapshot.v);
    expect(loaded.optimizer!.stats[3]).toBe(2);
    expect(loaded.checkpoint.optimizer!.hyperparams.lr).toBe(1e-2);
  });

  it('resumes: 2 steps + save + load + 2 steps equals 4 steps straight', async () => {
    const straight = await trained(4);
    const first = await trained(2);
    const loaded = loadLanguageModel(
      await saveLanguageModel(first, { tokenizer: tokenizer.spec, seed: 7 }),
    );
    const resumed = new CpuLanguageModel(loaded.config, loaded.params);
    resumed.writeOptimizer(loaded.optimizer!);
    for (const batch of batches.slice(2)) await resumed.trainCrossEntropy(batch, optimizer);
    expect(await resumed.readParams()).toEqual(await straight.readParams());
  });

  it('refuses a corrupted or truncated file, naming the problem', async () => {
    const bytes = await saveLanguageModel(await trained(1), { tokenizer: tokenizer.spec, seed: 1 });
    const flipped = bytes.slice();
    flipped[flipped.length - 9]! ^= 0x10; // inside the payload
    expect(() => loadLanguageModel(flipped)).toThrow(CheckpointError);
    expect(() => loadLanguageModel(flipped)).toThrow(/checksum|crc/i);
    expect(() => loadLanguageModel(bytes.slice(0, bytes.length - 100))).toThrow(/truncated|short/i);
  });

  it('refuses a file whose tensors do not fit the config it declares', async () => {
    const model = await trained(0);
    const { encodeCheckpoint, decodeCheckpoint } = await import('../../src/models/checkpoint');
    const ckpt = decodeCheckpoint(
      await saveLanguageModel(model, { tokenizer: tokenizer.spec, seed: 1 }),
    );
    const edited = { ...ckpt, model: { ...ckpt.model, config: { ...config, width: 32 } } };
    delete (edited as { optimizer?: unknown }).optimizer;
    expect(() => loadLanguageModel(encodeCheckpoint(edited))).toThrow(/shape|wte/);
    const badConfig = { ...ckpt, model: { ...ckpt.model, config: { ...config, heads: 3 } } };
    expect(() => loadLanguageModel(encodeCheckpoint(badConfig))).toThrow(/model.config.*width/);
  });
});
