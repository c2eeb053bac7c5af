import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { attentionBackward, attentionForward } from '../../../src/ops/nn/attention';
import { attentionKernel } from '../../../src/ops/nn/attention-simd';
import { sameBits } from '../../support/bits';
import { randomF64 } from '../../support/gradcheck';

describe('attention: the WebAssembly SIMD kernels', () => {
  it('compile in Node (so the comparisons below compare two paths)', () => {
    expect(attentionKernel()).not.toBeNull();
  });

  it('property: forward and backward equal the JavaScript loops bit for bit, in both precisions', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 19 }),
        fc.integer({ min: 1, max: 3 }),
        fc.integer({ min: 1, max: 11 }),
        fc.boolean(),
        fc.integer({ min: 0, max: 2 ** 31 - 1 }),
        (batch, seq, heads, headSize, f64, seed) => {
          const shape = { batch, seq, heads, channels: heads * headSize };
          const make = (length: number, offset: number) => {
            const values = randomF64(length, 3, seed + offset);
            return f64 ? values : new Float32Array(values);
          };
          const qkv = make(batch * seq * 3 * shape.channels, 0);
          const dout = make(batch * seq * shape.channels, 1);
          const fast = attentionForward(qkv, shape);
          const loops = attentionForward(qkv, shape, 'loops');
          expect(sameBits(fast.out, loops.out)).toBe(true);
          expect(sameBits(fast.probs, loops.probs)).toBe(true);
          const grad = attentionBackward(dout, qkv, loops.probs, shape);
          const gradLoops = attentionBackward(dout, qkv, loops.probs, shape, 'loops');
          expect(sameBits(grad, gradLoops)).toBe(true);
        },
      ),
      { numRuns: 200 },
    );
  });

  it('matches the loops at the largest context and head size, where the rows are longest', () => {
    const shape = { batch: 1, seq: 256, heads: 1, channels: 256 };
    const qkv = new Float32Array(randomF64(256 * 3 * 256, 1, 5));
    const dout = new Float32Array(randomF64(256 * 256, 1, 6));
    const fast = attentionForward(qkv, shape);
    const loops = attentionForward(qkv, shape, 'loops');
    expect(sameBits(fast.out, loops.out)).toBe(true);
    expect(sameBits(fast.probs, loops.probs)).toBe(true);
    const grad = attentionBackward(dout, qkv, loops.probs, shape);
    expect(sameBits(grad, attentionBackward(dout, qkv, loops.probs, shape, 'loops'))).toBe(true);
  });

  it('keeps a non-finite value of a later position out of earlier rows, as the causal loops do', () => {
    // v at the last position is ∞: every earlier output row and every dk/dv of earlier rows
    // must stay finite and equal to the loops'.
    const shape = { batch: 1, seq: 9, heads: 1, channels: 4 };
    const qkv = new Float32Array(randomF64(9 * 12, 1, 3));
    qkv[8 * 12 + 8] = Infinity;
    const dout = new Float32Array(randomF64(9 * 4, 1, 4));
    const fast = attentionForward(qkv, shape);
    const loops = attentionForward(qkv, shape, 'loops');
    expect(sameBits(fast.out, loops.out)).toBe(true);
    expect(fast.out.slice(0, 8 * 4).every(Number.isFinite)).toBe(true);
    const grad = attentionBackward(dout, qkv, loops.probs, shape);
    expect(sameBits(grad, attentionBackward(dout, qkv, loops.probs, shape, 'loops'))).toBe(true);
  });
});
