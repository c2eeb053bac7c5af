/**
 * The peer of the real-shape Llama benches: onnxruntime-web's WebGPU EP on an ONNX graph of the
 * same random-weight model (bench/onnx/llama-graph.ts), at the exact shapes of SmolLM2-135M and
 * Qwen2.5-0.5B (--quick: their 2-layer variants), prefill and decode tokens/s at batch 1 and 64.
 * Only the peer is timed here; rows are keyed (impl, shape) with the shape {L, C, V, B, T, P} and
 * the weights from LLAMA_BENCH_SEED, so our engine's rows can sit beside them under another impl.
 *
 *   prefill: input_ids (B, T) with no past → logits (B, T, V), present k/v      tokens = B·T
 *   decode:  input_ids (B, 1) with a past of P positions on the GPU → (B, 1, V)  tokens = B
 */
import { llamaForward } from '../../src/models/hf/llama-cpu';
import { llamaModelFromWeights, llamaTensorEntries } from '../../src/models/hf/llama-cpu-weights';
import type { ModelSpec } from '../../src/models/model-spec';
import { seededRandom } from '../../src/util/random';
import { QWEN25_05B, SMOLLM2_135M } from '../../tests/support/published-specs';
import { measure, settleQuietly, type RepPolicy } from '../core/measure';
import { SOFTWARE_LABEL } from '../core/report';
import { formatMs, formatTable } from '../core/stats';
import type { BenchContext, BenchSuite, Measurement, SuiteResult } from '../core/types';
import type { LlamaGraphDtype } from '../onnx/llama-graph';
import { llamaModelBytes } from '../onnx/llama-model-bytes';
import { randomLlamaWeights, randomLlamaWeightSource } from '../onnx/random-llama-weights';
import { checkPlacement } from '../peers/ort';
import { createOrtLlamaSession, gpuPast, idFeeds, runOrtStep } from '../peers/ort-llama';
import { benchOurs, OURS_IMPL } from './llama-ours';
import { formatRate } from './transformer-step.bench';

export const LLAMA_BENCH_IMPL = {
  ort: 'ORT WebGPU EP (onnxruntime-web)',
  ours: OURS_IMPL,
} as const;

/** The published shapes, by name; the weights of every engine come from this seed. */
export const LLAMA_BENCH_MODELS: readonly { label: string; spec: ModelSpec }[] = [
  { label: 'SmolLM2-135M', spec: SMOLLM2_135M },
  { label: 'Qwen2.5-0.5B', spec: QWEN25_05B },
];
export const LLAMA_BENCH_SEED = 1;
export const LLAMA_BENCH_BATCHES = [1, 64] as const;

export interface LlamaBenchPlan {
  models: { label: string; spec: ModelSpec }[];
  /** Prompt tokens per row of the prefill; the past length P of the decode step. */
  prompt: number;
  past: number;
  reps: RepPolicy;
}

/** --quick: 2 layers of each shape (vocabulary and widths kept), short prompt and past. */
export function llamaBenchPlan(quick: boolean): LlamaBenchPlan {
  if (quick) {
    return {
      models: LLAMA_BENCH_MODELS.map(({ label, spec }) => ({
        label: `${label} (2 layers)`,
        spec: { ...spec, layers: 2 },
      })),
      // A smoke run on software adapters: 8 positions keep B = 64 × V = 151936 within minutes.
      prompt: 8,
      past: 8,
      reps: { max: 2, budgetMs: 0 },
    };
  }
  return {
    models: [...LLAMA_BENCH_MODELS],
    prompt: 128,
    past: 128,
    reps: { max: 10, budgetMs: 10_000 },
  };
}

/** The measurement key shared with our engine's rows: phase reads from T and P. */
export function llamaBenchShape(spec: ModelSpec, batch: number, seq: number, past: number) {
  return { L: spec.layers, C: spec.width, V: spec.vocab, B: batch, T: seq, P: past };
}

/** The CPU twin checks prefill logits (row 0, last position) up to this many parameters. */
const REFERENCE_MAX_PARAMS = 60e6;
/** Most logits the validation run reads back (256 MB as f32). */
const READBACK_MAX = 2 ** 26;
const TOLERANCE: Record<LlamaGraphDtype, number> = { f32: 1e-3, f16: 3e-2 };

export const llamaPeerSuite: BenchSuite = {
  name: 'llama-peer',
  usesPeers: true,
  async run(ctx: BenchContext): Promise<SuiteResult> {
    const plan = llamaBenchPlan(ctx.options.quick);
    // f16 weights and math where the adapter can (what fp16 exports do on WebGPU), else f32.
    const dtype: LlamaGraphDtype = ctx.env.adapter?.features.includes('shader-f16') ? 'f16' : 'f32';
    const measurements: Measurement[] = [];
    const summary: string[][] = [];
    const notes: string[] = [];
    for (const { label, spec } of plan.models) {
      const shapeOf = (B: number, T: number, P: number) => llamaBenchShape(spec, B, T, P);
      const ours = await benchOurs(ctx, spec, LLAMA_BENCH_SEED, LLAMA_BENCH_BATCHES, plan, shapeOf);
      const result = await benchModel(ctx, spec, dtype, plan);
      const rows = [...ours.rows, ...result.rows];
      measurements.push(...rows);
      notes.push(`${label}: ${ours.note}; ${result.note}`);
      for (const m of rows) {
        const tokens = m.shape.B! * m.shape.T!;
        const phase = m.shape.P === 0 ? `prefill T${m.shape.T}` : `decode P${m.shape.P}`;
        summary.push([
          label,
          m.impl === OURS_IMPL ? 'ours' : 'ORT',
          `${phase} B${m.shape.B}`,
          m.status === 'ok' ? formatMs(m.ms!) : m.status,
          m.status === 'ok' ? formatRate((tokens * 1000) / m.ms!) : '–',
        ]);
      }
    }
    const software = ctx.env.software ? ` (${SOFTWARE_LABEL})` : '';
    return {
      suite: 'llama-peer',
      title: [
        `real-shape Llama: ours (f16 weights) and the ORT WebGPU EP (${dtype}), random weights (seed ${LLAMA_BENCH_SEED})${software}`,
        formatTable(['model', 'engine', 'step', 'ms', 'tokens/s'], summary),
        'per implementation:',
      ].join('\n'),
      baseline: LLAMA_BENCH_IMPL.ort,
      notes: [
        `Graph: bench/onnx/llama-graph.ts, standard opset-17 ops, optimum's input/output names; weights and math in ${dtype} (f16 when the adapter has shader-f16, as the fp16 exports transformers.js runs on WebGPU). Weights: seeded random at the models' exact shapes (bench/onnx/random-llama-weights.ts).`,
        `Timed: one session.run, from token ids on the CPU until ORT's device is idle; logits and present k/v stay on the GPU (preferredOutputLocation 'gpu-buffer'), the decode past is a GPU tensor made once: the peer's best case (no logits readback, no sampling). Prefill T = ${plan.prompt}; decode one token after a past of P = ${plan.past}.`,
        `Validation: prefill logits of row 0's last position against the CPU twin (llamaForward) for models up to ${REFERENCE_MAX_PARAMS / 1e6}M parameters (tolerance ${TOLERANCE[dtype]} in ${dtype}); larger ones and every decode row are checked for finite logits only, and shapes of more than \${READBACK_MAX} logits (prefill B = 64 at full size) are not read back at all.`,
        'Peak GPU memory: ORT does not report it. GB/s is not meaningful here (bytes counted: 0).',
        ...notes,
      ],
      measurements,
    };
  },
};

async function benchModel(
  ctx: BenchContext,
  spec: ModelSpec,
  dtype: LlamaGraphDtype,
  plan: LlamaBenchPlan,
): Promise<{ rows: Measurement[]; note: string }> {
  const ort = await ctx.ort();
  const weights = randomLlamaWeightSource(spec, LLAMA_BENCH_SEED);
  const params = llamaTensorEntries(spec).reduce(
    (s, e) => s + e.shape.reduce((a, b) => a * b, 1),
    0,
  );
  const random = seededRandom(spec.layers * 1000 + spec.width);
  const ids = (n: number) =>
    Int32Array.from({ length: n }, () => Math.floor(random() * spec.vocab));
  const rows: Measurement[] = [];
  const notes: string[] = [`${(params / 1e6).toFixed(1)}M parameters`];

  // Node placement on a 1-layer copy (the same ops): a silent CPU fallback would show here.
  const one = { ...spec, layers: 1 };
  for (const withPast of [false, true]) {
    const bytes = llamaModelBytes(one, { dtype, withPast }, randomLlamaWeightSource(one, 0));
    const placement = await checkPlacement(ort, ctx.ortLogTap, bytes, 'webgpu').catch(String);
    notes.push(`${withPast ? 'decode' : 'prefill'} graph: ${placement ?? 'every node on WebGPU'}`);
  }

  for (const withPast of [false, true]) {
    await settleQuietly(ctx);
    const made = await createOrtLlamaSession(ort, spec, dtype, withPast, weights);
    notes.push(
      `${withPast ? 'decode' : 'prefill'} session: file ${(made.fileBytes / 2 ** 20).toFixed(0)} MiB written in ${formatMs(made.writeMs)}, created in ${formatMs(made.createMs)}`,
    );
    try {
      for (const B of LLAMA_BENCH_BATCHES) {
        const T = withPast ? 1 : plan.prompt;
        const P = withPast ? plan.past : 0;
        const tokens = ids(B * T);
        let error = 0;
        rows.push(
          await measure({
            impl: LLAMA_BENCH_IMPL.ort,
            shape: llamaBenchShape(spec, B, T, P),
            bytes: 0,
            tolerance: TOLERANCE[dtype],
            reps: plan.reps,
            log: ctx.log,
            error: () => error,
            prepare: async () => {
              const past = withPast ? await gpuPast(ort, spec, dtype, B, P, random) : undefined;
              const feeds = { ...idFeeds(ort, tokens, B, T, P), ...past?.feeds };
              // Prefill B = 64 at T = 128, V = 151936 is 1.2G logits: not read back (its B = 1
              // twin is); every other shape's validation run reads them.
              const read = B * T * spec.vocab <= READBACK_MAX;
              const logits = await runOrtStep(ort, made.session, feeds, read);
              if (logits)
                error = logitsError(spec, withPast ? undefined : tokens.subarray(0, T), logits);
              return {
                run: () => runOrtStep(ort, made.session, feeds),
                dispose: () => past?.destroy(),
              };
            },
          }),
        );
      }
    } finally {
      await made.session.release();
    }
  }
  return { rows, note: notes.join('; ') };
}

/**
 * |ORT − CPU twin| over the last position's logits of row 0 when a CPU reference is affordable
 * (row0 given, spec small enough), else 0 if every logit is finite and Infinity if not.
 */
function logitsError(spec: ModelSpec, row0: Int32Array | undefined, logits: Float32Array): number {
  if (!logits.every(Number.isFinite)) return Infinity;
  const params = llamaTensorEntries(spec).reduce(
    (s, e) => s + e.shape.reduce((a, b) => a * b, 1),
    0,
  );
  if (row0 === undefined || params > REFERENCE_MAX_PARAMS) return 0;
  const model = llamaModelFromWeights(spec, randomLlamaWeights(spec, LLAMA_BENCH_SEED));
  const T = row0.length;
  const V = spec.vocab;
  const want = llamaForward(model, row0, 1, T).logits.subarray((T - 1) * V, T * V);
  const got = logits.subarray((T - 1) * V, T * V);
  let worst = 0;
  for (let i = 0; i < V; i++) worst = Math.max(worst, Math.abs(got[i]! - want[i]!));
  return worst;
}
