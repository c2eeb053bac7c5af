import { describe, expect, it } from 'vitest';
import {
  loraBackward,
  loraForward,
  loraInit,
  loraScale,
  type LoraShape,
} from '../../../src/ops/nn/lora';
import { dot, gradCheck, probeWeights, randomF64 } from '../../support/gradcheck';

// Hand-worked adapter: rows 2, inDim 2, outDim 2, rank 1, alpha 2 → s = 2.
//   x = [[1, 2], [3, −1]]   A = [[1, 1]]   B = [[1], [−2]]   y = [[10, 20], [30, 40]]
//   x·Aᵀ = [3, 2];  u = s·x·Aᵀ = [6, 4];  u·Bᵀ = [[6, −12], [4, −8]]
//   out = y + u·Bᵀ = [[16, 8], [34, 32]]
// Backward with dy = [[1, 0], [0, 1]]:
//   dy·B = [1, −2];  du = s·dy·B = [2, −4]
//   dA = duᵀ·x = 2·[1, 2] − 4·[3, −1] = [−10, 8]
//   dB = dyᵀ·u = [[6], [4]]
//   dx = du·A = [[2, 2], [−4, −4]]
const SHAPE: LoraShape = { rows: 2, inDim: 2, outDim: 2, rank: 1 };
const X = new Float64Array([1, 2, 3, -1]);
const A = new Float64Array([1, 1]);
const B = new Float64Array([1, -2]);
const Y = new Float64Array([10, 20, 30, 40]);
const DY = new Float64Array([1, 0, 0, 1]);

describe('LoRA adapter (CPU reference)', () => {
  it('scale is lora_alpha / r, and bad r or alpha are refused naming the field', () => {
    expect(loraScale(8, 4)).toBe(2);
    expect(loraScale(16, 32)).toBe(0.5);
    expect(() => loraScale(8, 0)).toThrow(/loraScale: r must be an integer in \[1, /);
    expect(() => loraScale(0, 4)).toThrow(/lora_alpha/);
  });

  it('forward matches the hand-worked values and leaves y alone', () => {
    const y = Float64Array.from(Y);
    const { out, u } = loraForward(X, A, B, y, SHAPE, loraScale(2, 1));
    expect(Array.from(u)).toEqual([6, 4]);
    expect(Array.from(out)).toEqual([16, 8, 34, 32]);
    expect(Array.from(y)).toEqual(Array.from(Y));
  });

  it('backward matches the hand-worked values; dx adds into the frozen layer dx', () => {
    const { u } = loraForward(X, A, B, Y, SHAPE, 2);
    const plain = loraBackward(DY, X, u, A, B, SHAPE, 2);
    expect(Array.from(plain.dA)).toEqual([-10, 8]);
    expect(Array.from(plain.dB)).toEqual([6, 4]);
    expect(Array.from(plain.dx)).toEqual([2, 2, -4, -4]);
    const base = new Float64Array([1, 1, 1, 1]);
    const summed = loraBackward(DY, X, u, A, B, SHAPE, 2, { accumulateDx: base });
    expect(Array.from(summed.dx)).toEqual([3, 3, -3, -3]);
    expect(Array.from(base)).toEqual([1, 1, 1, 1]);
  });

  it('gradients match central differences (float64, L = Σ probe·out)', () => {
    const shape: LoraShape = { rows: 5, inDim: 7, outDim: 6, rank: 3 };
    const x = randomF64(5 * 7, 1, 1);
    const a = randomF64(3 * 7, 0.5, 2);
    const b = randomF64(6 * 3, 0.5, 3);
    const y = randomF64(5 * 6, 1, 4);
    const scale = loraScale(5, 3);
    const probe = probeWeights(5 * 6, 5);
    const loss = () => dot(probe, loraForward(x, a, b, y, shape, scale).out);
    const { u } = loraForward(x, a, b, y, shape, scale);
    const grads = loraBackward(probe, x, u, a, b, shape, scale);
    for (const [name, param, grad] of [
      ['dx', x, grads.dx],
      ['dA', a, grads.dA],
      ['dB', b, grads.dB],
    ] as const) {
      const result = gradCheck(param, grad, loss);
      expect(result.maxRelError, `${name}: ${JSON.stringify(result.worst)}`).toBeLessThan(1e-7);
    }
  });

  it('a fresh adapter is PEFT init: A within ±1/√in and spread over it, B zero, seeded', () => {
    const shape = { inDim: 64, outDim: 32, rank: 8 };
    const { a, b } = loraInit(shape, 7);
    expect(a).toHaveLength(8 * 64);
    expect(b).toHaveLength(32 * 8);
    expect(b.every((v) => v === 0)).toBe(true);
    const bound = 1 / 8;
    const max = Math.max(...a.map(Math.abs));
    expect(max).toBeLessThanOrEqual(bound);
    expect(max).toBeGreaterThan(0.95 * bound);
    // U(−c, c) has variance c²/3: 512 draws land within 15 % of it.
    const variance = a.reduce((s, v) => s + v * v, 0) / a.length;
    expect(Math.abs(variance / ((bound * bound) / 3) - 1)).toBeLessThan(0.15);
    expect(Array.from(loraInit(shape, 7).a)).toEqual(Array.from(a));
    expect(Array.from(loraInit(shape, 8).a)).not.toEqual(Array.from(a));
    // With B zero the adapter changes nothing.
    const x = new Float32Array(2 * 64).fill(0.5);
    const y = new Float32Array(2 * 32).fill(3);
    const { out } = loraForward(x, a, b, y, { rows: 2, ...shape }, 2);
    expect(Array.from(out)).toEqual(Array.from(y));
  });

  const f = (n: number) => new Float32Array(n);
  it.each([
    [
      'rank = 0',
      () => loraForward(f(4), f(0), f(0), f(4), { ...SHAPE, rank: 0 }, 1),
      /rank must be an integer/,
    ],
    [
      'a length',
      () => loraForward(f(4), f(3), f(2), f(4), SHAPE, 1),
      /a must have rank × inDim = 2 elements, got 3/,
    ],
    [
      'b length',
      () => loraForward(f(4), f(2), f(3), f(4), SHAPE, 1),
      /b must have outDim × rank = 2 elements, got 3/,
    ],
    ['scale', () => loraForward(f(4), f(2), f(2), f(4), SHAPE, NaN), /scale must be finite/],
    [
      'u length',
      () => loraBackward(f(4), f(4), f(3), f(2), f(2), SHAPE, 1),
      /u must have rows × rank = 2 elements, got 3/,
    ],
  ])('refuses bad input: %s', (_, call, message) => {
    expect(call).toThrow(message);
  });
});
