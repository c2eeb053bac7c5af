/**
 * Batched generation with the KV cache in tokens per second: generateGpu (decode step, sampler and
 * next-token rule as dispatches, tokens resident on the GPU) against generateCpu (the same loop on
 * the CPU), for the two transformer configs of the training-step suite, from the same weights with
 * the same seed.
 */
import type { GenerateRequest, Generation } from '../../src/models/generate';
import { generateCpu } from '../../src/models/generate';
import { generateGpu } from '../../src/models/generate-gpu';
import { CharTokenizer } from '../../src/models/tokenizer';
import type { TransformerConfig } from '../../src/models/transformer-config';
import { TransformerGpu } from '../../src/models/transformer-gpu';
import { transformerLayout } from '../../src/models/transformer-params';
import { reverseTask } from '../../src/envs/token-tasks/reverse';
import { promptTokens } from '../../src/agents/prompt-tokens';
import { seededRandom } from '../../src/util/random';
import { measure, settleQuietly, type RepPolicy, type Runner } from '../core/measure';
import { SOFTWARE_LABEL } from '../core/report';
import { formatTable } from '../core/stats';
import type { BenchContext, BenchSuite, Measurement, SuiteResult } from '../core/types';
import {
  formatBytes,
  formatRate,
  modelConfig,
  MODEL_SHAPES,
  type ModelShape,
  type WithMemory,
} from './transformer-step.bench';

export const GEN_IMPL = {
  gpu: 'ours WebGPU (generateGpu)',
  cpu: 'ours CPU (generateCpu)',
} as const;

/** Rows generated at once. */
const BATCH = 64;
/** Prompt: <bos> + 6 characters + '=' (a reverse-task prompt): 8 tokens in every row. */
const PROMPT_CHARS = 6;
const SEED = 1;
/**
 * Rows whose tokens differ from the CPU's are allowed up to this fraction: the sampler draws from
 * the same counter on both, but a logit differing in its last bits moves a draw that lands within
 * ~1e-6 of a cumulative-probability boundary, after which that row's sequence differs.
 */
const MAX_DIVERGED_ROWS = 0.1;
/** Log-probs of the sampled tokens, GPU vs CPU, on each row's common prefix. */
const TOLERANCE = 1e-3;

interface Plan {
  shape: ModelShape;
  reps: Record<keyof typeof GEN_IMPL, RepPolicy>;
}

function plans(software: boolean, quick: boolean): Plan[] {
  const [small, large] = MODEL_SHAPES;
  const one: RepPolicy = { max: 1, budgetMs: 0 };
  const few = (max: number, budgetMs: number): RepPolicy => ({ max, budgetMs });
  if (quick) return [{ shape: small, reps: { gpu: one, cpu: one } }];
  // SwiftShader: a call takes ~1–3 s (small) and tens of seconds (large) on either path.
  if (software) {
    return [
      { shape: small, reps: { gpu: few(3, 5_000), cpu: few(3, 5_000) } },
      { shape: large, reps: { gpu: one, cpu: one } },
    ];
  }
  return [
    { shape: small, reps: { gpu: few(10, 15_000), cpu: few(3, 15_000) } },
    { shape: large, reps: { gpu: few(10, 15_000), cpu: few(2, 15_000) } },
  ];
}

export const generationSuite: BenchSuite = {
  name: 'generation',
  async run(ctx: BenchContext): Promise<SuiteResult> {
    const measurements: WithMemory[] = [];
    const summaries: string[][] = [];
    for (const plan of plans(ctx.env.software, ctx.options.quick)) {
      const { rows, summary } = await benchPlan(ctx, plan);
      measurements.push(...rows);
      summaries.push(summary);
    }
    const software = ctx.env.software ? ` (${SOFTWARE_LABEL})` : '';
    const table = formatTable(
      [
        'config',
        'new tokens',
        'GPU tok/s',
        'CPU tok/s',
        'GPU ÷ CPU',
        'rows equal to CPU',
        'GPU MB (ours)',
      ],
      summaries,
    );
    return {
      suite: 'generation',
      title: [
        `generation with the KV cache, batch ${BATCH}, prompt ${PROMPT_CHARS + 2} tokens, to the full context: generated tokens per second`,
        `tokens/s${software}:`,
        table,
        'per-call times (C width, L layers, T = maxLength = context, B batch):',
      ].join('\n'),
      baseline: GEN_IMPL.gpu,
      notes: [
        `Configs: those of transformer-step (vocab ${CharTokenizer.createDefault().vocabSize}, 4 heads, tied embeddings), initial weights of seed ${SEED}; ${BATCH} reverse-task prompts of ${PROMPT_CHARS + 2} tokens (<bos>, ${PROMPT_CHARS} letters, '='); maxLength = context, maxNewTokens = context − 1, no stop tokens, so every row generates context − ${PROMPT_CHARS + 2} tokens; temperature 1, sampler seed ${SEED}.`,
        `Timed: one generate call per sample, from the request until tokens, log-probs and mask are on the CPU (every decode step covers all positions 0 … L − 2, prompt positions included, as both loops do). tokens/s = generated tokens (Σ mask) ÷ seconds. ${GEN_IMPL.gpu}: a TransformerGpu with its weights resident, submissions of 8 decode steps (the default chunk) with a read of the done flags after each; the first call (pipelines compiled) is the untimed validation run.`,
        `Validation: GPU against the CPU generation of the same seed: at most ${MAX_DIVERGED_ROWS * 100}% of the rows may differ (a last-bit logit difference can move a draw), and max |err| is the largest log-prob difference over each row's prefix common to both; tolerance ${TOLERANCE}.`,
        "GB/s is not meaningful here (bytes counted: 0). GPU MB: growth of the device buffer pool (weights, grads buffer, decode workspace, KV cache, staging) over the model's creation and the warm-up call.",
      ],
      measurements,
    };
  },
};

async function benchPlan(
  ctx: BenchContext,
  { shape, reps }: Plan,
): Promise<{ rows: WithMemory[]; summary: string[] }> {
  const { gpu, log } = ctx;
  const config = modelConfig(shape);
  const key = { C: shape.width, L: shape.layers, T: shape.context, B: BATCH };
  const label = `C${shape.width} L${shape.layers} T${shape.context} B${BATCH}`;
  const layout = transformerLayout(config);
  const params = layout.initialize<Float32Array>(SEED);
  const request = generateRequest(config);
  const newTokens = BATCH * (shape.context - (PROMPT_CHARS + 2));
  let reference: Generation | undefined;
  let equalRows: number | undefined;
  const common = { shape: key, bytes: 0, tolerance: TOLERANCE, log };

  await settleQuietly(ctx);
  const cpuRow = await measure({
    ...common,
    impl: GEN_IMPL.cpu,
    reps: reps.cpu,
    error: (result: Generation) => {
      reference = result;
      return generatedCount(result) === newTokens ? 0 : Infinity;
    },
    prepare: async () => ({
      run: async () => generateCpu(config, layout, params, request),
      dispose: () => undefined,
    }),
  });

  await settleQuietly(ctx);
  gpu.pool.trim();
  let memory: number | undefined;
  const gpuMeasured = await measure({
    ...common,
    impl: GEN_IMPL.gpu,
    reps: reps.gpu,
    error: (result: Generation) => {
      if (!reference || generatedCount(result) !== newTokens) return Infinity;
      const { equal, maxErr } = compare(result, reference);
      equalRows = equal;
      return equal >= BATCH * (1 - MAX_DIVERGED_ROWS) ? maxErr : Infinity;
    },
    prepare: async () => gpuRunner(ctx, config, params, request, (bytes) => (memory = bytes)),
  });
  gpu.pool.trim();
  const gpuRow: WithMemory = {
    ...gpuMeasured,
    ...(memory === undefined ? {} : { memoryBytes: memory }),
  };

  const rate = (m: Measurement) =>
    m.status === 'ok' && m.ms ? newTokens / (m.ms / 1000) : undefined;
  const [gpuRate, cpuRate] = [rate(gpuRow), rate(cpuRow)];
  const summary = [
    label,
    String(newTokens),
    formatRate(gpuRate),
    formatRate(cpuRate),
    gpuRate && cpuRate ? `${(gpuRate / cpuRate).toFixed(2)}×` : '–',
    equalRows === undefined ? '–' : `${equalRows}/${BATCH}`,
    memory === undefined ? '–' : formatBytes(memory),
  ];
  log(`generation ${label}: ${summary.slice(1).join(' | ')}`);
  return { rows: [gpuRow, cpuRow], summary };
}

/** BATCH reverse-task prompts of PROMPT_CHARS letters, generated to the full context. */
function generateRequest(config: TransformerConfig): GenerateRequest {
  const tokenizer = CharTokenizer.createDefault();
  const task = reverseTask({ minLength: PROMPT_CHARS, maxLength: PROMPT_CHARS });
  const random = seededRandom(config.width + config.layers);
  return {
    prompts: Array.from({ length: BATCH }, () => promptTokens(tokenizer, task.sample(random))),
    maxLength: config.context,
    maxNewTokens: config.context - 1,
    stopTokens: [],
    padToken: tokenizer.pad,
    sampling: { temperature: 1 },
    seed: SEED,
  };
}

function generatedCount(g: Generation): number {
  let count = 0;
  for (const m of g.mask) count += m;
  return count;
}

/** Rows whose tokens equal the reference's, and the largest log-prob difference over each
 *  row's prefix common to both. */
function compare(result: Generation, reference: Generation): { equal: number; maxErr: number } {
  const L = reference.maxLength;
  let equal = 0;
  let maxErr = 0;
  for (let b = 0; b < reference.batch; b++) {
    let same = true;
    for (let t = 0; t < L; t++) {
      const i = b * L + t;
      if (result.tokens[i] !== reference.tokens[i]) {
        same = false;
        break;
      }
      const err = Math.abs(result.logprobs[i]! - reference.logprobs[i]!);
      if (!(err <= maxErr)) maxErr = err;
    }
    if (same) equal += 1;
  }
  return { equal, maxErr };
}

function gpuRunner(
  ctx: BenchContext,
  config: TransformerConfig,
  params: Float32Array,
  request: GenerateRequest,
  onMemory: (bytes: number) => void,
): Runner<Generation> {
  const { gpu } = ctx;
  const before = gpu.pool.stats().bytes;
  const model = new TransformerGpu(gpu, config, params);
  let warm = false;
  return {
    run: async () => {
      const result = await generateGpu(model, request);
      if (!warm) {
        warm = true;
        onMemory(gpu.pool.stats().bytes - before);
      }
      return result;
    },
    dispose: () => model.release(),
  };
}
