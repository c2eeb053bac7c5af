/**
 * `npm run sft -- --task=reverse --steps=300 [--backend=auto|webgpu|cpu] [--out=model.ckpt]`
 *
 * Supervised warm-up of a fresh transformer on a token task, headless in Node (WebGPU through Dawn
 * where a hardware adapter exists, else the CPU: see cli/backend.ts), with a progress line every
 * --eval-every steps and the final greedy success rate; --out writes a checkpoint the lab and the
 * RL trainers can start from. Every number is checked with its range before training (--lr in
 * (0, 1], as the RL trainers' own lr; --context at least the task's longest demonstration), --out
 * before the first step; a loss or weight that turns
 * non-finite stops the run with exit code 1 and writes nothing, so a diverged model never
 * replaces a good checkpoint.
 */
import { reverseTask } from '../envs/token-tasks/reverse';
import { BACKEND_CHOICES } from '../gpu/backend-choice';
import { saveLanguageModel } from '../models/lm-checkpoint';
import { CharTokenizer } from '../models/tokenizer';
import { TRANSFORMER_LIMITS, type TransformerConfig } from '../models/transformer-config';
import { transformerLayout } from '../models/transformer-params';
import { MAX_SEED } from '../compare/run-file';
import { DEFAULT_SFT_CONFIG, runSft, type SftConfig } from '../rl/sft';
import { CliArgs, FlagError } from './args';
import { createLanguageModel } from './backend';
import { prepareOutput, writeAtomically } from './output-file';

/** Thrown from the progress callback: ends runSft at the first report of a non-finite loss. */
class Diverged extends Error {}

export async function main(argv: string[]): Promise<number> {
  const args = new CliArgs(argv);
  args.choice('task', ['reverse'], 'reverse'); // the only task with a CLI warm-up so far
  const maxLength = args.int('max-length', 6, { min: 1, max: 32 });
  const task = reverseTask({
    minLength: args.int('min-length', 3, { min: 1, max: maxLength }),
    maxLength,
  });
  const tokenizer = CharTokenizer.createDefault();
  const shape = (flag: string, key: keyof typeof TRANSFORMER_LIMITS, fallback: number) => {
    const [min, max] = TRANSFORMER_LIMITS[key];
    return args.int(flag, fallback, { min, max });
  };
  // The longest prompt and answer of the task, plus <bos> and <eos>: a shorter context cannot
  // hold one demonstration (runSft would refuse it naming its packing function, not the flag).
  const fewest = task.maxChars + 2;
  const context = shape('context', 'context', fewest);
  if (context < fewest) {
    throw new FlagError(
      'context',
      `--context must be at least ${fewest} for ${task.name} (its longest prompt and answer ` +
        `with <bos> and <eos>), at most ${TRANSFORMER_LIMITS.context[1]}, got ${context}`,
    );
  }
  const config: TransformerConfig = {
    vocab: tokenizer.vocabSize,
    context,
    width: shape('width', 'width', 64),
    layers: shape('layers', 'layers', 2),
    heads: shape('heads', 'heads', 4),
    tiedEmbeddings: true,
    valueHead: false,
  };
  const sft: SftConfig = {
    ...DEFAULT_SFT_CONFIG,
    steps: args.int('steps', DEFAULT_SFT_CONFIG.steps, { min: 1, max: 1e7 }),
    batchSize: args.int('batch', DEFAULT_SFT_CONFIG.batchSize, { min: 1, max: 4096 }),
    seed: args.int('seed', 1, { min: 0, max: MAX_SEED }),
    evalEvery: args.int('eval-every', 50, { min: 0, max: 1e7 }),
    evalSamples: args.int('eval-samples', 128, { min: 1, max: 100_000 }),
    optimizer: {
      ...DEFAULT_SFT_CONFIG.optimizer,
      lr: args.real('lr', DEFAULT_SFT_CONFIG.optimizer.lr, { min: 0, max: 1, minOpen: true }),
    },
  };
  const backend = args.choice('backend', BACKEND_CHOICES, 'auto');
  const out = args.optional('out');
  args.checkAllUsed();
  if (out) prepareOutput(out);

  const params = transformerLayout(config).initialize<Float32Array>(sft.seed);
  const { model, description } = await createLanguageModel(backend, config, params);
  try {
    console.log(`sft: ${task.name} on ${description}`);
    console.log(`model: ${JSON.stringify(config)} (${model.layout.parameterCount} parameters)`);
    const started = performance.now();
    let result;
    try {
      result = await runSft(model, tokenizer, task, sft, ({ step, metrics, evaluation }) => {
        const last = metrics[metrics.length - 1];
        const seconds = (performance.now() - started) / 1000;
        const rate = evaluation ? `  success ${(evaluation.successRate * 100).toFixed(1)}%` : '';
        console.log(
          `step ${String(step).padStart(5)}  loss ${last?.loss.toFixed(4)}  grad-norm ${last?.gradNorm.toFixed(3)}${rate}  ${seconds.toFixed(1)} s`,
        );
        const bad = metrics.find((m) => !Number.isFinite(m.loss));
        if (bad) throw new Diverged(`the loss is ${bad.loss} at step ${bad.step}`);
      });
    } catch (error) {
      if (!(error instanceof Diverged)) throw error;
      return refuse(error.message, sft.optimizer.lr, out);
    }
    // The weights themselves, before anything is written: a NaN must never reach a checkpoint.
    const weights = await model.readParams();
    const index = weights.findIndex((w) => !Number.isFinite(w));
    if (index >= 0) return refuse(`weight ${index} is ${weights[index]}`, sft.optimizer.lr, out);
    const seconds = (performance.now() - started) / 1000;
    console.log(
      `final greedy success rate: ${(result.final.successRate * 100).toFixed(1)}% of ${result.final.samples} prompts (${seconds.toFixed(1)} s)`,
    );
    for (const e of result.final.examples) {
      console.log(`  ${e.prompt}${e.completion}  ${e.correct ? 'ok' : 'wrong'}`);
    }
    if (out) {
      const bytes = await saveLanguageModel(model, {
        tokenizer: tokenizer.spec,
        seed: sft.seed,
        optimizer: sft.optimizer,
        meta: { task: task.name, successRate: result.final.successRate },
      });
      writeAtomically(out, bytes);
      console.log(`wrote ${out} (${bytes.length} bytes)`);
    }
    return 0;
  } finally {
    model.dispose();
  }
}

function refuse(why: string, lr: number, out: string | undefined): number {
  console.error(
    `sft: training diverged (${why}) at --lr=${lr}; try a smaller --lr.` +
      (out ? ` ${out} was not written.` : ''),
  );
  return 1;
}
