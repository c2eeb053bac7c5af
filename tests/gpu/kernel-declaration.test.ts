/** Kernel declarations are checked against their WGSL; no GPU needed. */
import { describe, expect, it } from 'vitest';
import { KernelError, defineKernel } from '../../src/gpu';
import type { KernelDeclaration } from '../../src/gpu/kernel';
import { logSoftmaxKernel } from '../../src/gpu/kernels/log-softmax';
import { reflectBindings, reflectStruct } from '../../src/gpu/wgsl-reflect';

const WGSL = `
  // A comment mentioning @group(0) @binding(9) var<storage, read> ghost: array<f32>; is ignored.
  override WG: u32 = 64u;
  struct Params { n: u32, scale: f32, offset: i32, }
  @group(0) @binding(0) var<uniform> params: Params;
  @group(0) @binding(1) var<storage, read> x: array<f32>;
  @group(0) @binding(2) var<storage, read_write> y: array<f32>;
  @compute @workgroup_size(WG) fn main() {}
`;

describe('WGSL reflection', () => {
  it('reads bindings in order, with their kinds, ignoring comments', () => {
    expect(reflectBindings(WGSL).map((b) => [b.binding, b.name, b.kind])).toEqual([
      [0, 'params', 'uniform'],
      [1, 'x', 'read-only-storage'],
      [2, 'y', 'storage'],
    ]);
  });

  it('reads struct fields in order', () => {
    expect(reflectStruct(WGSL, 'Params')).toEqual([
      ['n', 'u32'],
      ['scale', 'f32'],
      ['offset', 'i32'],
    ]);
    expect(() => reflectStruct(WGSL, 'Missing')).toThrow('struct Missing not found');
  });
});

describe('defineKernel', () => {
  const uniforms = [
    { name: 'n', type: 'u32' },
    { name: 'scale', type: 'f32' },
    { name: 'offset', type: 'i32' },
  ] as const;
  const storage = [
    { name: 'x', access: 'read' },
    { name: 'y', access: 'read_write' },
  ] as const;

  it('accepts a declaration that matches its WGSL and packs uniforms little-endian', () => {
    const kernel = defineKernel({ name: 'k', source: WGSL, uniforms, storage });
    expect(kernel.overrides).toEqual(new Set(['WG']));
    expect(kernel.uniformByteSize).toBe(16);
    const view = new DataView(kernel.packUniforms({ n: 7, scale: 0.5, offset: -3 }));
    expect([view.getUint32(0, true), view.getFloat32(4, true), view.getInt32(8, true)]).toEqual([
      7, 0.5, -3,
    ]);
  });

  it.each<[string, Partial<KernelDeclaration<string, string>>, RegExp]>([
    [
      'a swapped storage order',
      { storage: [storage[1], storage[0]] },
      /@binding\(1\) is "x" in WGSL, "y" declared/,
    ],
    [
      'a wrong access mode',
      { storage: [storage[0], { name: 'y', access: 'read' }] },
      /"y" is storage in WGSL, read-only-storage declared/,
    ],
    ['a missing binding', { storage: [storage[0]] }, /WGSL has 3 bindings, declaration has 2/],
    [
      'a wrong uniform field',
      { uniforms: [uniforms[0], uniforms[1]] },
      /Params is \{n: u32, scale: f32, offset: i32\} in WGSL/,
    ],
  ])('rejects %s with a KernelError', (_what, change, message) => {
    const make = () => defineKernel({ name: 'k', source: WGSL, uniforms, storage, ...change });
    expect(make).toThrow(KernelError);
    expect(make).toThrow(message);
  });

  it.each([
    [{ n: -1, scale: 1, offset: 0 }, /uniform "n" must be a u32, got -1/],
    [{ n: 1.5, scale: 1, offset: 0 }, /uniform "n" must be a u32, got 1.5/],
    [{ n: 1, scale: NaN, offset: 0 }, /uniform "scale" must be a finite number, got NaN/],
    [{ n: 1, scale: 1, offset: 0.25 }, /uniform "offset" must be a i32, got 0.25/],
  ])('rejects uniform values out of their type: %o', (values, message) => {
    const kernel = defineKernel({ name: 'k', source: WGSL, uniforms, storage });
    expect(() => kernel.packUniforms(values)).toThrow(message);
  });

  it('rejects override constants the WGSL does not declare', () => {
    expect(() => logSoftmaxKernel.checkOverrides({ WORKGROUP_SIZE: 64 })).not.toThrow();
    expect(() => logSoftmaxKernel.checkOverrides({ WG: 64 })).toThrow(
      /unknown override constant "WG" \(declared: WORKGROUP_SIZE\)/,
    );
  });
});
