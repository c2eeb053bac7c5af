/**
 * The CPU attention's fast path: two WebAssembly SIMD kernels (built by wasm-module.ts) that do
 * the T²·hs products of one (sequence, head), with float64 sums two to a register. Each sum keeps
 * the order and the bounds of attention.ts's loops — lanes run over independent outputs, never
 * over the terms of one sum, and the causal sums stop exactly at the diagonal — so the results
 * are bit for bit the JavaScript loops' (which stay the specification and the path where
 * WebAssembly SIMD is missing). exp() and the softmax stay in JavaScript (softmaxInPlace).
 *
 *   scores(q, kᵀ, s):  s[t, u] = Σ_i q[t, i]·kᵀ[i, u] for u ≤ t (8 keys at a time; the rest of
 *                      the last 8 is computed and never read)
 *   weighted(w, x, o): o[r, i] = Σ_c w[·]·x[·, i] over a causal range, 8 columns at a time:
 *                        rows:       o[t, i] = Σ_{u=0…t}    w[t, u]·x[u, i]   (P·V, dS·K)
 *                        transposed: o[u, i] = Σ_{t=u…T−1}  w[t, u]·x[t, i]   (dSᵀ·Q, Pᵀ·dO)
 *
 * Layout (float64, in the module's memory; tPad = T rounded up to 8, hsPad = hs rounded up to 8):
 * row matrices (T, hsPad) or (T, hs), transposed ones (hs, tPad), score matrices (T, tPad).
 */
import type { AttentionShape } from './attention';
import type { Floats } from './floats';
import { softmaxInPlace } from './softmax-row';
import {
  f64,
  f64x2,
  forRange,
  i32,
  i32T,
  local,
  v128,
  v128T,
  type Code,
  encodeModule,
  type FunctionDef,
  type ValueType,
} from './wasm-module';

const get = local.get;

/** acc[j] += a · x[at + 16j bytes] for the four f64x2 accumulators. */
function multiplyAdd4(acc: readonly number[], a: Code, at: Code): Code[] {
  return acc.map((sum, j) =>
    local.set(sum, f64x2.add(get(sum), f64x2.mul(a, v128.load(at, 16 * j)))),
  );
}

function zero(acc: readonly number[]): Code[] {
  return acc.map((sum) => local.set(sum, v128.zero()));
}

function store4(acc: readonly number[], at: Code): Code[] {
  return acc.map((sum, j) => v128.store(at, get(sum), 16 * j));
}

const locals = (i32s: number, v128s: number): ValueType[] => [
  ...new Array<ValueType>(i32s).fill(i32T),
  ...new Array<ValueType>(v128s).fill(v128T),
];

/** scores(q, kt, s, T, hs, tPad): byte addresses; q (T, hs), kt (hs, tPad), s (T, tPad). */
function scoresFunction(): FunctionDef {
  const [q, kt, s, T, hs, tPad] = [0, 1, 2, 3, 4, 5];
  const [t, u, i, qp, kp, ktRow] = [6, 7, 8, 9, 10, 11];
  const acc = [12, 13, 14, 15];
  const a = 16;
  return {
    name: 'scores',
    params: locals(6, 0),
    locals: locals(6, 5),
    body: [
      local.set(ktRow, i32.shl(get(tPad), i32.const(3))),
      forRange(t, i32.const(0), get(T), 1, [
        forRange(u, i32.const(0), i32.add(get(t), i32.const(1)), 8, [
          ...zero(acc),
          local.set(qp, i32.add(get(q), i32.shl(i32.mul(get(t), get(hs)), i32.const(3)))),
          local.set(kp, i32.add(get(kt), i32.shl(get(u), i32.const(3)))),
          // Σ over i in order: q[t, i] (one value, both lanes) times kᵀ[i, u … u+7].
          forRange(i, i32.const(0), get(hs), 1, [
            local.set(a, f64x2.splat(f64.load(get(qp)))),
            ...multiplyAdd4(acc, get(a), get(kp)),
            local.set(qp, i32.add(get(qp), i32.const(8))),
            local.set(kp, i32.add(get(kp), get(ktRow))),
          ]),
          ...store4(
            acc,
            i32.add(get(s), i32.shl(i32.add(i32.mul(get(t), get(tPad)), get(u)), i32.const(3))),
          ),
        ]),
      ]),
    ],
  };
}

/**
 * weighted(w, wRowStep, wStep, x, xRowStep, o, T, hsPad, countBase, countStep): for each output
 * row r, count = countBase + r·countStep terms; term c takes w at w + r·wRowStep + c·wStep and x's
 * row starting at x + r·xRowStep, advancing one x row (hsPad values) per term.
 */
function weightedFunction(): FunctionDef {
  const [w, wRowStep, wStep, x, xRowStep, o, T, hsPad, countBase, countStep] = [
    0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
  ];
  const [r, i, c, wp, xp, xRow] = [10, 11, 12, 13, 14, 15];
  const acc = [16, 17, 18, 19];
  const a = 20;
  return {
    name: 'weighted',
    params: locals(10, 0),
    locals: locals(6, 5),
    body: [
      local.set(xRow, i32.shl(get(hsPad), i32.const(3))),
      forRange(r, i32.const(0), get(T), 1, [
        forRange(i, i32.const(0), get(hsPad), 8, [
          ...zero(acc),
          local.set(wp, i32.add(get(w), i32.mul(get(r), get(wRowStep)))),
          local.set(
            xp,
            i32.add(i32.add(get(x), i32.mul(get(r), get(xRowStep))), i32.shl(get(i), i32.const(3))),
          ),
          // Σ over the terms in order: w (one value, both lanes) times x[·, i … i+7].
          forRange(c, i32.const(0), i32.add(get(countBase), i32.mul(get(r), get(countStep))), 1, [
            local.set(a, f64x2.splat(f64.load(get(wp)))),
            ...multiplyAdd4(acc, get(a), get(xp)),
            local.set(wp, i32.add(get(wp), get(wStep))),
            local.set(xp, i32.add(get(xp), get(xRow))),
          ]),
          ...store4(
            acc,
            i32.add(get(o), i32.shl(i32.add(i32.mul(get(r), get(hsPad)), get(i)), i32.const(3))),
          ),
        ]),
      ]),
    ],
  };
}

interface Kernel {
  memory: WebAssembly.Memory;
  scores: (q: number, kt: number, s: number, T: number, hs: number, tPad: number) => void;
  weighted: (
    w: number,
    wRowStep: number,
    wStep: number,
    x: number,
    xRowStep: number,
    o: number,
    T: number,
    hsPad: number,
    countBase: number,
    countStep: number,
  ) => void;
}

let kernel: Kernel | null | undefined;

/** The compiled kernels, or null where WebAssembly SIMD is unavailable (then the loops run). */
export function attentionKernel(): Kernel | null {
  if (kernel !== undefined) return kernel;
  try {
    const bytes = encodeModule(1, [scoresFunction(), weightedFunction()]);
    kernel = new WebAssembly.Instance(new WebAssembly.Module(bytes), {})
      .exports as unknown as Kernel;
  } catch {
    kernel = null;
  }
  return kernel;
}

const roundUp8 = (n: number) => Math.ceil(n / 8) * 8;

/** Float64 offsets of the regions one (sequence, head) needs, and the float64 view. */
interface Workspace {
  mem: Float64Array;
  tPad: number;
  hsPad: number;
  /** (T, hs) rows for scores(); (hs, tPad) transposed; (T, tPad) scores. */
  rows: number;
  transposed: number;
  scores: number;
  /** (T, tPad) probabilities (the backward's copy of P). */
  weights: number;
  /** Three (T, hsPad) inputs and three (T, hsPad) outputs of weighted(). */
  inputs: [number, number, number];
  outputs: [number, number, number];
}

function workspace(k: Kernel, T: number, hs: number): Workspace | null {
  const tPad = roundUp8(T);
  const hsPad = roundUp8(hs);
  const rowsSize = T * hsPad;
  const offsets: number[] = [];
  let end = 0;
  for (const size of [
    rowsSize,
    hs * tPad,
    T * tPad,
    T * tPad,
    ...new Array<number>(6).fill(rowsSize),
  ]) {
    offsets.push(end);
    end += roundUp8(size); // 64-byte aligned regions
  }
  const needed = end * 8;
  if (k.memory.buffer.byteLength < needed) {
    try {
      k.memory.grow(Math.ceil((needed - k.memory.buffer.byteLength) / 65536));
    } catch {
      return null;
    }
  }
  const [rows, transposed, scores, weights, i0, i1, i2, o0, o1, o2] = offsets as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  return {
    mem: new Float64Array(k.memory.buffer),
    tPad,
    hsPad,
    rows,
    transposed,
    scores,
    weights,
    inputs: [i0, i1, i2],
    outputs: [o0, o1, o2],
  };
}

/** mem[to + t·stride + i] = src[from + t·rowStride + i] for t < T, i < width. */
function packRows(
  mem: Float64Array,
  to: number,
  stride: number,
  src: Floats,
  from: number,
  rowStride: number,
  T: number,
  width: number,
) {
  for (let t = 0; t < T; t++) {
    const at = to + t * stride;
    const row = from + t * rowStride;
    for (let i = 0; i < width; i++) mem[at + i] = src[row + i]!;
  }
}

/** mem[to + i·tPad + t] = src[from + t·rowStride + i]: the (hs, tPad) transpose. */
function packTransposed(
  mem: Float64Array,
  to: number,
  tPad: number,
  src: Floats,
  from: number,
  rowStride: number,
  T: number,
  hs: number,
) {
  for (let t = 0; t < T; t++) {
    const row = from + t * rowStride;
    for (let i = 0; i < hs; i++) mem[to + i * tPad + t] = src[row + i]!;
  }
}

/** The kernels, a workspace for one (sequence, head) and the sizes both passes use; null: loops. */
function prepare(shape: AttentionShape) {
  const k = attentionKernel();
  const { batch: B, seq: T, heads: NH, channels: C } = shape;
  const hs = C / NH;
  const ws = k && workspace(k, T, hs);
  if (!k || !ws) return null;
  return { k, ws, B, T, NH, C, C3: 3 * C, hs, scale: 1 / Math.sqrt(hs) };
}

/**
 * attentionForward's loops through the kernels, into out (B, T, C) and probs (B, NH, T, T)
 * (zeroed by the caller). False, having written nothing, where the kernels are unavailable.
 */
export function attentionForwardSimd<T extends Floats>(
  qkv: T,
  shape: AttentionShape,
  out: T,
  probs: T,
): boolean {
  const setup = prepare(shape);
  if (!setup) return false;
  const { k, ws, B, T, NH, C, C3, hs, scale } = setup;
  const { mem, tPad, hsPad } = ws;
  const row = new Float64Array(T);
  const [values] = ws.inputs;
  const [mixed] = ws.outputs;
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < NH; h++) {
      const base = b * T * C3 + h * hs; // q of (b, 0, h); k at + C, v at + 2C
      packRows(mem, ws.rows, hs, qkv, base, C3, T, hs);
      packTransposed(mem, ws.transposed, tPad, qkv, base + C, C3, T, hs);
      packRows(mem, values, hsPad, qkv, base + 2 * C, C3, T, hs);
      k.scores(ws.rows * 8, ws.transposed * 8, ws.scores * 8, T, hs, tPad);
      for (let t = 0; t < T; t++) {
        const s = ws.scores + t * tPad;
        for (let u = 0; u <= t; u++) row[u] = mem[s + u]! * scale;
        softmaxInPlace(row, t + 1);
        const p = ((b * NH + h) * T + t) * T;
        for (let u = 0; u <= t; u++) {
          probs[p + u] = row[u]!;
          mem[ws.weights + t * tPad + u] = row[u]!;
        }
      }
      // out[t] = Σ_{u ≤ t} P[t, u]·v_u, with P unrounded (as the loops use it).
      k.weighted(ws.weights * 8, tPad * 8, 8, values * 8, 0, mixed * 8, T, hsPad, 1, 1);
      for (let t = 0; t < T; t++) {
        const o = (b * T + t) * C + h * hs;
        for (let i = 0; i < hs; i++) out[o + i] = mem[mixed + t * hsPad + i]!;
      }
    }
  }
  return true;
}

/**
 * attentionBackward's loops through the kernels, into acc (B, T, 3C) float64, zeroed by the
 * caller. False, having written nothing, where the kernels are unavailable.
 */
export function attentionBackwardSimd(
  dout: Floats,
  qkv: Floats,
  probs: Floats,
  shape: AttentionShape,
  acc: Float64Array,
): boolean {
  const setup = prepare(shape);
  if (!setup) return false;
  const { k, ws, B, T, NH, C, C3, hs, scale } = setup;
  const { mem, tPad, hsPad } = ws;
  const [keys, queries, grads] = ws.inputs;
  const [dq, dk, dv] = ws.outputs;
  const dS = ws.scores;
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < NH; h++) {
      const base = b * T * C3 + h * hs;
      const dBase = b * T * C + h * hs;
      // dP[t, u] = dO_t · v_u.
      packRows(mem, ws.rows, hs, dout, dBase, C, T, hs);
      packTransposed(mem, ws.transposed, tPad, qkv, base + 2 * C, C3, T, hs);
      k.scores(ws.rows * 8, ws.transposed * 8, dS * 8, T, hs, tPad);
      // dS[t, u] = P·(dP − Σ_u' P·dP)·scale, in place over dP; P as stored in probs.
      for (let t = 0; t < T; t++) {
        const p = ((b * NH + h) * T + t) * T;
        const s = dS + t * tPad;
        let rowDot = 0;
        for (let u = 0; u <= t; u++) rowDot += probs[p + u]! * mem[s + u]!;
        for (let u = 0; u <= t; u++) {
          const P = probs[p + u]!;
          mem[s + u] = P * (mem[s + u]! - rowDot) * scale;
          mem[ws.weights + t * tPad + u] = P;
        }
      }
      packRows(mem, keys, hsPad, qkv, base + C, C3, T, hs);
      packRows(mem, queries, hsPad, qkv, base, C3, T, hs);
      packRows(mem, grads, hsPad, dout, dBase, C, T, hs);
      const rowStep = tPad * 8;
      const diagonalStep = (tPad + 1) * 8;
      // dq_t = Σ_{u ≤ t} dS[t, u]·k_u;  dk_u = Σ_{t ≥ u} dS[t, u]·q_t;  dv_u = Σ_{t ≥ u} P[t, u]·dO_t.
      k.weighted(dS * 8, rowStep, 8, keys * 8, 0, dq * 8, T, hsPad, 1, 1);
      k.weighted(dS * 8, diagonalStep, rowStep, queries * 8, hsPad * 8, dk * 8, T, hsPad, T, -1);
      k.weighted(
        ws.weights * 8,
        diagonalStep,
        rowStep,
        grads * 8,
        hsPad * 8,
        dv * 8,
        T,
        hsPad,
        T,
        -1,
      );
      for (let t = 0; t < T; t++) {
        const q = base + t * C3;
        const from = t * hsPad;
        for (let i = 0; i < hs; i++) {
          acc[q + i] = mem[dq + from + i]!;
          acc[q + C + i] = mem[dk + from + i]!;
          acc[q + 2 * C + i] = mem[dv + from + i]!;
        }
      }
    }
  }
  return true;
}
