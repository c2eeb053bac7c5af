/**
 * The CPU matmul's fast path: a WebAssembly SIMD kernel (built by wasm-module.ts) that computes
 * 4 × 4 output tiles with float64 sums, two per f64x2 lane pair. Each output element is still one
 * float64 sum over p = 0…k−1 in order, starting from 0, of exact products (f32·f32 fits in a
 * float64; f64·f64 rounds as JavaScript rounds it): the result is bit for bit matmul()'s plain
 * loops, only two to four times faster on a laptop core (npm run bench -- --suites=matmul).
 *
 * Memory layout (all float64, in the module's memory, reused between calls):
 *   B panels: for each block of 4 columns of op(B), k × 4 values: b[p, j0+c] at 4p + c
 *   A panels: for each block of 4 rows of op(A), k × 4 values (p-major): a[i0+r, p] at 4p + r
 *   sums:     (4·rowBlocks) × (4·colBlocks), row-major; rows and columns past m, n are padding
 * Packing costs O(mk + kn) per chunk against the kernel's O(mkn). Columns and rows are taken in
 * chunks so that the scratch stays under SCRATCH_BYTES (per worker: WebAssembly memory does not
 * shrink).
 */
import type { Floats } from './floats';
import type { MatmulOptions, MatmulShape, Strides } from './matmul';
import {
  block,
  br,
  brIf,
  encodeModule,
  f64,
  f64x2,
  i32,
  i32T,
  local,
  loop,
  v128,
  v128T,
  type Code,
  type FunctionDef,
  type ValueType,
} from './wasm-module';

/** The most scratch memory the kernel keeps (bytes). */
export const SCRATCH_BYTES = 16 * 2 ** 20;

/**
 * tiles(aPanels, bPanels, sums, rowBlocks, colBlocks, k): every 4 × 4 tile of sums. Addresses
 * are byte offsets into the module's memory, 16-byte aligned.
 */
function tilesFunction(): FunctionDef {
  // Parameters 0–5, then locals.
  const [aPanels, bPanels, sums, rowBlocks, colBlocks, k] = [0, 1, 2, 3, 4, 5];
  const [ib, jb, p, ap, bp, out, rowBytes, panelBytes] = [6, 7, 8, 9, 10, 11, 12, 13];
  const [b01, b23] = [14, 15];
  // acc[r][h]: output row r of the tile, columns 2h and 2h + 1.
  const acc = [16, 18, 20, 22].map((first) => [first, first + 1]);
  const get = local.get;
  const zeroAccumulators = acc.flat().map((index) => local.set(index, v128.zero()));
  const multiplyAdd: Code[] = [];
  for (let r = 0; r < 4; r++) {
    // a[i0 + r, p], splat into both lanes, times b[p, j0 … j0+1] and b[p, j0+2 … j0+3].
    const a = f64x2.splat(f64.load(get(ap), 8 * r));
    for (const [h, b] of [get(b01), get(b23)].entries()) {
      const sum = acc[r]![h]!;
      multiplyAdd.push(local.set(sum, f64x2.add(get(sum), f64x2.mul(a, b))));
    }
  }
  const storeTile: Code[] = [];
  for (let r = 0; r < 4; r++) {
    if (r > 0) storeTile.push(local.set(out, i32.add(get(out), get(rowBytes))));
    storeTile.push(v128.store(get(out), get(acc[r]![0]!)));
    storeTile.push(v128.store(get(out), get(acc[r]![1]!), 16));
  }
  const body: Code[] = [
    local.set(rowBytes, i32.shl(get(colBlocks), i32.const(5))), // 4 columns × 8 bytes each
    local.set(panelBytes, i32.shl(get(k), i32.const(5))), // k × 4 values × 8 bytes
    local.set(ib, i32.const(0)),
    block((doneRows) => [
      loop((nextRow) => [
        brIf(doneRows, i32.geU(get(ib), get(rowBlocks))),
        local.set(jb, i32.const(0)),
        block((doneCols) => [
          loop((nextCol) => [
            brIf(doneCols, i32.geU(get(jb), get(colBlocks))),
            local.set(ap, i32.add(get(aPanels), i32.mul(get(ib), get(panelBytes)))),
            local.set(bp, i32.add(get(bPanels), i32.mul(get(jb), get(panelBytes)))),
            ...zeroAccumulators,
            local.set(p, get(k)),
            loop((nextP) => [
              local.set(b01, v128.load(get(bp))),
              local.set(b23, v128.load(get(bp), 16)),
              ...multiplyAdd,
              local.set(ap, i32.add(get(ap), i32.const(32))),
              local.set(bp, i32.add(get(bp), i32.const(32))),
              local.set(p, i32.sub(get(p), i32.const(1))),
              brIf(nextP, get(p)), // k ≥ 1
            ]),
            // The tile's first element: sums + (4·ib·rowBytes) + 32·jb.
            local.set(
              out,
              i32.add(
                get(sums),
                i32.add(
                  i32.mul(get(ib), i32.shl(get(rowBytes), i32.const(2))),
                  i32.shl(get(jb), i32.const(5)),
                ),
              ),
            ),
            ...storeTile,
            local.set(jb, i32.add(get(jb), i32.const(1))),
            br(nextCol),
          ]),
        ]),
        local.set(ib, i32.add(get(ib), i32.const(1))),
        br(nextRow),
      ]),
    ]),
  ];
  return {
    name: 'tiles',
    params: [i32T, i32T, i32T, i32T, i32T, i32T],
    locals: [...new Array<ValueType>(8).fill(i32T), ...new Array<ValueType>(10).fill(v128T)],
    body,
  };
}

interface Kernel {
  memory: WebAssembly.Memory;
  tiles: (
    a: number,
    b: number,
    sums: number,
    rowBlocks: number,
    colBlocks: number,
    k: number,
  ) => void;
}

let kernel: Kernel | null | undefined;

/** The compiled kernel, or null where WebAssembly SIMD is unavailable (then matmul uses JS). */
export function simdKernel(): Kernel | null {
  if (kernel !== undefined) return kernel;
  try {
    const bytes = encodeModule(1, [tilesFunction()]);
    const instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), {});
    kernel = instance.exports as unknown as Kernel;
  } catch {
    kernel = null;
  }
  return kernel;
}

/**
 * out = op(A)·op(B) [+ bias] [+ accumulate] through the kernel, into `out` (m·n). Returns false,
 * having written nothing, when one block of 4 rows or columns alone would take more than half the
 * scratch (k in the hundreds of thousands) or the memory cannot grow to the scratch it needs.
 */
export function matmulSimd<T extends Floats>(
  kernel: Kernel,
  a: T,
  b: T,
  shape: MatmulShape,
  strides: Strides,
  options: MatmulOptions<T>,
  out: T,
): boolean {
  const { m, k, n } = shape;
  const panelBytes = k * 4 * 8;
  // Half the scratch for B's panels, half for A's and the sums of the same rows.
  const half = SCRATCH_BYTES / 2;
  const colBlocksPerChunk = Math.floor(half / panelBytes);
  const colBlocks = Math.min(Math.ceil(n / 4), colBlocksPerChunk);
  const rowBlocks = Math.floor(half / (panelBytes + 4 * colBlocks * 4 * 8));
  if (colBlocks < 1 || rowBlocks < 1) return false;
  const needed = colBlocks * panelBytes + rowBlocks * (panelBytes + 4 * colBlocks * 4 * 8);
  const memory = kernel.memory;
  if (memory.buffer.byteLength < needed) {
    try {
      memory.grow(Math.ceil((needed - memory.buffer.byteLength) / 65536));
    } catch {
      return false; // the page is short of memory: the loops need none
    }
  }
  const scratch = new Float64Array(memory.buffer);
  for (let j0 = 0; j0 < n; j0 += colBlocks * 4) {
    const cols = Math.min(colBlocks * 4, n - j0);
    const blocksOfCols = Math.ceil(cols / 4);
    packB(b, strides, k, j0, cols, scratch);
    const aStart = blocksOfCols * k * 4;
    for (let i0 = 0; i0 < m; i0 += rowBlocks * 4) {
      const rows = Math.min(rowBlocks * 4, m - i0);
      const blocksOfRows = Math.ceil(rows / 4);
      packA(a, strides, k, i0, rows, scratch, aStart);
      const sumsStart = aStart + blocksOfRows * k * 4;
      kernel.tiles(aStart * 8, 0, sumsStart * 8, blocksOfRows, blocksOfCols, k);
      // Each sum + bias[j] + accumulate[i, j] in float64, then one rounding into out.
      const width = blocksOfCols * 4;
      const { bias, accumulate } = options;
      for (let r = 0; r < rows; r++) {
        const from = sumsStart + r * width;
        const row = (i0 + r) * n + j0;
        if (bias) addInto(scratch, from, bias, j0, cols);
        if (accumulate) addInto(scratch, from, accumulate, row, cols);
        for (let c = 0; c < cols; c++) out[row + c] = scratch[from + c]!;
      }
    }
  }
  return true;
}

/** scratch[at + c] += x[from + c] for c < count. */
function addInto(scratch: Float64Array, at: number, x: Floats, from: number, count: number) {
  for (let c = 0; c < count; c++) scratch[at + c]! += x[from + c]!;
}

/** B's panels for columns j0 … j0+cols−1 at the start of scratch: b[p, j] at 4·(k·block + p) + c. */
function packB(b: Floats, s: Strides, k: number, j0: number, cols: number, scratch: Float64Array) {
  let o = 0;
  for (let c0 = 0; c0 < cols; c0 += 4) {
    for (let p = 0; p < k; p++) {
      for (let c = c0; c < c0 + 4; c++, o++) {
        scratch[o] = c < cols ? b[p * s.bInner + (j0 + c) * s.bCol]! : 0;
      }
    }
  }
}

/** A's panels for rows i0 … i0+rows−1 from scratch[start]: a[i, p] at 4·(k·block + p) + r. */
function packA(
  a: Floats,
  s: Strides,
  k: number,
  i0: number,
  rows: number,
  scratch: Float64Array,
  start: number,
) {
  let o = start;
  for (let r0 = 0; r0 < rows; r0 += 4) {
    for (let p = 0; p < k; p++) {
      for (let r = r0; r < r0 + 4; r++, o++) {
        scratch[o] = r < rows ? a[(i0 + r) * s.aRow + p * s.aInner]! : 0;
      }
    }
  }
}
