import { describe, expect, it } from 'vitest';
import {
  block,
  br,
  brIf,
  encodeModule,
  f64x2,
  i32,
  i32T,
  local,
  loop,
  sleb,
  uleb,
  v128,
  v128T,
} from '../../../src/ops/nn/wasm-module';

describe('wasm-module: the WebAssembly encoder', () => {
  it.each([
    [0, [0x00]],
    [127, [0x7f]],
    [128, [0x80, 0x01]],
    [624485, [0xe5, 0x8e, 0x26]], // the specification's example
    [2 ** 32 - 1, [0xff, 0xff, 0xff, 0xff, 0x0f]],
  ])('uleb(%d)', (value, bytes) => {
    expect(uleb(value)).toEqual(bytes);
  });

  it.each([
    [0, [0x00]],
    [-1, [0x7f]],
    [63, [0x3f]],
    [64, [0xc0, 0x00]],
    [-64, [0x40]],
    [-65, [0xbf, 0x7f]],
    [-123456, [0xc0, 0xbb, 0x78]],
    [2 ** 31 - 1, [0xff, 0xff, 0xff, 0xff, 0x07]],
    [-(2 ** 31), [0x80, 0x80, 0x80, 0x80, 0x78]],
  ])('sleb(%d)', (value, bytes) => {
    expect(sleb(value)).toEqual(bytes);
  });

  it('refuses values outside the 32-bit ranges', () => {
    expect(() => uleb(-1)).toThrow(/uleb: value must be an integer in \[0, 2\^32 − 1\], got -1/);
    expect(() => uleb(1.5)).toThrow(/got 1.5/);
    expect(() => sleb(2 ** 31)).toThrow(/sleb: value must be an integer in \[−2\^31, 2\^31 − 1\]/);
  });

  it('assembles a module whose loop, branches and f64x2 arithmetic run as written', () => {
    // dot(x, y, out, n): out[0..1] = Σ_{p<n} x[p]·y[p] lane-wise over pairs of float64, with an
    // early exit when n = 0: a block around a loop, as the matmul kernel nests them.
    const [x, y, out, n, acc] = [0, 1, 2, 3, 4];
    const bytes = encodeModule(1, [
      {
        name: 'dot',
        params: [i32T, i32T, i32T, i32T],
        locals: [v128T],
        body: [
          local.set(acc, v128.zero()),
          block((done) => [
            brIf(done, i32.geU(i32.const(0), local.get(n))), // n ≤ 0
            loop((next) => [
              local.set(
                acc,
                f64x2.add(
                  local.get(acc),
                  f64x2.mul(v128.load(local.get(x)), v128.load(local.get(y))),
                ),
              ),
              local.set(x, i32.add(local.get(x), i32.const(16))),
              local.set(y, i32.add(local.get(y), i32.const(16))),
              local.set(n, i32.sub(local.get(n), i32.const(1))),
              brIf(next, local.get(n)),
            ]),
          ]),
          v128.store(local.get(out), local.get(acc)),
        ],
      },
      { name: 'noop', params: [], locals: [], body: [block((b) => [br(b)])] },
    ]);
    expect(WebAssembly.validate(bytes)).toBe(true);
    const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), {});
    const memory = instance.exports.memory as WebAssembly.Memory;
    const dot = instance.exports.dot as (x: number, y: number, out: number, n: number) => void;
    const f = new Float64Array(memory.buffer);
    f.set([1, 2, 3, 4, 5, 6], 0); // x: three pairs at byte 0
    f.set([0.5, -1, 2, 0.25, -3, 8], 8); // y at byte 64
    dot(0, 64, 128, 3);
    expect([f[16], f[17]]).toEqual([1 * 0.5 + 3 * 2 + 5 * -3, 2 * -1 + 4 * 0.25 + 6 * 8]);
    f[16] = 7;
    dot(0, 64, 128, 0);
    expect([f[16], f[17]]).toEqual([0, 0]);
  });
});
