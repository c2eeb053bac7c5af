import { describe, expect, it } from 'vitest';
import { PARAM_ALIGNMENT, ParamLayout } from '../../src/models/param-layout';

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
});
