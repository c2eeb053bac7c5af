/**
 * `npm run sft -- --task=reverse --steps=300 [--backend=auto|webgpu|cpu] [--out=model.ckpt]`
 *
 * Supervised warm-up of a fresh transformer on a token task, headless in Node (WebGPU through Dawn
 * where a hardware adapter exists, else the CPU: see cli/backend.ts), with a progress line every --eval-every steps and the
 * final greedy success rate; --out writes a checkpoint the lab and the RL trainers can start from.
 */
import { writeFileSync } from 'node:fs';
import { reverseTask } from '../envs/token-tasks/reverse';
import { saveLanguageModel } from '../models/lm-checkpoint';
import { CharTokenizer } from '../models/tokenizer';
import type { TransformerConfig } from '../models/transformer-config';
import { transformerLayout } from '../models/transformer-params';
import { DEFAULT_SFT_CONFIG, runSft, type SftConfig } from '../rl/sft';
import { CliArgs } from './args';
import { createLanguageModel, type BackendChoice } from './backend';

export async function main(argv: string[]): Promise<number> {
  const args = new CliArgs(argv);
  const taskName = args.string('task', 'reverse');
  if (taskName !== 'reverse')
    throw new Error(`--task: only "reverse" exists so far, got "${taskName}"`);
  const task = reverseTask({
    minLength: args.number('min-length', 3),
    maxLength: args.number('max-length', 6),
  });
  const tokenizer = CharTokenizer.createDefault();
  const config: TransformerConfig = {
    vocab: tokenizer.vocabSize,
    context: args.number('context', task.maxChars + 2),
    width: args.number('width', 64),
    layers: args.number('layers', 2),
    heads: args.number('heads', 4),
    tiedEmbeddings: true,
    valueHead: false,
  };
  const sft: SftConfig = {
    ...DEFAULT_SFT_CONFIG,
    steps: args.number('steps', DEFAULT_SFT_CONFIG.steps),
    batchSize: args.number('batch', DEFAULT_SFT_CONFIG.batchSize),
    seed: args.number('seed', 1),
    evalEvery: args.number('eval-every', 50),
    evalSamples: args.number('eval-samples', 128),
    optimizer: {
      ...DEFAULT_SFT_CONFIG.optimizer,
      lr: args.number('lr', DEFAULT_SFT_CONFIG.optimizer.lr),
    },
  };
  const backend = args.string('backend', 'auto') as BackendChoice;
  const out = args.optional('out');
  args.checkAllUsed();

  const params = transformerLayout(config).initialize<Float32Array>(sft.seed);
  const { model, description } = await createLanguageModel(backend, config, params);
  console.log(`sft: ${task.name} on ${description}`);
  console.log(`model: ${JSON.stringify(config)} (${model.layout.parameterCount} parameters)`);
  const started = performance.now();
  const result = await runSft(model, tokenizer, task, sft, ({ step, metrics, evaluation }) => {
    const last = metrics[metrics.length - 1];
    const seconds = (performance.now() - started) / 1000;
    const rate = evaluation ? `  success ${(evaluation.successRate * 100).toFixed(1)}%` : '';
    console.log(
      `step ${String(step).padStart(5)}  loss ${last?.loss.toFixed(4)}  grad-norm ${last?.gradNorm.toFixed(3)}${rate}  ${seconds.toFixed(1)} s`,
    );
  });
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
    writeFileSync(out, bytes);
    console.log(`wrote ${out} (${bytes.length} bytes)`);
  }
  model.dispose();
  return 0;
}
