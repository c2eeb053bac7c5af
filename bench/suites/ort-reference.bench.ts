/**
 * The frozen reference policy's log-probs (the KL term's one need of the reference model) for one
 * GRPO batch, by each engine that can compute them: our CPU model, our WebGPU model, and
 * onnxruntime-web running the exported model on its wasm CPU EP and its WebGPU EP
 * (OrtReferenceModel). The models are the shipped starting checkpoints in public/models/:
 * reverse (its full context, as a GRPO batch of that task) and multiply (T = 40, the length the
 * issue asks about). Milliseconds per scoreTokens call and the ratio to our CPU model.
 */
import type { LanguageModel } from '../../src/models/language-model';
import { loadLanguageModel } from '../../src/models/lm-checkpoint';
import { CpuLanguageModel } from '../../src/models/lm-cpu';
import { GpuLanguageModel } from '../../src/models/lm-gpu';
import { OrtReferenceModel } from '../../src/onnx/ort-reference-model';
import type { OrtModule as SrcOrtModule } from '../../src/onnx/ort-reference';
import { maxAbsDiff } from '../../src/util/max-abs-diff';
import { seededRandom } from '../../src/util/random';
import { measure, settleQuietly, type RepPolicy } from '../core/measure';
import { SOFTWARE_LABEL } from '../core/report';
import { formatMs, formatTable } from '../core/stats';
import type { BenchContext, BenchSuite, Measurement, SuiteResult } from '../core/types';

export const REF_IMPL = {
  cpu: 'ours CPU (CpuLanguageModel)',
  gpu: 'ours WebGPU (GpuLanguageModel)',
  ortWasm: 'ORT wasm EP (OrtReferenceModel)',
  ortWebgpu: 'ORT WebGPU EP (OrtReferenceModel)',
} as const;
type ImplKey = keyof typeof REF_IMPL;

/** |logp − CPU logp| allowed (float32 forwards with different summation orders). */
const TOLERANCE = 1e-3;

interface Shape {
  /** Stem of the shipped files (public/models/<model>.ckpt, .onnx). */
  model: string;
  batch: number;
  /** Sequence length; 0 = the model's full context. */
  seq: number;
}

function plan(quick: boolean): { shapes: Shape[]; reps: RepPolicy } {
  if (quick)
    return { shapes: [{ model: 'reverse', batch: 8, seq: 0 }], reps: { max: 1, budgetMs: 0 } };
  return {
    shapes: [
      { model: 'reverse', batch: 64, seq: 0 },
      { model: 'multiply', batch: 64, seq: 40 },
    ],
    reps: { max: 15, budgetMs: 8_000 },
  };
}

/**
 * A shipped file's bytes: fetched from the page's server in the browser (public/ is served at
 * /), read from disk in Node. node:fs is imported by a name Vite does not analyse, so the
 * browser bundle never sees it.
 */
async function shippedBytes(file: string): Promise<Uint8Array> {
  if (typeof window !== 'undefined') {
    const response = await fetch(`/models/${file}`);
    if (!response.ok) throw new Error(`GET /models/${file}: ${response.status}`);
    return new Uint8Array(await response.arrayBuffer());
  }
  const fsModule = 'node:fs/promises';
  const fs = (await import(/* @vite-ignore */ fsModule)) as typeof import('node:fs/promises');
  // A variable base: Vite rewrites `new URL(template, import.meta.url)` into an asset glob.
  const here = import.meta.url;
  return new Uint8Array(await fs.readFile(new URL(`../../public/models/${file}`, here)));
}

export const ortReferenceSuite: BenchSuite = {
  name: 'ort-reference',
  usesPeers: true,
  async run(ctx: BenchContext): Promise<SuiteResult> {
    const { shapes, reps } = plan(ctx.options.quick);
    const measurements: Measurement[] = [];
    const summary: string[][] = [];
    for (const shape of shapes) {
      const rows = await benchShape(ctx, shape, reps);
      measurements.push(...rows);
      const ms = (key: ImplKey) =>
        rows.find((r) => r.impl === REF_IMPL[key] && r.status === 'ok')?.ms;
      const cpu = ms('cpu');
      const cell = (key: ImplKey) => {
        const value = ms(key);
        if (value === undefined) return '–';
        return cpu ? `${formatMs(value)} (${(value / cpu).toFixed(2)}×)` : formatMs(value);
      };
      const first = rows[0]!.shape;
      summary.push([
        `${shape.model} B${first.B} T${first.T}`,
        cell('cpu'),
        cell('gpu'),
        cell('ortWasm'),
        cell('ortWebgpu'),
      ]);
    }
    const software = ctx.env.software ? ` (WebGPU columns: ${SOFTWARE_LABEL})` : '';
    return {
      suite: 'ort-reference',
      title: [
        'reference log-probs of one GRPO batch (scoreTokens, temperature 1): ms per call (÷ our CPU)' +
          software,
        formatTable(['model, batch', 'ours CPU', 'ours WebGPU', 'ORT wasm', 'ORT WebGPU'], summary),
        'per implementation:',
      ].join('\n'),
      baseline: REF_IMPL.cpu,
      notes: [
        'Models: the shipped SFT checkpoints public/models/reverse.ckpt (context 23) and multiply.ckpt (context 76): width 64, 2 layers, 4 heads, tied embeddings, value head; the ORT rows run the shipped .onnx of the same weights.',
        'Timed: one scoreTokens(tokens, targets, B, T, 1) call, from the token ids on the CPU until logp and entropy (and the value head’s values) are on the CPU; seeded random token ids. Ours WebGPU: GpuLanguageModel with its weights resident (forward + fused log-probs kernel, one readback). ORT: session.run of the exported model (logits (B, T, V) read back), then our tokenLogprobs op on the CPU; ORT wasm runs with the environment’s thread count (1 in Node).',
        `Warm-up: ours CPU and ORT wasm run untimed for ${WARM_UP_MS / 1000} s (at most ${WARM_UP_CALLS} calls) first: V8 compiles hot JS and wasm to optimized code while they run, and the first calls ran up to 6× slower. Validation: the next call of each, logp against our CPU model’s, tolerance ${TOLERANCE}.`,
        'GB/s is not meaningful here (bytes counted: 0).',
      ],
      measurements,
    };
  },
};

/** Calls `call` until WARM_UP_MS have passed or WARM_UP_CALLS calls were made. */
const WARM_UP_MS = 5_000;
const WARM_UP_CALLS = 30;
async function warmUp(call: () => Promise<unknown>): Promise<void> {
  const start = performance.now();
  for (let i = 0; i < WARM_UP_CALLS && performance.now() - start < WARM_UP_MS; i++) await call();
}

async function benchShape(
  ctx: BenchContext,
  shape: Shape,
  reps: RepPolicy,
): Promise<Measurement[]> {
  const { log } = ctx;
  const loaded = loadLanguageModel(await shippedBytes(`${shape.model}.ckpt`));
  const onnx = await shippedBytes(`${shape.model}.onnx`);
  const { config, params } = loaded;
  const B = shape.batch;
  const T = shape.seq === 0 ? config.context : Math.min(shape.seq, config.context);
  const random = seededRandom(B * 1000 + T);
  const tokens = Int32Array.from({ length: B * T }, () => Math.floor(random() * config.vocab));
  const targets = Int32Array.from({ length: B * T }, () => Math.floor(random() * config.vocab));
  const key = { B, T, V: config.vocab };
  let reference: Float32Array | undefined;
  const common = { shape: key, bytes: 0, tolerance: TOLERANCE, reps, log };

  const runner = (make: () => Promise<LanguageModel>, warm: boolean) => async () => {
    const model = await make();
    if (warm) await warmUp(() => model.scoreTokens(tokens, targets, B, T, 1));
    return {
      run: async () => (await model.scoreTokens(tokens, targets, B, T, 1)).logp,
      dispose: async () => {
        if (model instanceof OrtReferenceModel) await model.release();
        else model.dispose();
      },
    };
  };
  const ortModel = (ep: 'wasm' | 'webgpu') => async () => {
    const ort = await ctx.ort();
    const session = await ort.InferenceSession.create(onnx, { executionProviders: [ep] });
    return new OrtReferenceModel(
      {
        format: 'transformer',
        config,
        session,
        ort: ort as unknown as SrcOrtModule,
        executionProviders: [ep],
        release: () => session.release(),
      },
      params,
    );
  };

  const rows: Measurement[] = [];
  const impls: [ImplKey, () => Promise<LanguageModel>][] = [
    ['cpu', async () => new CpuLanguageModel(config, params)],
    ['gpu', async () => new GpuLanguageModel(ctx.gpu, config, params)],
    ['ortWasm', ortModel('wasm')],
    ['ortWebgpu', ortModel('webgpu')],
  ];
  for (const [impl, make] of impls) {
    await settleQuietly(ctx);
    rows.push(
      await measure({
        ...common,
        impl: REF_IMPL[impl],
        error: (logp: Float32Array) => {
          if (impl === 'cpu') {
            reference = logp.slice();
            return 0;
          }
          return reference ? maxAbsDiff(logp, reference) : Infinity;
        },
        // The CPU-side engines are JIT-compiled while they run (V8 tiers hot JS and wasm up
        // from baseline code): warmed up first, else the first reps time the baseline tier.
        prepare: runner(make, impl === 'cpu' || impl === 'ortWasm'),
      }),
    );
    if (impl === 'gpu') ctx.gpu.pool.trim();
  }
  return rows;
}
