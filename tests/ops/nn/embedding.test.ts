import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { OpInputError } from '../../../src/ops/errors';
import {
  embeddingBackward,
  embeddingForward,
  type EmbeddingShape,
} from '../../../src/ops/nn/embedding';
import { dot, gradCheck, probeWeights, randomF64 } from '../../support/gradcheck';

// V = 3, C = 2, maxSeq = 4, B = 2, T = 2.
const shape: EmbeddingShape = { batch: 2, seq: 2, channels: 2, vocab: 3, maxSeq: 4 };
const wte = new Float64Array([1, 2, 3, 4, 5, 6]); // rows: [1, 2], [3, 4], [5, 6]
const wpe = new Float64Array([0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]);
const tokens = new Int32Array([2, 0, 2, 2]); // (B, T): [[2, 0], [2, 2]]

describe('embeddingForward (CPU reference)', () => {
  it('adds the token row and the position row (hand-worked)', () => {
    // x[0, 0] = wte[2] + wpe[0] = [5.1, 6.2];  x[0, 1] = wte[0] + wpe[1] = [1.3, 2.4]
    // x[1, 0] = wte[2] + wpe[0] = [5.1, 6.2];  x[1, 1] = wte[2] + wpe[1] = [5.3, 6.4]
    const x = embeddingForward(tokens, wte, wpe, shape);
    const expected = [5.1, 6.2, 1.3, 2.4, 5.1, 6.2, 5.3, 6.4];
    expected.forEach((e, i) => expect(x[i]).toBeCloseTo(e, 14));
    expect(x).toBeInstanceOf(Float64Array);
  });

  it('starts the positions at posOffset', () => {
    // posOffset = 2: positions 2, 3 → x[0, 0] = [5, 6] + [0.5, 0.6]; x[0, 1] = [1, 2] + [0.7, 0.8]
    const x = embeddingForward(tokens, wte, wpe, shape, 2);
    const expected = [5.5, 6.6, 1.7, 2.8, 5.5, 6.6, 5.7, 6.8];
    expected.forEach((e, i) => expect(x[i]).toBeCloseTo(e, 14));
  });

  it('without wpe (rotary positions) is the token rows alone, at any posOffset', () => {
    // tokens [[2, 0], [2, 2]] → wte rows [5, 6], [1, 2], [5, 6], [5, 6].
    const expected = [5, 6, 1, 2, 5, 6, 5, 6];
    expect(Array.from(embeddingForward(tokens, wte, undefined, shape))).toEqual(expected);
    expect(Array.from(embeddingForward(tokens, wte, undefined, shape, 2))).toEqual(expected);
  });

  it('returns Float32Array for Float32Array weights and takes Uint32Array ids', () => {
    const x = embeddingForward(
      new Uint32Array(tokens),
      new Float32Array(wte),
      new Float32Array(wpe),
      shape,
    );
    expect(x).toBeInstanceOf(Float32Array);
    expect(x[3]).toBeCloseTo(2.4, 6);
  });
});

describe('embeddingBackward (CPU reference)', () => {
  // dx rows (b, t): [1, 2], [3, 4], [5, 6], [7, 8] with tokens [2, 0, 2, 2].
  const dx = new Float64Array([1, 2, 3, 4, 5, 6, 7, 8]);

  it('sums dx rows per token and per position (hand-worked)', () => {
    // dwte[0] = dx(0,1) = [3, 4]; dwte[1] = 0 (token absent);
    // dwte[2] = dx(0,0) + dx(1,0) + dx(1,1) = [1 + 5 + 7, 2 + 6 + 8] = [13, 16]
    // dwpe[0] = dx(0,0) + dx(1,0) = [6, 8]; dwpe[1] = dx(0,1) + dx(1,1) = [10, 12]; rows 2, 3 = 0
    const { dwte, dwpe } = embeddingBackward(dx, tokens, shape);
    expect(Array.from(dwte)).toEqual([3, 4, 0, 0, 13, 16]);
    expect(Array.from(dwpe)).toEqual([6, 8, 10, 12, 0, 0, 0, 0]);
  });

  it('adds accumulateDwte (tied embeddings: the LM head wrote its part first)', () => {
    const head = new Float64Array([1, 1, 1, 1, 1, 1]);
    const { dwte } = embeddingBackward(dx, tokens, shape, { accumulateDwte: head });
    expect(Array.from(dwte)).toEqual([4, 5, 1, 1, 14, 17]);
    expect(Array.from(head)).toEqual([1, 1, 1, 1, 1, 1]); // the input is not modified
  });

  it('with wpe: false (rotary positions) returns the same dwte and no dwpe', () => {
    const learned = embeddingBackward(dx, tokens, shape);
    const rotary = embeddingBackward(dx, tokens, shape, { wpe: false });
    expect(Array.from(rotary.dwte)).toEqual([3, 4, 0, 0, 13, 16]);
    expect(Array.from(rotary.dwte)).toEqual(Array.from(learned.dwte));
    expect(Object.keys(rotary)).toEqual(['dwte']);
    // @ts-expect-error the wpe: false overload's result has no dwpe to read
    expect(rotary.dwpe).toBeUndefined();
    // Tied embeddings without wpe: the head's part is still added.
    const head = new Float64Array([1, 1, 1, 1, 1, 1]);
    const tied = embeddingBackward(dx, tokens, shape, { wpe: false, accumulateDwte: head });
    expect(Array.from(tied.dwte)).toEqual([4, 5, 1, 1, 14, 17]);
    expect(Object.keys(tied)).toEqual(['dwte']);
  });

  it('with wpe decided at run time: dwpe only when wpe is true, typed as optional', () => {
    for (const wpe of [true, false]) {
      const { dwte, dwpe } = embeddingBackward(dx, tokens, shape, { wpe });
      expect(Array.from(dwte)).toEqual([3, 4, 0, 0, 13, 16]);
      // dwpe: T | undefined here, so the caller must check before reading it.
      expect(dwpe === undefined ? undefined : Array.from(dwpe)).toEqual(
        wpe ? [6, 8, 10, 12, 0, 0, 0, 0] : undefined,
      );
    }
  });

  it('passes a finite-difference gradient check for wte without wpe (float64)', () => {
    const s: EmbeddingShape = { batch: 2, seq: 4, channels: 3, vocab: 5, maxSeq: 6 };
    const ids = new Int32Array([1, 3, 1, 0, 3, 3, 2, 1]);
    const w = randomF64(s.vocab * s.channels, 1, 5);
    const probe = probeWeights(s.batch * s.seq * s.channels, 6);
    const loss = () => dot(probe, embeddingForward(ids, w, undefined, s));
    const { dwte } = embeddingBackward(probe, ids, s, { wpe: false });
    const result = gradCheck(w, dwte, loss);
    expect(result.maxRelError, JSON.stringify(result.worst)).toBeLessThan(1e-8);
  });

  it('passes a finite-difference gradient check for wte and wpe (float64, repeated tokens)', () => {
    const s: EmbeddingShape = { batch: 3, seq: 5, channels: 4, vocab: 6, maxSeq: 7 };
    // Token 1 appears four times, token 4 three times; tokens 0 and 5 never appear.
    const ids = new Int32Array([1, 2, 1, 4, 3, 4, 1, 2, 4, 3, 1, 3, 2, 2, 3]);
    const w = randomF64(s.vocab * s.channels, 1, 1);
    const p = randomF64(s.maxSeq * s.channels, 1, 2);
    const probe = probeWeights(s.batch * s.seq * s.channels, 3);
    const loss = () => dot(probe, embeddingForward(ids, w, p, s));
    const { dwte, dwpe } = embeddingBackward(probe, ids, s);
    for (const [x, grad] of [
      [w, dwte],
      [p, dwpe],
    ] as const) {
      const result = gradCheck(x, grad, loss);
      expect(result.maxRelError, JSON.stringify(result.worst)).toBeLessThan(1e-8);
    }
  });

  it('property: Σ_v dwte = Σ_t dwpe = Σ over positions of dx (every row lands somewhere)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 5 }),
        fc.integer({ min: 1, max: 9 }),
        fc.integer({ min: 0, max: 1000 }),
        (batch, seq, channels, vocab, seed) => {
          const s = { batch, seq, channels, vocab, maxSeq: seq + 2 };
          const ids = new Int32Array(batch * seq).map((_, i) => (i * 7 + seed) % vocab);
          const g = randomF64(batch * seq * channels, 1, seed);
          const { dwte, dwpe } = embeddingBackward(g, ids, s);
          for (let c = 0; c < channels; c++) {
            let total = 0;
            let byToken = 0;
            let byPosition = 0;
            for (let n = 0; n < batch * seq; n++) total += g[n * channels + c]!;
            for (let v = 0; v < vocab; v++) byToken += dwte[v * channels + c]!;
            for (let t = 0; t < s.maxSeq; t++) byPosition += dwpe[t * channels + c]!;
            expect(byToken).toBeCloseTo(total, 10);
            expect(byPosition).toBeCloseTo(total, 10);
          }
        },
      ),
    );
  });
});

describe('embedding input checks', () => {
  const f = (n: number) => new Float64Array(n);
  it.each<[string, () => unknown, RegExp]>([
    [
      'token id = V',
      () => embeddingForward(new Int32Array([2, 0, 3, 2]), wte, wpe, shape),
      /tokens must be ids in \[0, 3\) \(vocab\), but index 2 \(b 1, t 0\) is 3/,
    ],
    [
      'negative token id',
      () => embeddingForward(new Int32Array([2, -1, 0, 0]), wte, wpe, shape),
      /index 1 \(b 0, t 1\) is -1/,
    ],
    [
      'token id out of range in backward',
      () => embeddingBackward(f(8), new Uint32Array([0, 0, 0, 7]), shape),
      /index 3 \(b 1, t 1\) is 7/,
    ],
    [
      'tokens length',
      () => embeddingForward(new Int32Array(3), wte, wpe, shape),
      /tokens must have batch × seq = 4/,
    ],
    [
      'wte length',
      () => embeddingForward(tokens, f(5), wpe, shape),
      /wte must have vocab × channels = 6/,
    ],
    [
      'wpe length',
      () => embeddingForward(tokens, wte, f(6), shape),
      /wpe must have maxSeq × channels = 8/,
    ],
    [
      'posOffset past the end',
      () => embeddingForward(tokens, wte, wpe, shape, 3),
      /posOffset must be an integer in \[0, 2\]/,
    ],
    [
      'seq > maxSeq',
      () => embeddingForward(tokens, wte, wpe, { ...shape, seq: 5 }),
      /seq must be an integer in \[1, 4\]/,
    ],
    [
      'channels = 0',
      () => embeddingForward(tokens, wte, wpe, { ...shape, channels: 0 }),
      /channels must be/,
    ],
    [
      'more than 65,536 tokens',
      () =>
        embeddingBackward(f(1), new Int32Array(1), {
          batch: 300,
          seq: 300,
          channels: 1,
          vocab: 2,
          maxSeq: 300,
        }),
      /batch × seq must be at most 65536, got 300 × 300 = 90000/,
    ],
    [
      'dx length',
      () => embeddingBackward(f(7), tokens, shape),
      /dx must have batch × seq × channels = 8/,
    ],
    [
      'accumulateDwte length',
      () => embeddingBackward(f(8), tokens, shape, { accumulateDwte: f(5) }),
      /accumulateDwte must have vocab × channels = 6/,
    ],
  ])('rejects %s', (_, run, message) => {
    expect(run).toThrow(OpInputError);
    expect(run).toThrow(message);
  });
});
