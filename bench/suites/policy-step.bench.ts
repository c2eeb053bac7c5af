/**
 * One RL step of the transformer (src/rl/policy-step.ts: forward, clipped policy loss + KL +
 * entropy bonus, backward, AdamW) in tokens per second, three ways on the same weights and batch
 * in the same run: our WebGPU path with the loss as kernels next to the log-probs
 * (GpuLanguageModel.policyStep), the same GPU model with the loss on the CPU between its forward
 * and backward passes (policyStepOnHost: log-probs and entropies read back, gradients uploaded —
 * how WebGPU runs trained before the loss moved), and our CPU path.
 */
import type { LanguageModel } from '../../src/models/language-model';
import { CpuLanguageModel } from '../../src/models/lm-cpu';
import { GpuLanguageModel } from '../../src/models/lm-gpu';
import type { TransformerConfig } from '../../src/models/transformer-config';
import { transformerLayout } from '../../src/models/transformer-params';
import { policyStep, policyStepOnHost, type PolicyStepRequest } from '../../src/rl/policy-step';
import { seededRandom } from '../../src/util/random';
import { measure, settleQuietly, type RepPolicy, type Runner } from '../core/measure';
import { SOFTWARE_LABEL } from '../core/report';
import { formatTable } from '../core/stats';
import type { BenchContext, BenchSuite, Measurement, SuiteResult } from '../core/types';
import {
  formatRate,
  MODEL_SHAPES,
  modelConfig,
  perUnit,
  type ModelShape,
} from './transformer-step.bench';

export const POLICY_STEP_IMPL = {
  kernels: 'ours WebGPU, RL loss as kernels (policyStep)',
  host: 'ours WebGPU, RL loss on the CPU (policyStepOnHost)',
  cpu: 'ours CPU (CpuLanguageModel)',
} as const;
type Impl = keyof typeof POLICY_STEP_IMPL;

const SEED = 2;
/** The first step's policy loss must agree with the CPU path's within this. */
const LOSS_TOLERANCE = 1e-3;

/** pg_loss of each step of one sample, oldest first. */
type Losses = number[];

/**
 * A GRPO-shaped step: B rows of random tokens, the answer in each row's second half, ±1
 * advantages, behaviour and reference log-probs a little off the model's (set on the first call),
 * k3 KL at 0.04, entropy bonus 0.01 (so that ∂L/∂entropy flows too), token-mean.
 */
function grpoRequest(config: TransformerConfig, shape: ModelShape): PolicyStepRequest {
  const { batch: B, context: T } = shape;
  const n = B * T;
  const next = seededRandom(shape.width * 7 + shape.layers);
  const ids = () => Int32Array.from({ length: n }, () => Math.floor(next() * config.vocab));
  const mask = Float32Array.from({ length: n }, (_, i) => (i % T >= T / 2 ? 1 : 0));
  const near = () => Float32Array.from({ length: n }, () => -Math.log(config.vocab) + next() * 0.2);
  return {
    tokens: ids(),
    targets: ids(),
    rows: B,
    seq: T,
    temperature: 1,
    mask,
    advantages: Float32Array.from({ length: n }, (_, i) => (Math.floor(i / T) % 2 ? 1 : -1)),
    oldLogp: near(),
    policyLoss: { clipLow: 0.2, clipHigh: 0.28, aggregation: 'token-mean' },
    aggregation: { mode: 'token-mean' },
    kl: { refLogp: near(), coef: 0.04, options: { estimator: 'k3' } },
    entropyCoef: 0.01,
    optimizer: { lr: 1e-4, weightDecay: 0, maxGradNorm: 1 },
  };
}

function runner(
  model: LanguageModel,
  step: (request: PolicyStepRequest) => Promise<{ losses?: { pgLoss: number } }>,
  request: PolicyStepRequest,
  steps: number,
): Runner<Losses> {
  return {
    run: async () => {
      const losses: Losses = [];
      for (let s = 0; s < steps; s++) losses.push((await step(request)).losses?.pgLoss ?? NaN);
      await model.takeMetrics(); // the optimizer's statistics: the last sync point of the sample
      return losses;
    },
    dispose: () => model.dispose?.(),
  };
}

/** Steps per timed sample and samples per implementation (a software adapter gets few). */
function plan(software: boolean, quick: boolean): { steps: number; reps: RepPolicy } {
  if (quick) return { steps: 1, reps: { max: 1, budgetMs: 0 } };
  if (software) return { steps: 1, reps: { max: 3, budgetMs: 15_000 } };
  return { steps: 10, reps: { max: 5, budgetMs: 20_000 } };
}

export const policyStepSuite: BenchSuite = {
  name: 'policy-step',
  async run(ctx: BenchContext): Promise<SuiteResult> {
    const { gpu, log } = ctx;
    const shape = MODEL_SHAPES[0];
    const config = modelConfig(shape);
    const key = { C: shape.width, L: shape.layers, T: shape.context, B: shape.batch };
    const params = transformerLayout(config).initialize<Float32Array>(SEED);
    const request = grpoRequest(config, shape);
    const { steps, reps } = plan(ctx.env.software, ctx.options.quick);
    const firstLoss: Partial<Record<Impl, number>> = {};
    const errorOf = (impl: Impl) => (losses: Losses) => {
      const first = losses[0] ?? NaN;
      firstLoss[impl] = first;
      if (impl === 'cpu') return Number.isFinite(first) ? 0 : Infinity;
      return firstLoss.cpu === undefined ? Infinity : Math.abs(first - firstLoss.cpu);
    };
    const models: Record<Impl, () => LanguageModel> = {
      cpu: () => new CpuLanguageModel(config, params),
      kernels: () => new GpuLanguageModel(gpu, config, params),
      host: () => new GpuLanguageModel(gpu, config, params),
    };
    const rows: Partial<Record<Impl, Measurement>> = {};
    // The CPU first: its first-step loss is the reference the others are validated against.
    for (const impl of ['cpu', 'kernels', 'host'] as const) {
      await settleQuietly(ctx);
      const take = (model: LanguageModel) =>
        impl === 'host'
          ? (r: PolicyStepRequest) => policyStepOnHost(model, r)
          : (r: PolicyStepRequest) => policyStep(model, r);
      rows[impl] = perUnit(
        await measure({
          impl: POLICY_STEP_IMPL[impl],
          shape: key,
          bytes: 0,
          tolerance: LOSS_TOLERANCE,
          log,
          reps,
          error: errorOf(impl),
          prepare: async () => {
            const model = models[impl]();
            return runner(model, take(model), request, steps);
          },
        }),
        steps,
      );
    }
    const tokens = shape.batch * shape.context;
    const rate = (m?: Measurement) =>
      m?.status === 'ok' && m.ms ? tokens / (m.ms / 1000) : undefined;
    const [kernels, host, cpu] = [rate(rows.kernels), rate(rows.host), rate(rows.cpu)];
    const ratio = (a?: number, b?: number) => (a && b ? `${(a / b).toFixed(2)}×` : '–');
    const loss = (x?: number) => (x === undefined ? '–' : x.toFixed(5));
    const label = `C${shape.width} L${shape.layers} T${shape.context} B${shape.batch}`;
    const summary = [
      label,
      formatRate(kernels),
      formatRate(host),
      formatRate(cpu),
      ratio(kernels, host),
      ratio(kernels, cpu),
      `${loss(firstLoss.kernels)} / ${loss(firstLoss.host)} / ${loss(firstLoss.cpu)}`,
    ];
    log(`policy-step ${label}: ${summary.slice(1).join(' | ')}`);
    const software = ctx.env.software ? ` (${SOFTWARE_LABEL})` : '';
    return {
      suite: 'policy-step',
      title: [
        'RL policy step (forward, policy loss + KL + entropy, backward, AdamW): tokens (B·T) per second',
        `tokens/s${software}:`,
        formatTable(
          [
            'config',
            'kernels tok/s',
            'host loss tok/s',
            'CPU tok/s',
            'kernels ÷ host loss',
            'kernels ÷ CPU',
            'first pg_loss kernels / host / CPU',
          ],
          [summary],
        ),
        'per-step times (C width, L layers, T context, B batch):',
      ].join('\n'),
      baseline: POLICY_STEP_IMPL.kernels,
      notes: [
        `Config: ${label}, vocab ${config.vocab}, 4 heads, tied embeddings; random tokens and targets (seeded), the answer in each row's second half, ±1 advantages by row, behaviour and reference log-probs near −ln V; clip 0.2/0.28, k3 KL × 0.04, entropy × 0.01, token-mean; AdamW lr 1e-4, clip 1.`,
        'Validation (untimed warm-up sample): the first step’s pg_loss of each WebGPU path against the CPU path’s, within 1e-3.',
        `Timed: a sample is ${steps} step(s) and then takeMetrics() (the optimizer's statistics). Each step has one sync point on both WebGPU paths: the kernels path reads the loss statistics; the host path reads the log-probs and entropies (B·T each) and uploads the gradients.`,
      ],
      measurements: [rows.kernels!, rows.host!, rows.cpu!],
    };
  },
};
