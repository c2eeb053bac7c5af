/**
 * `npm run train -- --algo=grpo --task=reverse --seed=1 --updates=200 [--init=model.ckpt]
 *   [--sft-steps=300] [--backend=auto|webgpu|cpu] [--log-every=10] [--out=runs/x.json]
 *   [--<any GRPO setting in kebab-case>=value]`
 *
 * Trains headless in Node — WebGPU through Dawn where an adapter exists, else the CPU, and says
 * which — with a progress bar and a metrics line every --log-every updates, and writes a run file
 * (config, metric series, events, summary) that the lab can import.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { reverseTask } from '../envs/token-tasks/reverse';
import { loadLanguageModel } from '../models/lm-checkpoint';
import { CharTokenizer } from '../models/tokenizer';
import type { TransformerConfig } from '../models/transformer-config';
import { transformerLayout } from '../models/transformer-params';
import { evaluateTask } from '../rl/evaluate';
import { createGrpoTrainer, DEFAULT_GRPO_CONFIG, GRPO_CONFIG_SPEC } from '../rl/grpo';
import { configFromFlags } from '../rl/hyperparams';
import { MetricSeries, RUN_FILE_FORMAT, RUN_FILE_VERSION, serializeRunFile } from '../rl/run-file';
import { DEFAULT_SFT_CONFIG, runSft } from '../rl/sft';
import { CliArgs } from './args';
import { createLanguageModel, type BackendChoice } from './backend';

const SHOWN = [
  'reward/mean',
  'frac_reward_zero_std',
  'actor/pg_loss',
  'actor/entropy',
  'actor/grad_norm',
];

export async function main(argv: string[]): Promise<number> {
  const args = new CliArgs(argv);
  const algo = args.string('algo', 'grpo');
  if (algo !== 'grpo') throw new Error(`--algo: "${algo}" is not available yet (available: grpo)`);
  const taskName = args.string('task', 'reverse');
  if (taskName !== 'reverse')
    throw new Error(`--task: "${taskName}" is not available yet (available: reverse)`);
  const seed = args.number('seed', 1);
  const updates = args.number('updates', 100);
  const logEvery = args.number('log-every', 10);
  const backend = args.string('backend', 'auto') as BackendChoice;
  const init = args.optional('init');
  const sftSteps = args.number('sft-steps', 300);
  const out = args.optional('out');
  const overrides = configFromFlags('grpo', GRPO_CONFIG_SPEC, args.all());
  for (const key of Object.keys(GRPO_CONFIG_SPEC))
    args.optional(key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`));
  args.checkAllUsed();
  const config = { ...DEFAULT_GRPO_CONFIG, ...overrides };

  const tokenizer = CharTokenizer.createDefault();
  const task = reverseTask();
  let modelConfig: TransformerConfig = {
    vocab: tokenizer.vocabSize,
    context: 32,
    width: 64,
    layers: 2,
    heads: 4,
    tiedEmbeddings: true,
    valueHead: false,
  };
  let params = transformerLayout(modelConfig).initialize<Float32Array>(seed);
  if (init) {
    const loaded = loadLanguageModel(new Uint8Array(readFileSync(init)));
    modelConfig = loaded.config;
    params = loaded.params;
    console.log(`init: ${init} (${JSON.stringify(loaded.checkpoint.meta ?? {})})`);
  }
  const { model: policy, description } = await createLanguageModel(backend, modelConfig, params);
  console.log(`train: grpo on ${task.name}, seed ${seed}, ${updates} updates, on ${description}`);
  if (!init && sftSteps > 0) {
    console.log(
      `warm-up: ${sftSteps} SFT steps (use --init=<checkpoint> to start from a saved one)`,
    );
    const sft = await runSft(policy, tokenizer, task, {
      ...DEFAULT_SFT_CONFIG,
      steps: sftSteps,
      seed,
    });
    console.log(`warm-up done: greedy success ${(sft.final.successRate * 100).toFixed(1)}%`);
  }
  const start = await policy.readParams();
  const reference =
    config.klCoef > 0 ? (await createLanguageModel(backend, modelConfig, start)).model : undefined;
  const trainer = createGrpoTrainer({ policy, reference, tokenizer, task, seed }, config);

  const series = new MetricSeries();
  const started = performance.now();
  for (let u = 1; u <= updates; u++) {
    series.push(await trainer.update());
    if (u % logEvery === 0 || u === updates) {
      const last = Object.fromEntries(
        Object.entries(series.series).map(([k, v]) => [k, v[v.length - 1]!]),
      );
      const shown = SHOWN.map((k) => `${k} ${(last[k] ?? NaN).toFixed(3)}`).join('  ');
      console.log(`${progressBar(u, updates)} ${u}/${updates}  ${shown}`);
    }
  }
  const seconds = (performance.now() - started) / 1000;
  const final = await evaluateTask(policy, tokenizer, task, { seed: seed + 1, samples: 256 });
  console.log(
    `done in ${seconds.toFixed(1)} s: greedy success ${(final.successRate * 100).toFixed(1)}% of 256 prompts`,
  );
  if (out) {
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(
      out,
      serializeRunFile({
        format: RUN_FILE_FORMAT,
        version: RUN_FILE_VERSION,
        algorithm: 'grpo',
        task: task.name,
        seed,
        backend: description,
        createdAt: new Date().toISOString(),
        config,
        metrics: series.series,
        events: [...trainer.events],
        summary: { updates, seconds, successRate: final.successRate },
      }),
    );
    console.log(`wrote ${out}`);
  }
  policy.dispose();
  reference?.dispose();
  return 0;
}

function progressBar(done: number, total: number, width = 24): string {
  const filled = Math.round((done / total) * width);
  return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}]`;
}
