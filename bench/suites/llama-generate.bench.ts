/**
 * Generation of GRPO-shaped batches on the GPU: `prompts` prompts of `lengths.length` different
 * token lengths, each answered `group` times (a GRPO batch of prompts × group sequences), greedy,
 * `maxNew` new tokens each, at the real shapes of SmolLM2-135M and Qwen2.5-0.5B with seeded random
 * f16 weights (--quick or a software adapter: SmolLM2's 2-layer variant, 2 prompt lengths).
 *
 *   ours        llamaGenerateGpu on the whole batch: one right-padded prefill and one decode loop
 *               in which each sequence reads and writes its KV cache at its own length
 *   per length  the same generator called once per prompt length, on that length's sequences:
 *               one prefill and one decode loop per length, as the generator ran before per-
 *               sequence KV pasts (the baseline)
 *
 * Validation: greedy tokens are the same on both paths for every sequence (a row whose argmax
 * sits within f32 rounding of a tie may differ: up to MAX_DIFFERENT_ROWS of them are allowed).
 * Timed: one call each, from token ids on the CPU to the generated ids read back.
 */
import { llamaGenerateGpu } from '../../src/models/hf/llama-gpu-generate';
import {
  type LlamaGpuWeights,
  llamaGpuWeightsFromTensors,
} from '../../src/models/hf/llama-gpu-weights';
import type { ModelSpec } from '../../src/models/model-spec';
import { seededRandom } from '../../src/util/random';
import { measure, type RepPolicy } from '../core/measure';
import { SOFTWARE_LABEL } from '../core/report';
import { formatMs, formatTable } from '../core/stats';
import type { BenchContext, BenchSuite, Measurement, SuiteResult } from '../core/types';
import { randomLlamaTensor } from '../onnx/random-llama-weights';
import { LLAMA_BENCH_MODELS, LLAMA_BENCH_SEED } from './llama-peer.bench';
import { formatRate } from './transformer-step.bench';

export const LLAMA_GENERATE_IMPL = {
  ours: 'ours: one batch, per-sequence KV pasts',
  perLength: 'one batch per prompt length',
} as const;

/** Rows whose greedy tokens may differ between the two paths (ties within f32 rounding). */
const MAX_DIFFERENT_ROWS = 0.05;

interface Plan {
  models: { label: string; spec: ModelSpec }[];
  /** Prompt token lengths, one group of prompts each. */
  lengths: number[];
  /** Prompts of each length. */
  prompts: number;
  /** Answers per prompt (GRPO's group). */
  group: number;
  maxNew: number;
  reps: RepPolicy;
}

function plan(quick: boolean, software: boolean): Plan {
  if (quick || software) {
    // A software adapter took 163 s for one call at SmolLM2's 2-layer shape (32 sequences, 4 new
    // tokens, beside another job): SmolLM2 alone, 2 prompts. It ranks the two paths only; the
    // decode loop's weight reads, which one batch shares, are a hardware GPU's cost.
    const [smol] = LLAMA_BENCH_MODELS;
    return {
      models: [{ label: `${smol!.label} (2 layers)`, spec: { ...smol!.spec, layers: 2 } }],
      lengths: [21, 24],
      prompts: 1,
      group: 8,
      maxNew: 4,
      reps: { max: 1, budgetMs: 0 },
    };
  }
  return {
    models: [...LLAMA_BENCH_MODELS],
    lengths: [58, 61, 63, 66, 70, 71, 75, 80],
    prompts: 1,
    group: 8,
    maxNew: 128,
    reps: { max: 5, budgetMs: 20_000 },
  };
}

/** The batch: each length's prompts, each repeated `group` times, lengths interleaved. */
function batchPrompts(spec: ModelSpec, p: Plan): Int32Array[] {
  const random = seededRandom(spec.width + spec.layers);
  const prompts: Int32Array[] = [];
  for (let i = 0; i < p.prompts; i++) {
    for (const length of p.lengths) {
      const prompt = Int32Array.from({ length }, () => Math.floor(random() * spec.vocab));
      for (let g = 0; g < p.group; g++) prompts.push(prompt);
    }
  }
  return prompts;
}

async function generatePerLength(
  ctx: BenchContext,
  weights: LlamaGpuWeights,
  prompts: readonly Int32Array[],
  maxNew: number,
): Promise<Int32Array[]> {
  const out: Int32Array[] = new Array<Int32Array>(prompts.length);
  const lengths = [...new Set(prompts.map((p) => p.length))];
  for (const length of lengths) {
    const members = prompts.flatMap((p, i) => (p.length === length ? [i] : []));
    const got = await llamaGenerateGpu(
      ctx.gpu,
      weights,
      members.map((i) => prompts[i]!),
      { maxNewTokens: maxNew, temperature: 0 },
    );
    members.forEach((i, j) => (out[i] = got.tokens[j]!));
  }
  return out;
}

function differentRows(a: readonly Int32Array[], b: readonly Int32Array[]): number {
  let different = 0;
  a.forEach((row, i) => {
    const other = b[i]!;
    if (row.length !== other.length || row.some((t, j) => t !== other[j])) different++;
  });
  return different / a.length;
}

export const llamaGenerateSuite: BenchSuite = {
  name: 'llama-generate',
  async run(ctx: BenchContext): Promise<SuiteResult> {
    const p = plan(ctx.options.quick, ctx.env.software);
    const measurements: Measurement[] = [];
    const summary: string[][] = [];
    for (const { label, spec } of p.models) {
      const weights = llamaGpuWeightsFromTensors(
        ctx.gpu,
        spec,
        (e) => randomLlamaTensor(LLAMA_BENCH_SEED, e),
        'f16',
      );
      try {
        const prompts = batchPrompts(spec, p);
        const reference = await generatePerLength(ctx, weights, prompts, p.maxNew);
        const shape = {
          L: spec.layers,
          C: spec.width,
          V: spec.vocab,
          B: prompts.length,
          lengths: p.lengths.length,
          new: p.maxNew,
        };
        const runs = {
          ours: async () =>
            (
              await llamaGenerateGpu(ctx.gpu, weights, prompts, {
                maxNewTokens: p.maxNew,
                temperature: 0,
              })
            ).tokens,
          perLength: () => generatePerLength(ctx, weights, prompts, p.maxNew),
        };
        for (const key of ['perLength', 'ours'] as const) {
          await ctx.settle();
          const m = await measure({
            impl: LLAMA_GENERATE_IMPL[key],
            shape,
            bytes: 0,
            tolerance: MAX_DIFFERENT_ROWS,
            reps: p.reps,
            log: ctx.log,
            error: (tokens) => differentRows(tokens, reference),
            prepare: () => Promise.resolve({ run: runs[key], dispose: () => {} }),
          });
          measurements.push(m);
          const tokens = prompts.length * p.maxNew;
          summary.push([
            label,
            LLAMA_GENERATE_IMPL[key],
            m.status === 'ok' ? formatMs(m.ms!) : m.status,
            m.status === 'ok' ? formatRate((tokens * 1000) / m.ms!) : '–',
          ]);
        }
      } finally {
        weights.release();
      }
    }
    const software = ctx.env.software ? ` (${SOFTWARE_LABEL})` : '';
    return {
      suite: 'llama-generate',
      title: [
        `GRPO-shaped generation, ${p.prompts * p.lengths.length} prompts of ${p.lengths.length} token lengths × ${p.group} answers, ${p.maxNew} new tokens, greedy, f16 weights${software}`,
        formatTable(['model', 'engine', 'ms', 'new tokens/s'], summary),
        'per implementation:',
      ].join('\n'),
      baseline: LLAMA_GENERATE_IMPL.perLength,
      notes: [
        `Prompt lengths ${p.lengths.join(', ')} tokens (random ids, seeded), each prompt answered ${p.group} times; ${p.maxNew} new tokens a sequence, no stop ids, so every sequence runs to the end on both paths.`,
        'Timed: one llamaGenerateGpu call on the whole batch (ours) against one call per prompt length (the baseline), from token ids on the CPU to the generated ids read back; weights seeded random at the models’ exact shapes.',
        `Validation: the greedy tokens of every sequence equal on both paths (at most ${MAX_DIFFERENT_ROWS * 100}% of rows may differ, a tie within f32 rounding); the error column is the fraction that differed.`,
      ],
      measurements,
    };
  },
};
