/**
 * A LoRA adapter on a linear layer, as PEFT defines it (LoRA paper, Hu et al. 2021; PEFT's
 * LoraLayer): beside the frozen y = x·Wᵀ (+ b), a low-rank update
 *
 *   y ← y + s·(x·Aᵀ)·Bᵀ,   s = lora_alpha / r
 *
 *   x: (rows, inDim)   A: (r, inDim) lora_A.weight   B: (outDim, r) lora_B.weight
 *   u = s·(x·Aᵀ): (rows, r), kept for the backward   y, dy: (rows, outDim)
 *
 * Backward, from dy = ∂L/∂y:
 *   du = s·(dy·B): (rows, r)   dA = duᵀ·x: (r, inDim)   dB = dyᵀ·u: (outDim, r)
 *   dx += du·A: (rows, inDim), added to the frozen layer's dx = dy·W
 *
 * Every product is one matmul() (float64 sums, one rounding to the inputs' precision), so a GPU
 * twin is the matmul kernel run on the shapes of loraMatmulShapes() plus a scale by s. The scale
 * is folded into u (and du), never into the weights, so A and B stay PEFT's tensors as stored.
 * Init (PEFT's default, init_lora_weights=True): A Kaiming-uniform with a = √5, which for fan-in
 * inDim is U(−1/√inDim, 1/√inDim); B zeros, so a fresh adapter leaves the layer unchanged.
 */
import { OpInputError } from '../errors';
import { checkInt, checkLength, checkRange } from '../validate';
import { type Floats } from './floats';
import { MATMUL_MAX_DIM, matmul, type MatmulShape } from './matmul';
import { seededRandom } from '../../util/random';

export interface LoraShape {
  /** Rows of x and y: B·T tokens. */
  rows: number;
  /** The adapted layer's in_features and out_features. */
  inDim: number;
  outDim: number;
  /** PEFT r: the adapter's rank. */
  rank: number;
}

/** PEFT's scaling without rsLoRA: lora_alpha / r. alpha > 0, r an integer ≥ 1. */
export function loraScale(alpha: number, rank: number): number {
  checkInt('loraScale', 'r', rank, 1, MATMUL_MAX_DIM);
  checkRange('loraScale', 'lora_alpha', alpha, 0, Infinity, { lowOpen: true, highOpen: true });
  return alpha / rank;
}

/** Sizes only; shared with a GPU wrapper. */
export function checkLoraShape(shape: LoraShape, op: string): void {
  checkInt(op, 'rows', shape.rows, 1, MATMUL_MAX_DIM);
  checkInt(op, 'inDim', shape.inDim, 1, MATMUL_MAX_DIM);
  checkInt(op, 'outDim', shape.outDim, 1, MATMUL_MAX_DIM);
  checkInt(op, 'rank', shape.rank, 1, MATMUL_MAX_DIM);
}

function checkScale(op: string, scale: number): void {
  if (!Number.isFinite(scale)) throw new OpInputError(op, 'scale', `must be finite, got ${scale}`);
}

/** The checks loraForward() and a GPU wrapper share. */
export function checkLoraForwardInput(
  x: Floats,
  a: Floats,
  b: Floats,
  y: Floats,
  shape: LoraShape,
  scale: number,
): void {
  const op = 'loraForward';
  checkLoraShape(shape, op);
  checkScale(op, scale);
  checkLength(op, 'x', x, shape.rows * shape.inDim, 'rows × inDim');
  checkLength(op, 'a', a, shape.rank * shape.inDim, 'rank × inDim');
  checkLength(op, 'b', b, shape.outDim * shape.rank, 'outDim × rank');
  checkLength(op, 'y', y, shape.rows * shape.outDim, 'rows × outDim');
}

/** The checks loraBackward() and a GPU wrapper share. */
export function checkLoraBackwardInput(
  dy: Floats,
  x: Floats,
  u: Floats,
  a: Floats,
  b: Floats,
  shape: LoraShape,
  scale: number,
  accumulateDx?: Floats,
): void {
  const op = 'loraBackward';
  checkLoraShape(shape, op);
  checkScale(op, scale);
  checkLength(op, 'dy', dy, shape.rows * shape.outDim, 'rows × outDim');
  checkLength(op, 'x', x, shape.rows * shape.inDim, 'rows × inDim');
  checkLength(op, 'u', u, shape.rows * shape.rank, 'rows × rank');
  checkLength(op, 'a', a, shape.rank * shape.inDim, 'rank × inDim');
  checkLength(op, 'b', b, shape.outDim * shape.rank, 'outDim × rank');
  if (accumulateDx) {
    checkLength(op, 'accumulateDx', accumulateDx, shape.rows * shape.inDim, 'rows × inDim');
  }
}

/** The five products of a LoRA adapter as matmul shapes (shared with a GPU wrapper). */
export function loraMatmulShapes(shape: LoraShape): {
  down: MatmulShape;
  up: MatmulShape;
  du: MatmulShape;
  dA: MatmulShape;
  dB: MatmulShape;
  dx: MatmulShape;
} {
  const { rows, inDim, outDim, rank } = shape;
  return {
    // x·Aᵀ (rows, r), A stored (r, inDim).
    down: { m: rows, k: inDim, n: rank, transB: true },
    // u·Bᵀ (rows, outDim), B stored (outDim, r).
    up: { m: rows, k: rank, n: outDim, transB: true },
    // dy·B (rows, r).
    du: { m: rows, k: outDim, n: rank },
    // duᵀ·x (r, inDim), du stored (rows, r).
    dA: { m: rank, k: rows, n: inDim, transA: true },
    // dyᵀ·u (outDim, r), dy stored (rows, outDim).
    dB: { m: outDim, k: rows, n: rank, transA: true },
    // du·A (rows, inDim).
    dx: { m: rows, k: rank, n: inDim },
  };
}

/** Every element times `scale`, in place (one rounding per element). */
function scaleInPlace<T extends Floats>(data: T, scale: number): T {
  if (scale !== 1) for (let i = 0; i < data.length; i++) data[i] = data[i]! * scale;
  return data;
}

/**
 * y + s·(x·Aᵀ)·Bᵀ → out (rows, outDim), a new array (y is not modified), and u = s·x·Aᵀ
 * (rows, r) for the backward.
 */
export function loraForward<T extends Floats>(
  x: T,
  a: T,
  b: T,
  y: T,
  shape: LoraShape,
  scale: number,
): { out: T; u: T } {
  checkLoraForwardInput(x, a, b, y, shape, scale);
  const shapes = loraMatmulShapes(shape);
  // #region lora-forward
  // The frozen layer's y = x·Wᵀ is given; the adapter adds s·(x·Aᵀ)·Bᵀ through rank r.
  const u = scaleInPlace(matmul(x, a, shapes.down), scale); // (rows, r)
  const out = matmul(u, b, shapes.up, { accumulate: y }); // (rows, outDim)
  // #endregion lora-forward
  return { out, u };
}

/**
 * dA (r, inDim), dB (outDim, r) and the adapter's share of dx (rows, inDim), added to
 * accumulateDx (the frozen layer's dx; not modified) when given.
 */
export function loraBackward<T extends Floats>(
  dy: T,
  x: T,
  u: T,
  a: T,
  b: T,
  shape: LoraShape,
  scale: number,
  options: { accumulateDx?: T } = {},
): { dx: T; dA: T; dB: T } {
  checkLoraBackwardInput(dy, x, u, a, b, shape, scale, options.accumulateDx);
  const shapes = loraMatmulShapes(shape);
  const du = scaleInPlace(matmul(dy, b, shapes.du), scale);
  const dA = matmul(du, x, shapes.dA);
  const dB = matmul(dy, u, shapes.dB);
  const accumulate = options.accumulateDx;
  const dx = matmul(du, a, shapes.dx, accumulate ? { accumulate } : {});
  return { dx, dA, dB };
}

/** PEFT's bound for A: Kaiming-uniform with a = √5 is U(−1/√fanIn, 1/√fanIn). */
export function loraInitBound(inDim: number): number {
  checkInt('loraInit', 'inDim', inDim, 1, MATMUL_MAX_DIM);
  return 1 / Math.sqrt(inDim);
}

/**
 * A fresh adapter as PEFT makes one: A (r, inDim) uniform in [−1/√inDim, 1/√inDim) from
 * `seed` (or from `next`, a seeded stream shared across adapters), B (outDim, r) zeros.
 */
export function loraInit(
  shape: Pick<LoraShape, 'inDim' | 'outDim' | 'rank'>,
  seed: number | (() => number),
): { a: Float32Array; b: Float32Array } {
  checkLoraShape({ rows: 1, ...shape }, 'loraInit');
  const a = new Float32Array(shape.rank * shape.inDim);
  fillLoraA(a, shape.inDim, typeof seed === 'number' ? seededRandom(seed) : seed);
  return { a, b: new Float32Array(shape.outDim * shape.rank) };
}

/** Fills A (r, inDim), in place, uniform in [−1/√inDim, 1/√inDim) drawn from `next`. */
export function fillLoraA(a: Floats, inDim: number, next: () => number): void {
  const bound = loraInitBound(inDim);
  for (let i = 0; i < a.length; i++) a[i] = (next() * 2 - 1) * bound;
}
