/**
 * GPU wrappers for kernels/nn/matmul.wgsl and kernels/nn/matmul_column_sums.wgsl; CPU twins:
 * matmul() and columnSums() in src/ops/nn/matmul.ts.
 * matmul dispatch: one 16 × 16-thread workgroup per 64 × 64 output tile, grid (⌈n/64⌉, ⌈m/64⌉).
 * column sums dispatch: one 32 × 8-thread workgroup per 32 columns (cols ≤ 2^20: one dimension).
 */
import columnSumsSource from '../../../../kernels/nn/matmul_column_sums.wgsl?raw';
import matmulSource from '../../../../kernels/nn/matmul.wgsl?raw';
import { OpInputError } from '../../../ops/errors';
import { checkInt } from '../../../ops/validate';
import {
  type MatmulShape,
  checkColumnSumsInput,
  checkColumnSumsShape,
  checkMatmulInput,
  checkMatmulShape,
} from '../../../ops/nn/matmul';
import type { BufferRef, CommandBatch } from '../../batch';
import type { GpuContext } from '../../context';
import { defineKernel } from '../../kernel';
import { reflectConstant } from '../../wgsl-reflect';
import { checkBindingSize } from '../advantage-dispatch';
import { PooledBuffers } from '../run-convenience';

export const matmulKernel = defineKernel({
  name: 'matmul',
  source: matmulSource,
  uniforms: [
    { name: 'm', type: 'u32' },
    { name: 'k', type: 'u32' },
    { name: 'n', type: 'u32' },
    { name: 'has_bias', type: 'u32' },
    { name: 'accumulate', type: 'u32' },
    { name: 'a_stride', type: 'u32' },
    { name: 'a_col', type: 'u32' },
    { name: 'out_stride', type: 'u32' },
    { name: 'out_col', type: 'u32' },
  ],
  storage: [
    { name: 'a', access: 'read' },
    { name: 'b', access: 'read' },
    { name: 'bias', access: 'read' },
    { name: 'out', access: 'read_write' },
  ],
});

export const columnSumsKernel = defineKernel({
  name: 'matmul_column_sums',
  source: columnSumsSource,
  uniforms: [
    { name: 'rows', type: 'u32' },
    { name: 'cols', type: 'u32' },
    { name: 'accumulate', type: 'u32' },
  ],
  storage: [
    { name: 'x', access: 'read' },
    { name: 'out', access: 'read_write' },
  ],
});

/** Output rows and columns per matmul workgroup, read from the kernel (TILE). */
const MATMUL_TILE = reflectConstant(matmulSource, 'TILE');
/** Columns per column-sums workgroup, read from the kernel (COLS). */
const COLUMN_SUMS_COLS = reflectConstant(columnSumsSource, 'COLS');

/** Byte range [start, end) a binding covers. */
function byteRange(ref: BufferRef): { buffer: GPUBuffer; start: number; end: number } {
  if ('buffer' in ref) {
    const start = ref.offset ?? 0;
    return { buffer: ref.buffer, start, end: start + (ref.size ?? ref.buffer.size - start) };
  }
  return { buffer: ref, start: 0, end: ref.size };
}

/**
 * Checks, without touching GPU data, that each binding holds its tensor (a too-small binding would
 * read clamped garbage instead of failing) and that the output's GPUBuffer is not also bound as an
 * input: WebGPU tracks usage per whole buffer, so a buffer bound writable and read-only in one
 * dispatch invalidates the command buffer even when the ranges are disjoint. (Outputs and inputs
 * may be slices of two different flat buffers, e.g. gradients and parameters.)
 */
export function checkBindings(
  gpu: GpuContext,
  op: string,
  inputs: Record<string, [BufferRef, number] | undefined>,
  output: [name: string, ref: BufferRef, elements: number],
): void {
  const [outName, outRef, outElements] = output;
  const outBuffer = byteRange(outRef).buffer;
  const all: [string, [BufferRef, number] | undefined][] = [
    ...Object.entries(inputs),
    [outName, [outRef, outElements]],
  ];
  for (const [name, entry] of all) {
    if (!entry) continue;
    const [ref, elements] = entry;
    checkBindingSize(gpu, elements, `${op} ${name}`);
    const range = byteRange(ref);
    if (range.end - range.start < elements * 4) {
      throw new OpInputError(
        op,
        `buffers.${name}`,
        `must bind at least ${elements} f32 (${elements * 4} bytes), got ${range.end - range.start} bytes`,
      );
    }
    if (name !== outName && range.buffer === outBuffer) {
      throw new OpInputError(
        op,
        `buffers.${outName}`,
        `must be in a different GPUBuffer than buffers.${name}: WebGPU forbids binding one buffer writable and read-only in the same dispatch, even at disjoint ranges`,
      );
    }
  }
}

/**
 * A column window of a wider row-major matrix: its rows lie `stride` elements apart and start at
 * column `col`. A weight split by output rows into parts (a large vocabulary's LM head) multiplies
 * part by part, each part's product written to (or read from) its own columns of the logits.
 */
export interface ColumnWindow {
  stride: number;
  col: number;
}

/**
 * Elements a binding must hold for a stored (rows, cols) matrix seen through `window` (rows·cols
 * without one); checks the window: col ≥ 0, stride ≥ col + cols, indices within u32.
 */
export function windowElements(
  op: string,
  name: string,
  rows: number,
  cols: number,
  window: ColumnWindow | undefined,
): number {
  if (!window) return rows * cols;
  checkInt(op, `${name}Window.col`, window.col, 0, 2 ** 32 - 1 - cols);
  checkInt(op, `${name}Window.stride`, window.stride, window.col + cols, 2 ** 32 - 1);
  const elements = (rows - 1) * window.stride + window.col + cols;
  if (elements > 2 ** 32 - 1) {
    throw new OpInputError(op, `${name}Window.stride`, `makes ${elements} elements (max 2^32 − 1)`);
  }
  return elements;
}

/** The kernels' stride and first-column uniforms for a stored matrix `cols` wide. */
export function windowUniforms(cols: number, window: ColumnWindow | undefined): [number, number] {
  return window ? [window.stride, window.col] : [cols, 0];
}

export interface MatmulEncodeOptions {
  /** out += op(A)·op(B) [+ bias]: `out` is read and written (gradient accumulation). */
  accumulate?: boolean;
  /** Stored A is a column window of a wider matrix (stored shape (m, k), or (k, m) if transA). */
  aWindow?: ColumnWindow;
  /** out is a column window of a wider matrix; bias is then indexed in its full columns. */
  outWindow?: ColumnWindow;
}

/**
 * Records out (m, n) = op(A)·op(B) [+ bias] [+ out] into `batch`. a: (m, k) or (k, m) if transA;
 * b: (k, n) or (n, k) if transB; bias: (n); out: (m, n). All f32, whole buffers or slices.
 */
export async function encodeMatmul(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { a: BufferRef; b: BufferRef; bias?: BufferRef; out: BufferRef },
  shape: MatmulShape,
  options: MatmulEncodeOptions = {},
): Promise<void> {
  checkMatmulShape(shape);
  const { m, k, n } = shape;
  const [aRows, aCols] = shape.transA ? [k, m] : [m, k];
  const { aWindow, outWindow } = options;
  const aElements = windowElements('matmul', 'a', aRows, aCols, aWindow);
  const outElements = windowElements('matmul', 'out', m, n, outWindow);
  const biasElements = (outWindow?.col ?? 0) + n;
  checkBindings(
    gpu,
    'matmul',
    {
      a: [buffers.a, aElements],
      b: [buffers.b, k * n],
      bias: buffers.bias && [buffers.bias, biasElements],
    },
    ['out', buffers.out, outElements],
  );
  const [aStride, aCol] = windowUniforms(aCols, aWindow);
  const [outStride, outCol] = windowUniforms(n, outWindow);
  const pipeline = await gpu.pipelines.get(matmulKernel, {
    TRANS_A: shape.transA ? 1 : 0,
    TRANS_B: shape.transB ? 1 : 0,
  });
  batch.dispatch(matmulKernel, {
    pipeline,
    // Without a bias, A is bound in its place (never read: has_bias = 0); two read-only bindings
    // of one buffer are allowed, and nothing is allocated.
    buffers: { a: buffers.a, b: buffers.b, bias: buffers.bias ?? buffers.a, out: buffers.out },
    uniforms: {
      m,
      k,
      n,
      has_bias: buffers.bias ? 1 : 0,
      accumulate: options.accumulate ? 1 : 0,
      a_stride: aStride,
      a_col: aCol,
      out_stride: outStride,
      out_col: outCol,
    },
    workgroups: [Math.ceil(n / MATMUL_TILE), Math.ceil(m / MATMUL_TILE)],
  });
}

/** Records out[c] = Σ_r x[r, c] [+ out[c]] into `batch`. x: (rows, cols), out: (cols). */
export async function encodeColumnSums(
  gpu: GpuContext,
  batch: CommandBatch,
  buffers: { x: BufferRef; out: BufferRef },
  rows: number,
  cols: number,
  options: { accumulate?: boolean } = {},
): Promise<void> {
  checkColumnSumsShape(rows, cols);
  checkBindings(gpu, 'columnSums', { x: [buffers.x, rows * cols] }, ['out', buffers.out, cols]);
  const pipeline = await gpu.pipelines.get(columnSumsKernel);
  batch.dispatch(columnSumsKernel, {
    pipeline,
    buffers,
    uniforms: { rows, cols, accumulate: options.accumulate ? 1 : 0 },
    // cols ≤ 2^20: at most 32,768 workgroups, within one grid dimension.
    workgroups: [Math.ceil(cols / COLUMN_SUMS_COLS)],
  });
}

/**
 * Convenience path (tests, one-off use): check → upload → matmul → read back (one sync point).
 * Same checks and options as the CPU matmul().
 */
export async function matmulGpu(
  gpu: GpuContext,
  a: Float32Array,
  b: Float32Array,
  shape: MatmulShape,
  options: { bias?: Float32Array; accumulate?: Float32Array } = {},
): Promise<Float32Array> {
  checkMatmulInput(a, b, shape, options);
  const size = shape.m * shape.n;
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      a: pooled.upload(a, 'matmul a'),
      b: pooled.upload(b, 'matmul b'),
      ...(options.bias ? { bias: pooled.upload(options.bias, 'matmul bias') } : {}),
      out: options.accumulate
        ? pooled.upload(options.accumulate, 'matmul out')
        : pooled.storage(size, 'matmul out'),
    };
    const batch = gpu.beginBatch('matmul');
    await encodeMatmul(gpu, batch, buffers, shape, { accumulate: Boolean(options.accumulate) });
    batch.submit();
    return await gpu.readF32(buffers.out, size);
  } finally {
    pooled.release();
  }
}

/** Convenience path for columnSums(): same checks, one sync point. */
export async function columnSumsGpu(
  gpu: GpuContext,
  x: Float32Array,
  rows: number,
  cols: number,
  accumulate?: Float32Array,
): Promise<Float32Array> {
  checkColumnSumsInput(x, rows, cols, accumulate);
  const pooled = new PooledBuffers(gpu);
  try {
    const buffers = {
      x: pooled.upload(x, 'column sums x'),
      out: accumulate
        ? pooled.upload(accumulate, 'column sums out')
        : pooled.storage(cols, 'column sums out'),
    };
    const batch = gpu.beginBatch('columnSums');
    await encodeColumnSums(gpu, batch, buffers, rows, cols, { accumulate: Boolean(accumulate) });
    batch.submit();
    return await gpu.readF32(buffers.out, cols);
  } finally {
    pooled.release();
  }
}
