import fc from 'fast-check';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  CheckpointError,
  decodeCheckpoint,
  encodeCheckpoint,
  isCheckpointFile,
  type Checkpoint,
  type CheckpointTensor,
} from '../../src/models/checkpoint';
import { crc32 } from '../../src/models/checksum';
import { CharTokenizer } from '../../src/models/tokenizer';
import {
  answer,
  flipBit,
  nested,
  objectPaths,
  ODD_VALUES,
  PROTOTYPE_KEYS,
  prototypeSnapshot,
  withKey,
  withRawValue,
} from '../support/fuzz';

const ascii = (s: string): Uint8Array => new TextEncoder().encode(s);

/** Float32 bit patterns, so -0 vs 0 and every subnormal compare exactly. */
const bits = (a: Float32Array): number[] =>
  Array.from(new Uint32Array(a.buffer, a.byteOffset, a.length));

function tensor(name: string, shape: number[], values: number[]): CheckpointTensor {
  return { name, shape, data: new Float32Array(values) };
}

/** A small model with an optimizer, tokenizer and metadata. */
function sample(): Checkpoint {
  const w = tensor(
    'blocks.0.w',
    [2, 3],
    [1, -2.5, 0, -0, 1.401298464324817e-45, 3.4028234663852886e38],
  );
  const b = tensor('blocks.0.b', [3], [0.5, -0.25, 1.1754942106924411e-38]);
  const s = tensor('scale', [], [7]);
  const zerosLike = (t: CheckpointTensor, fill: number): CheckpointTensor => ({
    name: t.name,
    shape: [...t.shape],
    data: new Float32Array(t.data.length).fill(fill),
  });
  return {
    model: { kind: 'mlp', config: { hidden: [3], activation: 'tanh', bias: true } },
    tokenizer: CharTokenizer.createDefault().spec,
    step: 120,
    seed: 4242,
    tensors: [w, b, s],
    optimizer: {
      kind: 'adamw',
      step: 120,
      hyperparams: { lr: 3e-4, beta1: 0.9, beta2: 0.999, eps: 1e-8, weight_decay: 0.01 },
      m: [w, b, s].map((t) => zerosLike(t, 0.125)),
      v: [w, b, s].map((t) => zerosLike(t, 2 ** -20)),
    },
    meta: { task: 'arithmetic', reward: 0.75, finished: false },
  };
}

// --- Framing helpers for building damaged files (the layout from src/models/checkpoint.ts) ---

const HEADER_AT = 20;
const headerLength = (file: Uint8Array): number =>
  new DataView(file.buffer, file.byteOffset).getUint32(12, true);
const payloadAt = (file: Uint8Array): number => (HEADER_AT + headerLength(file) + 3) & ~3;
const headerText = (file: Uint8Array): string =>
  new TextDecoder().decode(file.subarray(HEADER_AT, HEADER_AT + headerLength(file)));

/** The same file with other header bytes (correct header CRC and padding, same payload). */
function withHeaderBytes(file: Uint8Array, header: Uint8Array): Uint8Array {
  const payload = file.subarray(payloadAt(file));
  const start = (HEADER_AT + header.length + 3) & ~3;
  const out = new Uint8Array(start + payload.length);
  out.set(file.subarray(0, 12));
  const view = new DataView(out.buffer);
  view.setUint32(12, header.length, true);
  view.setUint32(16, crc32(header), true);
  out.set(header, HEADER_AT);
  out.set(payload, start);
  return out;
}

function withHeaderText(file: Uint8Array, text: string): Uint8Array {
  return withHeaderBytes(file, ascii(text));
}

/** The same file with its header JSON edited by `edit`. */
function withHeader(file: Uint8Array, edit: (h: Record<string, unknown>) => void): Uint8Array {
  const h = JSON.parse(headerText(file)) as Record<string, unknown>;
  edit(h);
  return withHeaderText(file, JSON.stringify(h));
}

function flipByte(file: Uint8Array, at: number): Uint8Array {
  const out = file.slice();
  out[at]! ^= 0x01;
  return out;
}

function errorOf(run: () => unknown): CheckpointError {
  try {
    run();
  } catch (e) {
    if (e instanceof CheckpointError) return e;
    throw e;
  }
  throw new Error('expected a CheckpointError');
}

describe('crc32', () => {
  it('gives the standard check values', () => {
    // The CRC-32/ISO-HDLC catalogue check value for ASCII "123456789" is 0xCBF43926.
    expect(crc32(ascii('123456789'))).toBe(0xcbf43926);
    expect(crc32(new Uint8Array(0))).toBe(0);
    // One zero byte: TABLE[0xff] = 0x2d02ef8d (last entry of the standard table); the register
    // becomes 0x2d02ef8d ^ (0xffffffff >>> 8) = 0x2dfd1072, and the final inversion 0xd202ef8d.
    expect(crc32(new Uint8Array([0]))).toBe(0xd202ef8d);
  });

  it('continues across pieces', () => {
    const all = ascii('123456789');
    expect(crc32(all.subarray(4), crc32(all.subarray(0, 4)))).toBe(0xcbf43926);
  });
});

describe('checkpoint round trip', () => {
  it('reads back every field, floats bit for bit (-0, subnormals, max float)', () => {
    const ckpt = sample();
    const back = decodeCheckpoint(encodeCheckpoint(ckpt));
    expect(back.model).toEqual(ckpt.model);
    expect(back.tokenizer).toEqual(ckpt.tokenizer);
    expect([back.step, back.seed]).toEqual([120, 4242]);
    expect(back.meta).toEqual(ckpt.meta);
    expect(back.optimizer?.hyperparams).toEqual(ckpt.optimizer?.hyperparams);
    expect(back.optimizer?.step).toBe(120);
    const all = (c: Checkpoint): CheckpointTensor[] => [
      ...c.tensors,
      ...(c.optimizer?.m ?? []),
      ...(c.optimizer?.v ?? []),
    ];
    const got = all(back);
    const want = all(ckpt);
    expect(got.map((t) => [t.name, t.shape])).toEqual(want.map((t) => [t.name, t.shape]));
    got.forEach((t, i) => expect(bits(t.data)).toEqual(bits(want[i]!.data)));
    expect(Object.is(back.tensors[0]!.data[3], -0)).toBe(true);
    expect(back.tensors[0]!.data[4]).toBe(2 ** -149); // smallest subnormal
  });

  it('writes the documented layout', () => {
    const file = encodeCheckpoint(sample());
    expect(new TextDecoder().decode(file.subarray(0, 8))).toBe('ARLCKPT1');
    const view = new DataView(file.buffer);
    expect(view.getUint32(8, true)).toBe(1);
    expect(view.getUint32(16, true)).toBe(crc32(file.subarray(20, 20 + headerLength(file))));
    const header = JSON.parse(headerText(file)) as {
      tensors: { name: string; shape: number[]; offset: number }[];
      optimizer: { m: { offset: number }[]; v: { offset: number }[] };
      payload: { floats: number; crc32: number };
    };
    // Weights 6 + 3 + 1 = 10 floats, then m (10) and v (10), back to back.
    expect(header.tensors.map((t) => t.offset)).toEqual([0, 6, 9]);
    expect(header.optimizer.m.map((t) => t.offset)).toEqual([10, 16, 19]);
    expect(header.optimizer.v.map((t) => t.offset)).toEqual([20, 26, 29]);
    expect(header.payload.floats).toBe(30);
    const start = payloadAt(file);
    expect(start % 4).toBe(0);
    expect(file.length).toBe(start + 30 * 4);
    expect(header.payload.crc32).toBe(crc32(file.subarray(start)));
    // Little-endian f32: the first weight, 1.0, is 0x3f800000.
    expect(Array.from(file.subarray(start, start + 4))).toEqual([0x00, 0x00, 0x80, 0x3f]);
  });

  it('round-trips a minimal checkpoint (no optimizer, tokenizer or meta; empty tensors)', () => {
    const ckpt: Checkpoint = {
      model: { kind: 'tabular', config: null },
      step: 0,
      seed: 0,
      tensors: [tensor('empty', [0, 4], [])],
    };
    const back = decodeCheckpoint(encodeCheckpoint(ckpt));
    expect(back).toEqual(ckpt);
    expect('optimizer' in back || 'tokenizer' in back || 'meta' in back).toBe(false);
  });

  it('reads a file from a byte array that does not start at offset 0 of its buffer', () => {
    const file = encodeCheckpoint(sample());
    const shifted = new Uint8Array(file.length + 1);
    shifted.set(file, 1);
    const back = decodeCheckpoint(shifted.subarray(1));
    expect(bits(back.tensors[0]!.data)).toEqual(bits(sample().tensors[0]!.data));
  });

  it('reads a small Node Buffer (which lives in a shared pool)', () => {
    const file = encodeCheckpoint(sample());
    const pooled = Buffer.from(file);
    const back = decodeCheckpoint(pooled);
    for (const t of back.tensors) expect(t.data.buffer.byteLength).toBe(t.data.byteLength);
    expect(bits(back.tensors[1]!.data)).toEqual(bits(sample().tensors[1]!.data));
  });

  it('property: random tensor sets round-trip bit for bit', () => {
    const tensorArb = fc
      .tuple(
        fc.string({ minLength: 1, maxLength: 12 }),
        fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 3 }),
      )
      .chain(([name, shape]) => {
        const n = shape.reduce((a, b) => a * b, 1);
        return fc
          .float32Array({ minLength: n, maxLength: n, noNaN: true, noDefaultInfinity: true })
          .map((data): CheckpointTensor => ({ name, shape, data }));
      });
    fc.assert(
      fc.property(
        fc.uniqueArray(tensorArb, { selector: (t) => t.name, maxLength: 6 }),
        fc.nat(),
        fc.integer({ min: 0, max: 0xffffffff }),
        (tensors, step, seed) => {
          const ckpt: Checkpoint = { model: { kind: 'mlp', config: {} }, step, seed, tensors };
          const back = decodeCheckpoint(encodeCheckpoint(ckpt), {
            kind: 'mlp',
            tensors: tensors.map((t) => ({ name: t.name, shape: t.shape })),
          });
          expect(back.tensors.map((t) => [t.name, t.shape])).toEqual(
            tensors.map((t) => [t.name, t.shape]),
          );
          back.tensors.forEach((t, i) => expect(bits(t.data)).toEqual(bits(tensors[i]!.data)));
          expect([back.step, back.seed]).toEqual([step, seed]);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('writes a file to disk and reads it back with an expectation list', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'arl-ckpt-'));
    try {
      const path = join(dir, 'model.arlckpt');
      await writeFile(path, encodeCheckpoint(sample()));
      const bytes = await readFile(path); // a Node Buffer: a Uint8Array that may share a pool
      const back = decodeCheckpoint(bytes, {
        kind: 'mlp',
        tensors: [
          { name: 'scale', shape: [] },
          { name: 'blocks.0.w', shape: [2, 3] },
          { name: 'blocks.0.b', shape: [3] },
        ],
      });
      expect(back.tensors.map((t) => t.name)).toEqual(['blocks.0.w', 'blocks.0.b', 'scale']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('isCheckpointFile', () => {
  it('knows an encoded file by its first 8 bytes, and nothing shorter or else', () => {
    const bytes = encodeCheckpoint(sample());
    expect(isCheckpointFile(bytes)).toBe(true);
    expect(isCheckpointFile(bytes.subarray(0, 8))).toBe(true);
    expect(isCheckpointFile(bytes.subarray(0, 7))).toBe(false);
    expect(isCheckpointFile(new Uint8Array())).toBe(false);
    expect(isCheckpointFile(ascii('ARLCKPT2'))).toBe(false);
    expect(isCheckpointFile(ascii('{"format": "agent-rl-lab/run"}'))).toBe(false);
  });
});

describe('checkpoint errors (from real encoded files)', () => {
  const good = encodeCheckpoint(sample());
  const payloadStart = payloadAt(good);

  it.each<[string, () => Uint8Array, string, RegExp]>([
    [
      'a flipped magic byte',
      () => flipByte(good, 0),
      'magic',
      /not a checkpoint: expected the file to start with "ARLCKPT1", found "@RLCKPT1"/,
    ],
    [
      'another format (PNG)',
      () => new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
      'magic',
      /not a checkpoint/,
    ],
    ['an empty file', () => new Uint8Array(0), 'magic', /not a checkpoint/],
    [
      'a file cut inside the preamble',
      () => good.slice(0, 10),
      'preamble',
      /truncated: .* 20 bytes of framing, found a 10-byte file/,
    ],
    [
      'version 2',
      () => {
        const f = good.slice();
        new DataView(f.buffer).setUint32(8, 2, true);
        return f;
      },
      'version',
      /unsupported format version: expected 1, found 2/,
    ],
    [
      'a file cut inside the header',
      () => good.slice(0, 40),
      'header',
      /truncated: the preamble declares a \d+-byte header, so the file must be at least \d+ bytes, found 40/,
    ],
    [
      'a file cut inside the payload',
      () => good.slice(0, good.length - 4),
      'payload',
      /truncated: the header declares 30 floats .* found \d+/,
    ],
    ['trailing bytes', () => new Uint8Array([...good, 0]), 'payload', /trailing bytes/],
    [
      'a flipped header byte',
      () => flipByte(good, HEADER_AT + 5),
      'headerCrc',
      /checksum mismatch: the preamble says 0x[0-9a-f]{8}, the header hashes to 0x[0-9a-f]{8}/,
    ],
    [
      'a flipped payload byte',
      () => flipByte(good, payloadStart + 9),
      'payloadCrc',
      /checksum mismatch: the header says 0x[0-9a-f]{8}, the payload hashes to 0x[0-9a-f]{8}/,
    ],
    [
      'a header that is not JSON',
      () => withHeaderText(good, headerText(good).slice(0, -1)),
      'header',
      /is not JSON/,
    ],
    [
      'a header that is not UTF-8',
      () => withHeaderBytes(good, new Uint8Array([0x7b, 0xff, 0x7d])),
      'header',
      /is not valid UTF-8/,
    ],
    [
      'a JSON array header',
      () => withHeaderText(good, '[]'),
      'header',
      /must be an object, found an array/,
    ],
    ['no step', () => withHeader(good, (h) => delete h.step), 'step', /is missing/],
    [
      'a negative seed',
      () => withHeader(good, (h) => (h.seed = -1)),
      'seed',
      /must be an integer in \[0, 4294967295\], found number -1/,
    ],
    [
      'no model kind',
      () => withHeader(good, (h) => delete (h.model as Record<string, unknown>).kind),
      'model.kind',
      /is missing/,
    ],
    [
      'no model config',
      () => withHeader(good, (h) => delete (h.model as Record<string, unknown>).config),
      'model.config',
      /is missing/,
    ],
    ['no tensor list', () => withHeader(good, (h) => delete h.tensors), 'tensors', /is missing/],
    ['no payload record', () => withHeader(good, (h) => delete h.payload), 'payload', /is missing/],
    [
      'a bad tokenizer',
      () => withHeader(good, (h) => (h.tokenizer = { kind: 'char', version: 1, chars: 'aa' })),
      'tokenizer',
      /duplicate character "a"/,
    ],
    [
      'an unknown optimizer',
      () => withHeader(good, (h) => ((h.optimizer as Record<string, unknown>).kind = 'sgd')),
      'optimizer.kind',
      /expected 'adamw', found "sgd"/,
    ],
  ])('rejects %s', (_name, make, field, message) => {
    const e = errorOf(() => decodeCheckpoint(make()));
    expect(e.field).toBe(field);
    expect(e.message).toMatch(message);
  });

  type Entry = { name: string; shape: number[]; offset: number };
  const tensorsOf = (h: Record<string, unknown>): Entry[] => h.tensors as Entry[];

  it('rejects duplicate tensor names', () => {
    const file = withHeader(good, (h) => (tensorsOf(h)[1]!.name = 'blocks.0.w'));
    const e = errorOf(() => decodeCheckpoint(file));
    expect(e.field).toBe('tensors[1].name');
    expect(e.message).toMatch(/duplicate name "blocks.0.w"/);
  });

  it('rejects a header whose shapes no longer tile the payload', () => {
    // w becomes [3, 3] = 9 floats, so b should start at 9, not 6.
    const file = withHeader(good, (h) => (tensorsOf(h)[0]!.shape = [3, 3]));
    const e = errorOf(() => decodeCheckpoint(file));
    expect(e.field).toBe('tensors[1].offset');
    expect(e.message).toMatch(/"blocks.0.b" must start at float 9 .* found 6/);
  });

  it('rejects a negative or fractional dimension', () => {
    const e = errorOf(() =>
      decodeCheckpoint(withHeader(good, (h) => (tensorsOf(h)[1]!.shape = [1.5]))),
    );
    expect(e.field).toBe('tensors[1].shape[0]');
  });

  it('rejects optimizer moments that do not match the weights', () => {
    const file = withHeader(good, (h) => {
      const o = h.optimizer as { m: Entry[] };
      o.m[2]!.name = 'bias';
    });
    const e = errorOf(() => decodeCheckpoint(file));
    expect(e.field).toBe('optimizer.m["bias"]');
    expect(e.message).toMatch(/unexpected: no weight tensor has this name/);
  });

  it('rejects non-zero padding between header and payload', () => {
    // Grow a meta string until the header needs padding, then set the first padding byte.
    let file: Uint8Array = good.slice();
    for (let n = 0; (headerLength(file) & 3) === 0; n++) {
      file = withHeader(good, (h) => ((h.meta as Record<string, unknown>).pad = 'x'.repeat(n)));
    }
    const at = HEADER_AT + headerLength(file);
    file[at] = 0x20;
    const e = errorOf(() => decodeCheckpoint(file));
    expect(e.field).toBe('padding');
    expect(e.message).toMatch(new RegExp(`byte ${at} must be 0, found 32`));
  });

  it('rejects non-finite weights, naming the tensor and index (checksums made consistent)', () => {
    // Put NaN into blocks.0.b[2] (float 6 + 2 = 8 of the payload) and re-sign the payload.
    const file = good.slice();
    const start = payloadAt(file);
    new DataView(file.buffer).setFloat32(start + 8 * 4, NaN, true);
    const fixed = withHeader(file, (h) => {
      (h.payload as { crc32: number }).crc32 = crc32(file.subarray(start));
    });
    const e = errorOf(() => decodeCheckpoint(fixed));
    expect(e.field).toBe('tensors["blocks.0.b"]');
    expect(e.message).toMatch(/must be finite, but index 2 is NaN/);
    // Infinity in a second-moment tensor (v of 'scale' is float 29).
    new DataView(file.buffer).setFloat32(start + 8 * 4, 0.5, true);
    new DataView(file.buffer).setFloat32(start + 29 * 4, -Infinity, true);
    const inV = withHeader(file, (h) => {
      (h.payload as { crc32: number }).crc32 = crc32(file.subarray(start));
    });
    expect(() => decodeCheckpoint(inV)).toThrow(
      /optimizer.v\["scale"\]: must be finite, but index 0 is -Infinity/,
    );
  });

  describe('expectations', () => {
    const shapes = [
      { name: 'blocks.0.w', shape: [2, 3] },
      { name: 'blocks.0.b', shape: [3] },
      { name: 'scale', shape: [] },
    ];

    it('accepts the matching kind and tensor list', () => {
      expect(decodeCheckpoint(good, { kind: 'mlp', tensors: shapes }).tensors).toHaveLength(3);
    });

    it.each<[string, Parameters<typeof decodeCheckpoint>[1], string, RegExp]>([
      [
        'a kind mismatch',
        { kind: 'transformer' },
        'model.kind',
        /kind mismatch: expected "transformer", found "mlp"/,
      ],
      [
        'a missing tensor',
        { tensors: [...shapes, { name: 'head', shape: [3, 2] }] },
        'tensors["head"]',
        /missing: expected a tensor of shape \[3, 2\], the file has none/,
      ],
      [
        'an unexpected tensor',
        { tensors: shapes.slice(0, 2) },
        'tensors["scale"]',
        /unexpected: the model has no tensor of this name \(shape \[\]\)/,
      ],
      [
        'a shape mismatch',
        { tensors: [{ name: 'blocks.0.w', shape: [3, 2] }, ...shapes.slice(1)] },
        'tensors["blocks.0.w"].shape',
        /shape mismatch for "blocks.0.w": expected \[3, 2\], found \[2, 3\]/,
      ],
    ])('rejects %s', (_name, expectation, field, message) => {
      const e = errorOf(() => decodeCheckpoint(good, expectation));
      expect(e.field).toBe(field);
      expect(e.message).toMatch(message);
    });
  });

  it('leaves the input bytes untouched', () => {
    const copy = good.slice();
    decodeCheckpoint(copy);
    expect(Array.from(copy)).toEqual(Array.from(good));
  });
});

describe('encodeCheckpoint input checks', () => {
  const base = sample();
  it.each<[string, () => Checkpoint, string, RegExp]>([
    [
      'a NaN weight',
      () => ({ ...base, tensors: [tensor('w', [2], [1, NaN])], optimizer: undefined }),
      'tensors["w"]',
      /index 1 is NaN/,
    ],
    [
      'duplicate names',
      () => ({
        ...base,
        tensors: [tensor('w', [1], [1]), tensor('w', [1], [2])],
        optimizer: undefined,
      }),
      'tensors[1].name',
      /duplicate name "w"/,
    ],
    [
      'data shorter than the shape',
      () => ({ ...base, tensors: [tensor('w', [2, 2], [1, 2, 3])], optimizer: undefined }),
      'tensors["w"].data',
      /Float32Array of 4 elements \(shape \[2, 2\]\), found a Float32Array of 3/,
    ],
    [
      'an empty name',
      () => ({ ...base, tensors: [tensor('', [1], [1])], optimizer: undefined }),
      'tensors[0].name',
      /non-empty string/,
    ],
    ['a fractional step', () => ({ ...base, step: 1.5 }), 'step', /integer/],
    [
      'a NaN in the config',
      () => ({ ...base, model: { kind: 'mlp', config: { lr: NaN } } }),
      'model.config.lr',
      /must be finite, found NaN/,
    ],
    [
      'a function in the config',
      () => ({ ...base, model: { kind: 'mlp', config: { f: () => 1 } } }),
      'model.config.f',
      /plain JSON data/,
    ],
    [
      'an infinite meta value',
      () => ({ ...base, meta: { x: Infinity } }),
      'meta.x',
      /finite number/,
    ],
    [
      'a NaN hyperparameter',
      () => ({ ...base, optimizer: { ...base.optimizer!, hyperparams: { lr: NaN } } }),
      'optimizer.hyperparams.lr',
      /finite number, found number NaN/,
    ],
    [
      'moments of another shape',
      () => ({
        ...base,
        optimizer: { ...base.optimizer!, v: [tensor('blocks.0.w', [6], [0, 0, 0, 0, 0, 0])] },
      }),
      'optimizer.v["blocks.0.w"].shape',
      /expected the weight's shape \[2, 3\], found \[6\]/,
    ],
  ])('rejects %s', (_name, make, field, message) => {
    const e = errorOf(() => encodeCheckpoint(make()));
    expect(e.field).toBe(field);
    expect(e.message).toMatch(message);
  });
});

describe('checkpoint files under fuzzing (refused or read, in bounded time and memory)', () => {
  const good = encodeCheckpoint(sample());

  it('refuses every single-bit flip (300 random ones) and every cut', () => {
    fc.assert(
      fc.property(fc.nat(), fc.integer({ min: 0, max: 7 }), (pick, bit) => {
        const flipped = flipBit(good, pick % good.length, bit);
        expect(answer(() => decodeCheckpoint(flipped), CheckpointError).ok).toBe(false);
        const cut = good.subarray(0, pick % good.length);
        expect(answer(() => decodeCheckpoint(cut), CheckpointError).ok).toBe(false);
      }),
      { numRuns: 300 },
    );
  });

  it('prototype-named keys anywhere in the header: refused or read, never Object.prototype', () => {
    const before = prototypeSnapshot();
    const header = JSON.parse(headerText(good)) as unknown;
    fc.assert(
      fc.property(
        fc.nat(),
        fc.constantFrom(...PROTOTYPE_KEYS),
        fc.constantFrom(...ODD_VALUES),
        (pick, key, value) => {
          const paths = objectPaths(header);
          const file = withHeaderText(
            good,
            withKey(header, paths[pick % paths.length]!, key, value),
          );
          const outcome = answer(() => decodeCheckpoint(file), CheckpointError);
          if (outcome.ok) expect(outcome.value.tensors).toHaveLength(sample().tensors.length);
        },
      ),
      { numRuns: 300 },
    );
    expect(prototypeSnapshot()).toBe(before);
  });

  it('refuses a header nesting bomb before parsing it, and a size bomb before reading it', () => {
    const header = JSON.parse(headerText(good)) as Record<string, unknown>;
    const deep = withHeaderText(good, withRawValue(header, ['meta'], nested(2_000_000, 'object')));
    const outcome = answer(() => decodeCheckpoint(deep), CheckpointError, { mb: 16 });
    expect(outcome.ok || outcome.error.message).toMatch(/nests deeper than 64/);
    // The depth scan refused the header: JSON.parse never read it.
    expect(outcome.parsed).toEqual([]);
    // A preamble that declares a 4 GB header: refused from the framing, nothing allocated.
    const huge = good.slice();
    new DataView(huge.buffer).setUint32(12, 0xffffffff, true);
    const framed = answer(() => decodeCheckpoint(huge), CheckpointError, { mb: 4 });
    expect(framed.ok).toBe(false);
    expect(framed.parsed).toEqual([]);
  });
});
