import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { directoryFiles } from '../../../src/cli/file-source';
import { fromHfConfig } from '../../../src/models/hf/hf-config';
import { readGenerationConfig } from '../../../src/models/hf/generation-config';
import {
  filesFrom,
  INDEX_FILE,
  loadHfWeights,
  SINGLE_FILE,
} from '../../../src/models/hf/hf-checkpoint';
import { hfBaseGroup, hfParamSpecs } from '../../../src/models/hf/hf-weights';
import { filesFromBlobs, readHfModelConfig } from '../../../src/models/hf/picked-files';
import { blobSource, bytesSource } from '../../../src/models/hf/random-access-source';
import { writeSafetensors, type TensorToWrite } from '../../../src/models/hf/safetensors-writer';
import { parameterCount, type ModelSpec } from '../../../src/models/model-spec';

const FIXTURES = 'tests/fixtures/hf';
const readJson = (model: string, file: string) =>
  JSON.parse(readFileSync(join(FIXTURES, model, file), 'utf8')) as Record<string, unknown>;

/**
 * The value of tensor `name`'s element `i`, read here straight from the file's bytes: the header
 * parsed by hand, the bits decoded by the formats' definitions (in f64).
 */
function rawValue(model: string, file: string, name: string, i: number) {
  const bytes = readFileSync(join(FIXTURES, model, file));
  const n = Number(bytes.readBigUInt64LE(0));
  const entry = JSON.parse(bytes.subarray(8, 8 + n).toString('utf8'))[name];
  const at = 8 + n + entry.data_offsets[0];
  if (entry.dtype === 'F32')
    return { bits: bytes.readUInt32LE(at + 4 * i), value: bytes.readFloatLE(at + 4 * i) };
  const bits = bytes.readUInt16LE(at + 2 * i);
  if (entry.dtype === 'BF16') {
    const sign = bits >> 15 ? -1 : 1;
    const e = (bits >> 7) & 0xff;
    const m = bits & 0x7f;
    return { bits, value: sign * (e === 0 ? m * 2 ** -133 : (1 + m / 128) * 2 ** (e - 127)) };
  }
  const sign = bits >> 15 ? -1 : 1;
  const e = (bits >> 10) & 0x1f;
  const m = bits & 0x3ff;
  return { bits, value: sign * (e === 0 ? m * 2 ** -24 : (1 + m / 1024) * 2 ** (e - 15)) };
}

const CASES = [
  { model: 'llama-tiny', dtype: 'F32', file: SINGLE_FILE, tensors: 2 + 2 * 9 },
  { model: 'qwen2-tiny', dtype: 'BF16', file: SINGLE_FILE, tensors: 3 + 2 * 12 },
  {
    model: 'qwen3-tiny',
    dtype: 'F16',
    file: 'model-00002-of-00002.safetensors',
    tensors: 2 + 2 * 11,
  },
] as const;

describe('loading the fixture checkpoints', () => {
  it.each(CASES)(
    '$model ($dtype): every tensor, its shape, values exactly as stored',
    async ({ model, dtype, file, tensors }) => {
      const spec = fromHfConfig(readJson(model, 'config.json'));
      const files = directoryFiles(join(FIXTURES, model));
      const seen: string[] = [];
      const loaded = await loadHfWeights(spec, files, {
        f16: true,
        onTensor: (_, __, name) => seen.push(name),
      });
      await files.close();
      expect(loaded.dtypes).toEqual([dtype]);
      expect(loaded.layout.entries.length).toBe(tensors);
      expect(new Set(seen)).toEqual(new Set(hfParamSpecs(spec).map((s) => s.name)));
      expect(loaded.layout.parameterCount).toBe(parameterCount(spec));
      expect(loaded.overflowed).toBe(0);
      const f32 = loaded.f32!;
      const f16 = loaded.f16!;
      // A layer-1 tensor (the second shard of qwen3-tiny) and the final norm, a few elements each.
      for (const name of ['model.layers.1.mlp.down_proj.weight', 'model.norm.weight']) {
        const entry = loaded.layout.entry(name);
        for (const i of [0, 1, 17, entry.size - 1]) {
          const raw = rawValue(model, file, name, i);
          expect(f32[entry.offset + i]).toBe(raw.value);
          if (dtype === 'F16') expect(f16[entry.offset + i]).toBe(raw.bits);
        }
      }
      if (model === 'qwen2-tiny') {
        const bias = loaded.layout.entry('model.layers.0.self_attn.k_proj.bias');
        expect(bias.shape).toEqual([32]);
        expect(f32[bias.offset + 5]).toBe(rawValue(model, file, bias.name, 5).value);
        expect(loaded.layout.entry('lm_head.weight').shape).toEqual([400, 64]);
      }
      if (model === 'qwen3-tiny') {
        expect(loaded.layout.entry('model.layers.0.self_attn.q_proj.weight').shape).toEqual([
          128, 64,
        ]);
        expect(loaded.layout.entry('model.layers.0.self_attn.o_proj.weight').shape).toEqual([
          64, 128,
        ]);
        expect(loaded.layout.entry('model.layers.1.self_attn.k_norm.weight').shape).toEqual([32]);
        const emb = loaded.layout.entry('model.embed_tokens.weight');
        expect(f32[emb.offset + 3]).toBe(
          rawValue(model, 'model-00001-of-00002.safetensors', emb.name, 3).value,
        );
      }
    },
  );

  it('f16 halves of the bf16 and f32 fixtures are the nearest f16 of each value', async () => {
    for (const model of ['llama-tiny', 'qwen2-tiny']) {
      const spec = fromHfConfig(readJson(model, 'config.json'));
      const files = directoryFiles(join(FIXTURES, model));
      const { f32, f16 } = await loadHfWeights(spec, files, { f16: true });
      await files.close();
      const f16Value = (h: number) => {
        const e = (h >> 10) & 0x1f;
        const m = h & 0x3ff;
        return (h >> 15 ? -1 : 1) * (e === 0 ? m * 2 ** -24 : (1 + m / 1024) * 2 ** (e - 15));
      };
      let worst = 0;
      let notNearest = 0;
      for (let i = 0; i < f32!.length; i++) {
        const v = f32![i]!;
        const h = f16![i]!;
        // The neighbours h±1 (same sign, finite) must be no nearer than h itself.
        const d = Math.abs(f16Value(h) - v);
        for (const n of [h - 1, h + 1]) {
          const finite = (n & 0x7c00) !== 0x7c00 && n >> 15 === h >> 15;
          if (finite && Math.abs(f16Value(n) - v) < d) notNearest++;
        }
        // Relative error ≤ 2^-11 in f16's normal range.
        if (Math.abs(v) >= 2 ** -14) worst = Math.max(worst, d / Math.abs(v));
      }
      expect(notNearest).toBe(0);
      expect(worst).toBeLessThanOrEqual(2 ** -11);
    }
  });

  it('streams tensor by tensor the same values it would keep', async () => {
    const spec = fromHfConfig(readJson('qwen2-tiny', 'config.json'));
    const files = directoryFiles(join(FIXTURES, 'qwen2-tiny'));
    const kept = await loadHfWeights(spec, files, { f16: true });
    const streamedF32 = new Float32Array(kept.layout.total);
    const streamedF16 = new Uint16Array(kept.layout.total);
    const result = await loadHfWeights(spec, files, {
      f16: true,
      onTensorData: (entry, values) => {
        expect(values.f32!.length).toBe(entry.size);
        streamedF32.set(values.f32!, entry.offset);
        streamedF16.set(values.f16!, entry.offset);
      },
    });
    await files.close();
    expect(result.f32).toBeUndefined();
    expect(result.f16).toBeUndefined();
    expect(Buffer.compare(Buffer.from(streamedF32.buffer), Buffer.from(kept.f32!.buffer))).toBe(0);
    expect(Buffer.compare(Buffer.from(streamedF16.buffer), Buffer.from(kept.f16!.buffer))).toBe(0);
  });

  it("reads the fixtures' generation_config.json", () => {
    expect(readGenerationConfig(readJson('qwen2-tiny', 'generation_config.json'))).toMatchObject({
      eos: [381, 379],
      pad: 379,
    });
    expect(readGenerationConfig(readJson('llama-tiny', 'generation_config.json')).eos).toEqual([
      381,
    ]);
  });
});

/** A small llama spec and a checkpoint for it written by the writer, tensors by name. */
function tinyCheckpoint(change: Partial<ModelSpec> = {}) {
  const spec: ModelSpec = {
    ...fromHfConfig(readJson('llama-tiny', 'config.json')),
    vocab: 16,
    layers: 1,
    ...change,
  };
  const tensors = new Map<string, TensorToWrite>();
  for (const s of hfParamSpecs(spec)) {
    const size = s.shape.reduce((a, b) => a * b, 1);
    tensors.set(s.name, {
      name: s.name,
      dtype: 'F32',
      shape: s.shape,
      data: Float32Array.from({ length: size }, (_, i) => i / 7),
    });
  }
  return { spec, tensors };
}
const single = (tensors: Iterable<TensorToWrite>) =>
  filesFrom(new Map([[SINGLE_FILE, bytesSource(writeSafetensors([...tensors]), SINGLE_FILE)]]));

describe('checkpoint checks', () => {
  it('builds a frozen base group whose layout is the checkpoint’s tensors', () => {
    const { spec } = tinyCheckpoint();
    const group = hfBaseGroup(spec);
    expect(group).toMatchObject({ name: 'base', storage: 'f16', trainable: false });
    expect(group.layout.has('lm_head.weight')).toBe(false);
    // Each tensor at a 128-half (256-byte) offset, so each binds as a slice of the packed buffer.
    expect(group.layout.storage).toBe('f16');
    for (const e of group.layout.entries) expect(e.offset % 128).toBe(0);
    expect(
      hfBaseGroup({ ...spec, tiedEmbeddings: false }, 'f32').layout.entry('lm_head.weight').shape,
    ).toEqual([16, 64]);
  });

  it('names missing, extra and misshapen tensors', async () => {
    const { spec, tensors } = tinyCheckpoint();
    const without = new Map(tensors);
    without.delete('model.layers.0.mlp.up_proj.weight');
    await expect(loadHfWeights(spec, single(without.values()))).rejects.toThrow(
      'missing 1 tensor(s): model.layers.0.mlp.up_proj.weight',
    );
    const extra = [
      ...tensors.values(),
      {
        name: 'model.layers.0.self_attn.q_proj.bias',
        dtype: 'F32' as const,
        shape: [64],
        data: new Float32Array(64),
      },
    ];
    await expect(loadHfWeights(spec, single(extra))).rejects.toThrow(
      '1 tensor(s) the llama config does not have: model.layers.0.self_attn.q_proj.bias',
    );
    const wrong = new Map(tensors);
    wrong.set('model.norm.weight', {
      name: 'model.norm.weight',
      dtype: 'F32',
      shape: [32],
      data: new Float32Array(32),
    });
    await expect(loadHfWeights(spec, single(wrong.values()))).rejects.toThrow(
      '"model.norm.weight" has shape [32], the config gives [64]',
    );
  });

  it('accepts a tied checkpoint that also carries lm_head, and inv_freq buffers, without reading them', async () => {
    const { spec, tensors } = tinyCheckpoint();
    const more = [
      ...tensors.values(),
      {
        name: 'lm_head.weight',
        dtype: 'F32' as const,
        shape: [16, 64],
        data: new Float32Array(1024),
      },
      {
        name: 'model.layers.0.self_attn.rotary_emb.inv_freq',
        dtype: 'F32' as const,
        shape: [8],
        data: new Float32Array(8),
      },
    ];
    const loaded = await loadHfWeights(spec, single(more));
    expect(loaded.ignored.sort()).toEqual([
      'lm_head.weight',
      'model.layers.0.self_attn.rotary_emb.inv_freq',
    ]);
    const norm = loaded.layout.view(loaded.f32!, 'model.norm.weight');
    expect(norm[7]).toBe(Math.fround(7 / 7));
    // Untied, lm_head is required.
    await expect(
      loadHfWeights({ ...spec, tiedEmbeddings: false }, single(tensors.values())),
    ).rejects.toThrow('missing 1 tensor(s): lm_head.weight');
  });

  it('reads shards through the index from Blobs, and refuses a wrong or missing shard', async () => {
    const { spec, tensors } = tinyCheckpoint();
    const all = [...tensors.values()];
    const a = all.filter((t) => t.name.includes('mlp'));
    const b = all.filter((t) => !t.name.includes('mlp'));
    const weightMap = Object.fromEntries([
      ...a.map((t) => [t.name, 'a.safetensors']),
      ...b.map((t) => [t.name, 'b.safetensors']),
    ]);
    const index = (map: Record<string, string>) =>
      blobSource(new Blob([JSON.stringify({ metadata: {}, weight_map: map })]), INDEX_FILE);
    const shards = (map: Record<string, string>) =>
      new Map([
        [INDEX_FILE, index(map)],
        ['a.safetensors', blobSource(new Blob([writeSafetensors(a)]), 'a.safetensors')],
        ['b.safetensors', blobSource(new Blob([writeSafetensors(b)]), 'b.safetensors')],
      ]);
    const loaded = await loadHfWeights(spec, filesFrom(shards(weightMap)));
    expect(loaded.layout.view(loaded.f32!, 'model.layers.0.mlp.down_proj.weight')[14]).toBe(2);
    const moved = { ...weightMap, 'model.norm.weight': 'a.safetensors' };
    await expect(loadHfWeights(spec, filesFrom(shards(moved)))).rejects.toThrow(
      'puts "model.norm.weight" in a.safetensors, but it is in b.safetensors',
    );
    const missingShard = shards(weightMap);
    missingShard.delete('b.safetensors');
    await expect(loadHfWeights(spec, filesFrom(missingShard))).rejects.toThrow(
      'names the shard "b.safetensors", which is not among the files',
    );
    await expect(loadHfWeights(spec, filesFrom(shards({ x: '../x.safetensors' })))).rejects.toThrow(
      'must name a .safetensors file beside it',
    );
    await expect(loadHfWeights(spec, filesFrom(new Map()))).rejects.toThrow(
      'no model.safetensors or model.safetensors.index.json',
    );
  });
});

describe('picked files', () => {
  it('reads a folder picked as Files: config, generation defaults, weights', async () => {
    const folder = 'qwen3-tiny';
    const names = [
      'config.json',
      'generation_config.json',
      INDEX_FILE,
      'model-00001-of-00002.safetensors',
      'model-00002-of-00002.safetensors',
    ];
    const files = filesFromBlobs(
      names.map((n) => new File([readFileSync(join(FIXTURES, folder, n))], n)),
    );
    const { spec, dtype, generation } = await readHfModelConfig(files);
    expect(spec).toMatchObject({ family: 'qwen3', headDim: 32, vocab: 400, tiedEmbeddings: true });
    expect(dtype).toBe('float16');
    expect(generation.eos).toEqual([381, 379]);
    const loaded = await loadHfWeights(spec, files);
    const entry = loaded.layout.entry('model.layers.1.self_attn.q_norm.weight');
    expect(loaded.f32![entry.offset + 2]).toBe(
      rawValue(folder, 'model-00002-of-00002.safetensors', entry.name, 2).value,
    );
  });

  it('falls back to config.json ids without generation_config.json, refuses a missing config or a repeated name', async () => {
    const config = readFileSync(join(FIXTURES, 'llama-tiny', 'config.json'));
    const files = filesFromBlobs([['llama/config.json', new Blob([config])]]);
    expect((await readHfModelConfig(files)).generation).toEqual({ bos: 380, eos: [381] });
    await expect(readHfModelConfig(filesFromBlobs([]))).rejects.toThrow('config.json is missing');
    expect(() =>
      filesFromBlobs([
        ['a/config.json', new Blob([])],
        ['b/config.json', new Blob([])],
      ]),
    ).toThrow('two files are named config.json');
  });
});
