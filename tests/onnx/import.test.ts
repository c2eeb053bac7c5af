/**
 * import(export(model)) gives the model back bit for bit; anything else — truncated bytes, random
 * bytes, a valid ONNX model that is not ours, our checkpoint format, or an export with one thing
 * wrong — is an OnnxError with a reason and the field at fault. A foreign Add model is first run in
 * onnxruntime, to show that it is valid ONNX and that the refusal is ours.
 */
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { encodeCheckpoint } from '../../src/models/checkpoint';
import { crc32, hex32 } from '../../src/models/checksum';
import { AgentLayout } from '../../src/models/mlp-policy';
import { ppoActorConfig, ppoCriticConfig } from '../../src/models/mlp-params';
import type { TransformerConfig } from '../../src/models/transformer-config';
import { transformerLayout } from '../../src/models/transformer-params';
import { exportActorCriticOnnx } from '../../src/onnx/export-mlp';
import { exportTransformerOnnx } from '../../src/onnx/export-transformer';
import { floatTensor, int64Tensor } from '../../src/onnx/graph-builder';
import { importActorCriticOnnx, importOnnx, importTransformerOnnx } from '../../src/onnx/import';
import { CHECKSUM_KEY, withChecksum } from '../../src/onnx/integrity';
import { OnnxError } from '../../src/onnx/onnx-error';
import { DataType, decodeModel, encodeModel, type ModelProto } from '../../src/onnx/onnx-proto';
import { nodeOrtOptions } from '../../src/onnx/ort-node';
import { loadOrt } from '../../src/onnx/ort-reference';
import {
  answer,
  nested,
  ODD_VALUES,
  PROTOTYPE_KEYS,
  prototypeSnapshot,
  withKey,
} from '../support/fuzz';
import { seededRandom } from '../support/random';
import { randomParams, transformerModel, warmUpOrt } from './helpers';

const config: TransformerConfig = {
  vocab: 15,
  context: 6,
  width: 16,
  layers: 2,
  heads: 2,
  tiedEmbeddings: false,
  valueHead: true,
};
const model = transformerModel(config, 21);
const exported = exportTransformerOnnx(config, model.params, model.tokenizer, {
  meta: { task: 'reverse', step: 12, warm: true },
  docString: 'a test model',
});

function thrown(fn: () => unknown): OnnxError {
  try {
    fn();
  } catch (error) {
    if (!(error instanceof OnnxError)) throw error;
    return error;
  }
  throw new Error('expected an OnnxError, the import succeeded');
}

/**
 * The exported model, changed by `edit`, encoded again with a checksum of its own (as an export of
 * that model would be), so that the check behind the checksum is the one that answers.
 */
function edited(edit: (m: ModelProto) => void, from: Uint8Array = exported): Uint8Array {
  const m = decodeModel(from);
  setMeta(m, CHECKSUM_KEY, undefined);
  edit(m);
  return withChecksum(encodeModel(m));
}

/** The exported model, changed by `edit`, encoded again as it is (its old checksum, if left). */
function rewritten(edit: (m: ModelProto) => void): Uint8Array {
  const m = decodeModel(exported);
  edit(m);
  return encodeModel(m);
}

function setMeta(m: ModelProto, key: string, value: string | undefined): void {
  m.metadataProps = m.metadataProps.filter((e) => e.key !== key);
  if (value !== undefined) m.metadataProps.push({ key, value });
}

/** A valid ONNX model that is not ours: y = a + b over float [2]. */
function foreignAddModel(): Uint8Array {
  return encodeModel({
    irVersion: 8,
    opsetImports: [{ domain: '', version: 17 }],
    producerName: 'someone-else',
    graph: {
      name: 'add',
      nodes: [{ opType: 'Add', inputs: ['a', 'b'], outputs: ['y'], attributes: [] }],
      initializers: [floatTensor('b', [2], [10, 20])],
      inputs: [{ name: 'a', elemType: DataType.FLOAT, shape: [2] }],
      outputs: [{ name: 'y', elemType: DataType.FLOAT, shape: [2] }],
    },
    metadataProps: [],
  });
}

describe('import(export(model))', () => {
  it('gives back the same config, tokenizer and parameters (bit for bit)', () => {
    const back = importTransformerOnnx(exported);
    expect(back.format).toBe('transformer');
    expect(back.config).toEqual(config);
    expect(back.tokenizerSpec).toEqual(model.tokenizer);
    expect(back.params).toHaveLength(model.params.length);
    expect(new Uint32Array(back.params.buffer)).toEqual(new Uint32Array(model.params.buffer));
    expect(back.meta).toEqual({ task: 'reverse', step: '12', warm: 'true' });
    expect(back.integrity).toEqual({ checked: true });
    expect(importOnnx(exported).format).toBe('transformer');
  });

  it('round-trips a tied model without value head, and an MLP actor-critic', () => {
    const tied = { ...config, tiedEmbeddings: true, valueHead: false, layers: 1 };
    const m = transformerModel(tied, 3);
    const back = importTransformerOnnx(exportTransformerOnnx(tied, m.params, m.tokenizer));
    expect(back.config).toEqual(tied);
    expect(back.params).toEqual(m.params);

    const agent = new AgentLayout(ppoActorConfig(4, 2), ppoCriticConfig(4));
    const params = randomParams(agent.joint, 9);
    const mlp = importActorCriticOnnx(exportActorCriticOnnx(agent, params));
    expect(mlp.actorConfig).toEqual(agent.actorConfig);
    expect(mlp.criticConfig).toEqual(agent.criticConfig);
    expect(mlp.params).toEqual(params);
    expect(importOnnx(exportActorCriticOnnx(agent, params)).format).toBe('mlp-actor-critic');
  });

  it('round-trips a model with rotary positions: its positions and base, and no wpe', () => {
    const rotary: TransformerConfig = { ...config, positions: 'rotary', rotaryBase: 1e6 };
    const m = transformerModel(rotary, 4);
    const back = importTransformerOnnx(exportTransformerOnnx(rotary, m.params, m.tokenizer));
    expect(back.config).toEqual(rotary);
    expect(new Uint32Array(back.params.buffer)).toEqual(new Uint32Array(m.params.buffer));
    expect(transformerLayout(rotary).has('wpe')).toBe(false);
  });

  it('holds only parameters as initializers, named and shaped as the layout', () => {
    const initializers = decodeModel(exported).graph.initializers;
    expect(initializers.map((t) => t.name)).toEqual(model.layout.entries.map((e) => e.name));
    expect(initializers.map((t) => t.dims)).toEqual(model.layout.entries.map((e) => [...e.shape]));
  });
});

describe('import refuses what is not one of our models', () => {
  beforeAll(() => warmUpOrt({ executionProviders: ['wasm'], ...nodeOrtOptions() }), 60_000);

  it('a valid ONNX model that is not ours (onnxruntime runs it; we refuse it)', async () => {
    const bytes = foreignAddModel();
    const ort = await loadOrt(nodeOrtOptions());
    const session = await ort.InferenceSession.create(bytes, { executionProviders: ['wasm'] });
    const out = await session.run({ a: new ort.Tensor('float32', Float32Array.of(1, 2), [2]) });
    expect([...(out.y!.data as Float32Array)]).toEqual([11, 22]);
    await session.release();

    const error = thrown(() => importTransformerOnnx(bytes));
    expect(error.reason).toBe('foreign');
    expect(error.message).toMatch(/no agent-rl-lab metadata/);
    expect(error.message).toMatch(/producer "someone-else", graph "add", 1 initializers/);
    expect(thrown(() => importOnnx(bytes)).reason).toBe('foreign');
  });

  type Case = {
    name: string;
    bytes: () => Uint8Array;
    reason: string;
    field?: string;
    says: RegExp;
  };
  const cases: Case[] = [
    {
      name: 'truncated: the last 10 bytes missing',
      bytes: () => exported.subarray(0, exported.length - 10),
      reason: 'truncated',
      says: /declares \d+ bytes, but only \d+ remain/,
    },
    {
      name: 'truncated: cut in half',
      bytes: () => exported.subarray(0, exported.length >> 1),
      reason: 'truncated',
      says: /at byte \d+/,
    },
    {
      name: 'an agent-rl-lab checkpoint instead of ONNX',
      bytes: () =>
        encodeCheckpoint({ model: { kind: 'transformer', config }, step: 0, seed: 1, tensors: [] }),
      reason: 'foreign',
      says: /"ARLCKPT1": this is an agent-rl-lab checkpoint, not an ONNX file/,
    },
    {
      name: 'an unknown format value',
      bytes: () => edited((m) => setMeta(m, 'agent-rl-lab/format', 'tabular')),
      reason: 'foreign',
      says: /is "tabular"; this lab reads "transformer" or "mlp-actor-critic"/,
    },
    {
      name: 'config that is not JSON',
      bytes: () => edited((m) => setMeta(m, 'config', '{vocab: 15')),
      reason: 'config',
      field: 'metadata_props["config"]',
      says: /is not valid JSON/,
    },
    {
      name: 'config with width not a multiple of heads',
      bytes: () => edited((m) => setMeta(m, 'config', JSON.stringify({ ...config, heads: 3 }))),
      reason: 'config',
      says: /width must be a multiple of heads \(3\)/,
    },
    {
      name: 'no tokenizer',
      bytes: () => edited((m) => setMeta(m, 'tokenizer', undefined)),
      reason: 'config',
      field: 'metadata_props["tokenizer"]',
      says: /is missing/,
    },
    {
      name: 'a tokenizer with more ids than the vocabulary',
      bytes: () =>
        edited((m) =>
          setMeta(m, 'tokenizer', JSON.stringify({ ...model.tokenizer, chars: 'abcdefghij' })),
        ),
      reason: 'config',
      says: /has 19 ids, more than the model's vocabulary \(15\)/,
    },
    {
      name: 'a missing tensor',
      bytes: () =>
        edited((m) => {
          m.graph.initializers = m.graph.initializers.filter((t) => t.name !== 'h1.mlp.fc.b');
        }),
      reason: 'missing-tensor',
      field: 'initializer "h1.mlp.fc.b"',
      says: /is missing \(this config needs float \[64\]\)/,
    },
    {
      name: 'an unexpected tensor',
      bytes: () =>
        edited((m) =>
          m.graph.initializers.push(floatTensor('h2.ln1.gamma', [16], new Float32Array(16))),
        ),
      reason: 'unexpected-tensor',
      field: 'initializer "h2.ln1.gamma"',
      says: /is not a parameter of this model \(its layout has \d+ tensors\)/,
    },
    {
      name: 'a tensor twice',
      bytes: () => edited((m) => m.graph.initializers.push(m.graph.initializers[0]!)),
      reason: 'unexpected-tensor',
      says: /appears twice/,
    },
    {
      name: 'a wrong shape',
      bytes: () =>
        edited((m) => {
          m.graph.initializers.find((t) => t.name === 'wpe')!.dims = [16, 6];
        }),
      reason: 'tensor-mismatch',
      field: 'initializer "wpe"',
      says: /has shape \[16, 6\], expected \[6, 16\] for this config/,
    },
    {
      name: 'a wrong data type',
      bytes: () =>
        edited((m) => {
          const i = m.graph.initializers.findIndex((t) => t.name === 'lnf.beta');
          m.graph.initializers[i] = int64Tensor('lnf.beta', [16], Array(16).fill(0));
        }),
      reason: 'tensor-mismatch',
      says: /has data type INT64 \(7\), expected FLOAT \(1\)/,
    },
    {
      name: 'raw_data of the wrong length',
      bytes: () =>
        edited((m) => {
          const t = m.graph.initializers.find((x) => x.name === 'value_head.b')!;
          t.rawData = new Uint8Array(8);
        }),
      reason: 'tensor-mismatch',
      says: /raw_data holds 8 bytes, expected 1 floats = 4/,
    },
    {
      name: 'a NaN weight',
      bytes: () =>
        edited((m) => {
          const i = m.graph.initializers.findIndex((t) => t.name === 'h0.attn.proj.w');
          const data = new Float32Array(256);
          data[37] = NaN;
          m.graph.initializers[i] = floatTensor('h0.attn.proj.w', [16, 16], data);
        }),
      reason: 'tensor-mismatch',
      says: /initializer "h0.attn.proj.w" index 37 is NaN/,
    },
  ];
  it.each(cases)('$name', ({ bytes, reason, field, says }) => {
    const error = thrown(() => importTransformerOnnx(bytes()));
    expect(error.reason).toBe(reason);
    if (field) expect(error.field).toBe(field);
    expect(error.message).toMatch(says);
  });

  it('an MLP export given to the transformer importer, and the other way round', () => {
    const agent = new AgentLayout(ppoActorConfig(4, 2), ppoCriticConfig(4));
    const mlp = exportActorCriticOnnx(agent, randomParams(agent.joint, 1));
    expect(thrown(() => importTransformerOnnx(mlp)).message).toMatch(
      /is "mlp-actor-critic", expected "transformer"/,
    );
    expect(thrown(() => importActorCriticOnnx(exported)).message).toMatch(
      /is "transformer", expected "mlp-actor-critic"/,
    );
  });

  it('random bytes: always an OnnxError, never another exception or a model', () => {
    const next = seededRandom(5);
    const noise = Uint8Array.from({ length: 4096 }, () => Math.floor(next() * 256));
    expect(['truncated', 'malformed', 'foreign']).toContain(thrown(() => importOnnx(noise)).reason);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), (data) => {
        thrown(() => importOnnx(data));
      }),
    );
  });

  it('every cut of an export is refused', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: exported.length - 1 }), (end) => {
        const error = thrown(() => importTransformerOnnx(exported.subarray(0, end)));
        return ['truncated', 'malformed'].includes(error.reason);
      }),
      { numRuns: 200 },
    );
  });
});

describe('the checksum of an export', () => {
  /** The checksum entry's bytes: tag, length, key (tag, length, 18 bytes), value (tag, length, 10). */
  const ENTRY_BYTES = 2 + 2 + CHECKSUM_KEY.length + 2 + 10;
  const flip = (bytes: Uint8Array, bit: number) => {
    const out = bytes.slice();
    out[bit >> 3]! ^= 1 << (bit & 7);
    return out;
  };

  it('comes first in the file and covers every byte after it', () => {
    // Field 14 (metadata_props), wire type 2: tag 0x72, then the entry's 32 bytes.
    expect([exported[0], exported[1]]).toEqual([0x72, ENTRY_BYTES - 2]);
    const value = decodeModel(exported).metadataProps.find((e) => e.key === CHECKSUM_KEY)!.value;
    expect(value).toBe(hex32(crc32(exported.subarray(ENTRY_BYTES))));
    expect(decodeModel(exported).producerVersion).toBe('2');
  });

  it('refuses 300 of 300 random single-bit flips of a transformer export, and of an MLP one', () => {
    const agent = new AgentLayout(ppoActorConfig(4, 2), ppoCriticConfig(4));
    const mlp = exportActorCriticOnnx(agent, randomParams(agent.joint, 2));
    for (const bytes of [exported, mlp]) {
      const next = seededRandom(bytes.length);
      let refused = 0;
      for (let k = 0; k < 300; k++) {
        const bit = Math.floor(next() * bytes.length * 8);
        try {
          importOnnx(flip(bytes, bit));
        } catch (error) {
          if (!(error instanceof OnnxError)) throw error;
          refused += 1;
        }
      }
      expect(refused).toBe(300);
    }
  });

  it('refuses a flip in each of the checksum entry’s own bits', () => {
    const entryBits = ENTRY_BYTES * 8;
    for (let bit = 0; bit < entryBits; bit++) {
      expect(['damaged', 'truncated', 'malformed']).toContain(
        thrown(() => importTransformerOnnx(flip(exported, bit))).reason,
      );
    }
  });

  it('names the mismatch: a changed weight byte', () => {
    const error = thrown(() => importTransformerOnnx(flip(exported, (exported.length - 100) * 8)));
    expect(error.reason).toBe('damaged');
    expect(error.field).toBe('metadata_props["agent-rl-lab/crc32"]');
    expect(error.message).toMatch(
      /is 0x[0-9a-f]{8}, but the file's bytes give 0x[0-9a-f]{8}: the file is damaged/,
    );
  });

  it('accepts a file another tool rewrote (its checksum no longer first) with a note', () => {
    const back = importTransformerOnnx(rewritten(() => {}));
    expect(back.params).toEqual(importTransformerOnnx(exported).params);
    expect(back.integrity).toEqual({
      checked: false,
      note:
        'This ONNX file was rewritten after export (its checksum is no longer its first field), ' +
        'so damage to its weights could not be detected.',
    });
  });

  it('refuses an export of producer_version 2 that lost its checksum', () => {
    const bytes = rewritten((m) => setMeta(m, CHECKSUM_KEY, undefined));
    const error = thrown(() => importTransformerOnnx(bytes));
    expect(error.reason).toBe('damaged');
    expect(error.message).toMatch(
      /is missing, but this lab's exports of producer_version "2" always carry one/,
    );
  });

  it('accepts a file without one (an earlier export, another tool) with a note', () => {
    for (const edit of [
      (m: ModelProto) => void (m.producerVersion = '1'),
      (m: ModelProto) => void (m.producerName = 'onnx-tool'),
    ]) {
      const bytes = rewritten((m) => {
        setMeta(m, CHECKSUM_KEY, undefined);
        edit(m);
      });
      const back = importTransformerOnnx(bytes);
      expect(back.params).toEqual(importTransformerOnnx(exported).params);
      expect(back.integrity).toEqual({
        checked: false,
        note: expect.stringMatching(
          /has no checksum .* damage to its weights could not be detected/,
        ),
      });
    }
  });
});

describe('ONNX files under fuzzing (refused or read, in bounded time and memory)', () => {
  it('prototype-named keys in the config and tokenizer JSON: refused or read, never a crash', () => {
    const before = prototypeSnapshot();
    const entries = { config: JSON.parse(JSON.stringify(config)), tokenizer: model.tokenizer };
    fc.assert(
      fc.property(
        fc.constantFrom('config' as const, 'tokenizer' as const),
        fc.constantFrom(...PROTOTYPE_KEYS),
        fc.constantFrom(...ODD_VALUES),
        (entry, key, value) => {
          const bytes = edited((m) => setMeta(m, entry, withKey(entries[entry], [], key, value)));
          const outcome = answer(() => importTransformerOnnx(bytes), OnnxError);
          // Extra keys are dropped (the config is rebuilt field by field): the same model.
          if (outcome.ok) expect(outcome.value.config).toEqual(config);
        },
      ),
      { numRuns: 100 },
    );
    expect(prototypeSnapshot()).toBe(before);
  });

  it('metadata keys named after Object.prototype members come back as plain own keys', () => {
    const bytes = edited((m) => {
      for (const key of PROTOTYPE_KEYS) m.metadataProps.push({ key, value: `v-${key}` });
    });
    const meta = importTransformerOnnx(bytes).meta;
    for (const key of PROTOTYPE_KEYS) {
      expect(Object.getOwnPropertyDescriptor(meta, key)?.value).toBe(`v-${key}`);
    }
    expect(Object.getPrototypeOf(meta)).toBe(Object.prototype);
  });

  it('refuses a nesting bomb in its metadata before parsing it', () => {
    const bytes = edited((m) => setMeta(m, 'config', nested(1_000_000, 'array')));
    const outcome = answer(() => importTransformerOnnx(bytes), OnnxError, { mb: 32 });
    expect(outcome.ok || outcome.error.message).toMatch(
      /metadata_props\["config"\] nests deeper than 64/,
    );
    // Other metadata may be parsed; the 2 MB bomb never is.
    expect(Math.max(0, ...outcome.parsed)).toBeLessThan(2_000_000);
  });

  it('refuses a size bomb (a field that declares 2 GB) from the framing, at once', () => {
    // After the checksum entry: field 7 (the graph), declared 2^31 − 1 bytes long.
    const bomb = new Uint8Array([...exported.subarray(0, 34), 0x3a, 0xff, 0xff, 0xff, 0xff, 0x07]);
    const outcome = answer(() => importOnnx(bomb), OnnxError, { mb: 4 });
    expect(outcome.ok || (outcome.error as OnnxError).reason).toBe('truncated');
  });
});

describe('export refuses bad input', () => {
  const cases: { name: string; run: () => unknown; says: RegExp }[] = [
    {
      name: 'a bad config',
      run: () => exportTransformerOnnx({ ...config, layers: 0 }, model.params, model.tokenizer),
      says: /config is not a valid transformer config: .*layers must be an integer in \[1, 6\]/,
    },
    {
      name: 'params of the wrong length',
      run: () => exportTransformerOnnx(config, model.params.subarray(1), model.tokenizer),
      says: /params must be a Float32Array of \d+ floats \(the layout\), got \d+ floats/,
    },
    {
      name: 'a non-finite weight',
      run: () => {
        const p = model.params.slice();
        model.layout.view(p, 'lnf.gamma')[2] = Infinity;
        return exportTransformerOnnx(config, p, model.tokenizer);
      },
      says: /params\["lnf.gamma"\] index 2 is Infinity/,
    },
    {
      name: 'a tokenizer larger than the vocabulary',
      run: () =>
        exportTransformerOnnx(config, model.params, { ...model.tokenizer, chars: 'abcdefghijk' }),
      says: /tokenizer has 20 ids but the model's vocabulary is 15/,
    },
    {
      name: 'a reserved metadata key',
      run: () =>
        exportTransformerOnnx(config, model.params, model.tokenizer, { meta: { config: 1 } }),
      says: /meta.config is reserved/,
    },
    {
      name: 'the checksum key as metadata',
      run: () =>
        exportTransformerOnnx(config, model.params, model.tokenizer, {
          meta: { [CHECKSUM_KEY]: 'x' },
        }),
      says: /meta.agent-rl-lab\/crc32 is reserved/,
    },
  ];
  it.each(cases)('$name', ({ run, says }) => {
    const error = thrown(run);
    expect(error.reason).toBe('input');
    expect(error.message).toMatch(says);
  });
});
