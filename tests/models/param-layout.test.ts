import { describe, expect, it } from 'vitest';
import { PARAM_ALIGNMENT, ParamLayout, type ParamSpec } from '../../src/models/param-layout';
import { packF16, unpackF16 } from '../../src/ops/nn/unpack-f16';

const layout = new ParamLayout([
  { name: 'bias', shape: [3], decay: false, init: { kind: 'zeros' } },
  { name: 'w', shape: [2, 5], decay: true, init: { kind: 'normal', std: 0.5 } },
  { name: 'gain', shape: [70], decay: false, init: { kind: 'ones' } },
  { name: 'emb', shape: [4, 16], decay: true, init: { kind: 'normal', std: 1 } },
]);

describe('ParamLayout', () => {
  it('puts decayed tensors first, each on a 64-float boundary', () => {
    expect(layout.entries.map((e) => [e.name, e.offset, e.size])).toEqual([
      ['w', 0, 10],
      ['emb', 64, 64],
      ['bias', 128, 3],
      ['gain', 192, 70],
    ]);
    expect(layout.total).toBe(320); // 192 + 70 rounded up to 256 + 64
    expect(layout.decayRange).toEqual({ offset: 0, count: 128 });
    expect(layout.noDecayRange).toEqual({ offset: 128, count: 192 });
    expect(layout.parameterCount).toBe(10 + 64 + 3 + 70);
    for (const e of layout.entries) expect(e.offset % PARAM_ALIGNMENT).toBe(0);
  });

  it('gives views that share memory and slices in bytes', () => {
    const flat = new Float32Array(layout.total);
    layout.view(flat, 'gain')[0] = 7;
    expect(flat[192]).toBe(7);
    const fake = {} as GPUBuffer;
    expect(layout.slice(fake, 'emb')).toEqual({ buffer: fake, offset: 256, size: 256 });
  });

  it('initialises deterministically: ones, zeros, normals of the stated std, zero padding', () => {
    const a = layout.initialize<Float64Array>(3, 'f64');
    const b = layout.initialize<Float64Array>(3, 'f64');
    expect(a).toEqual(b);
    expect([...layout.view(a, 'gain')].every((x) => x === 1)).toBe(true);
    expect([...layout.view(a, 'bias')].every((x) => x === 0)).toBe(true);
    expect(a[10]).toBe(0); // padding after w
    const emb = layout.view(a, 'emb');
    const mean = emb.reduce((s, x) => s + x, 0) / emb.length;
    const std = Math.sqrt(emb.reduce((s, x) => s + (x - mean) ** 2, 0) / emb.length);
    expect(Math.abs(mean)).toBeLessThan(0.35); // 64 draws: standard error 0.125
    expect(std).toBeGreaterThan(0.7);
    expect(std).toBeLessThan(1.3);
    expect(layout.initialize<Float64Array>(4, 'f64')).not.toEqual(a);
  });

  it('initialises uniform tensors within ±bound, spread over the range', () => {
    const uniform = new ParamLayout([
      { name: 'lora_A', shape: [4, 100], decay: true, init: { kind: 'uniform', bound: 0.1 } },
    ]);
    const values = Array.from(uniform.initialize<Float64Array>(5, 'f64'));
    expect(Math.max(...values.map(Math.abs))).toBeLessThanOrEqual(0.1);
    expect(Math.min(...values)).toBeLessThan(-0.09);
    expect(Math.max(...values)).toBeGreaterThan(0.09);
  });

  it('rejects unknown and duplicate names', () => {
    expect(() => layout.entry('nope')).toThrow(/no parameter "nope"/);
    expect(
      () =>
        new ParamLayout([
          { name: 'x', shape: [1], decay: true, init: { kind: 'zeros' } },
          { name: 'x', shape: [1], decay: false, init: { kind: 'zeros' } },
        ]),
    ).toThrow(/duplicate/);
  });

  it('lays a 16-bit group out on 128-half (256-byte) boundaries and slices it in bytes', () => {
    const specs: ParamSpec[] = layout.entries.map(({ name, shape, decay, init }) => ({
      name,
      shape,
      decay,
      init,
    }));
    for (const storage of ['f16', 'bf16'] as const) {
      const halves = new ParamLayout(specs, storage);
      expect(halves.storage).toBe(storage);
      expect(halves.entries.map((e) => [e.name, e.offset, e.size])).toEqual([
        ['w', 0, 10],
        ['emb', 128, 64],
        ['bias', 256, 3],
        ['gain', 384, 70],
      ]);
      expect(halves.total).toBe(512);
      expect(halves.byteLength).toBe(1024);
      const fake = {} as GPUBuffer;
      // Byte offsets at 256-byte multiples; sizes in whole u32 words (bias: 3 halves → 8 bytes).
      expect(halves.slice(fake, 'emb')).toEqual({ buffer: fake, offset: 256, size: 128 });
      expect(halves.slice(fake, 'bias')).toEqual({ buffer: fake, offset: 512, size: 8 });
      expect(halves.rangeSlice(fake, halves.noDecayRange)).toEqual({
        buffer: fake,
        offset: 512,
        size: 512,
      });
    }
    expect(layout.storage).toBe('f32');
    expect(layout.byteLength).toBe(layout.total * 4);
  });

  it('packs an f16 group so each tensor’s slice holds exactly its halves', () => {
    const halves = new ParamLayout(
      [
        { name: 'a', shape: [3, 5], decay: true, init: { kind: 'normal', std: 1 } },
        { name: 'b', shape: [7], decay: false, init: { kind: 'normal', std: 1 } },
      ],
      'f16',
    );
    const flat = halves.initialize<Float32Array>(5);
    const words = packF16(flat).packed; // the group's GPU buffer: total / 2 words
    expect(words.length * 4).toBe(halves.byteLength);
    for (const name of ['a', 'b']) {
      const { offset = 0, size = 0 } = halves.slice({} as GPUBuffer, name);
      const bound = words.subarray(offset / 4, (offset + size) / 4);
      const exact = packF16(halves.view(flat, name));
      expect(Array.from(unpackF16(bound, halves.entry(name).size))).toEqual(
        Array.from(unpackF16(exact.packed, halves.entry(name).size)),
      );
    }
  });

  it('refuses an unknown storage', () => {
    expect(() => new ParamLayout([], 'f8' as never)).toThrow(
      'ParamLayout: storage must be f32, f16 or bf16, got f8',
    );
  });
});
