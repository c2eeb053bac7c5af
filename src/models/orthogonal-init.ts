/**
 * Orthogonal weight initialisation, as torch.nn.init.orthogonal_ defines it (Saxe et al. 2014),
 * the init CleanRL's `layer_init` gives every PPO layer:
 *
 *   A ~ N(0, 1)^(rows × cols); if rows < cols, work on Aᵀ (tall: m ≥ n);
 *   A = Q·R (reduced QR), Q: (m, n) with orthonormal columns; sign-correct Q so that diag(R) > 0;
 *   W = gain · Q, transposed back when rows < cols.
 *
 * So WᵀW = gain²·I (cols × cols) for a tall or square W, and WWᵀ = gain²·I (rows × rows) for a
 * wide one (semi-orthogonal). PyTorch factors with Householder QR and then multiplies column j of Q
 * by sign(R_jj); Gram–Schmidt yields R_jj = ‖·‖ > 0 directly, which is the same unique Q (the QR
 * factorisation with a positive diagonal). Orthogonalising twice ("twice is enough") keeps Q
 * orthonormal to float64 rounding even for 1024 × 1024.
 *
 * The Gaussian draws come from this project's seeded generator, so values differ from PyTorch's
 * for the same seed; the distribution (Haar-uniform on the orthogonal matrices) is the same.
 */
import { checkInt, checkLength, checkRange } from '../ops/validate';
import { gaussian } from '../util/random';

const OP = 'orthogonal';
/** Rows and columns up to this size (the MLP's widest layer is 1024). */
export const ORTHOGONAL_MAX_DIM = 4096;

/**
 * The orthogonal matrix torch's procedure makes from a given matrix `a` (rows × cols, row-major).
 * Returns gain · Q as (rows × cols) row-major float64. Exported for hand-worked tests.
 */
export function orthogonalFrom(
  a: Float64Array,
  rows: number,
  cols: number,
  gain: number,
): Float64Array {
  checkInt(OP, 'rows', rows, 1, ORTHOGONAL_MAX_DIM);
  checkInt(OP, 'cols', cols, 1, ORTHOGONAL_MAX_DIM);
  checkRange(OP, 'gain', gain, -Infinity, Infinity);
  checkLength(OP, 'a', a, rows * cols, 'rows × cols');
  const tall = rows >= cols;
  // The tall working matrix M (m × n), m ≥ n, held as n columns of length m.
  const m = tall ? rows : cols;
  const n = tall ? cols : rows;
  const columns: Float64Array[] = [];
  for (let j = 0; j < n; j++) {
    const col = new Float64Array(m);
    // M = A when tall (column j of A); M = Aᵀ when wide (column j of Aᵀ = row j of A).
    for (let i = 0; i < m; i++) col[i] = tall ? a[i * cols + j]! : a[j * cols + i]!;
    columns.push(col);
  }
  for (let j = 0; j < n; j++) {
    const q = columns[j]!;
    for (let pass = 0; pass < 2; pass++) {
      for (let k = 0; k < j; k++) {
        const prev = columns[k]!;
        let d = 0;
        for (let i = 0; i < m; i++) d += prev[i]! * q[i]!;
        for (let i = 0; i < m; i++) q[i]! -= d * prev[i]!;
      }
    }
    let norm = 0;
    for (let i = 0; i < m; i++) norm += q[i]! * q[i]!;
    norm = Math.sqrt(norm);
    // A Gaussian matrix has full rank with probability 1; a dependent column from a hand-made
    // `a` cannot give an orthonormal Q, so it is rejected rather than returned half-filled.
    if (!(norm > 1e-12)) {
      throw new RangeError(`${OP}: column ${j} of the matrix is linearly dependent on the others`);
    }
    for (let i = 0; i < m; i++) q[i]! /= norm;
  }
  const out = new Float64Array(rows * cols);
  for (let j = 0; j < n; j++) {
    const q = columns[j]!;
    for (let i = 0; i < m; i++) {
      // Q (m × n) back to W (rows × cols): W = Q when tall, W = Qᵀ when wide.
      out[tall ? i * cols + j : j * cols + i] = gain * q[i]!;
    }
  }
  return out;
}

/**
 * A (rows × cols) row-major orthogonal (semi-orthogonal when rows ≠ cols) matrix scaled by `gain`,
 * from a Gaussian matrix drawn with `random` (uniforms in [0, 1), e.g. seededRandom(seed)).
 * Draws rows · cols normals in row-major order, as torch does before its transpose.
 */
export function orthogonal(
  rows: number,
  cols: number,
  gain: number,
  random: () => number,
): Float64Array {
  checkInt(OP, 'rows', rows, 1, ORTHOGONAL_MAX_DIM);
  checkInt(OP, 'cols', cols, 1, ORTHOGONAL_MAX_DIM);
  const a = new Float64Array(rows * cols);
  for (let i = 0; i < a.length; i++) a[i] = gaussian(random);
  return orthogonalFrom(a, rows, cols, gain);
}
