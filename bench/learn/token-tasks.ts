/**
 * Learning benchmark on a token task: from one supervised warm-up checkpoint, GRPO and PPO (value
 * head) train on reversing 3–6 letters with the same sample budget per update; the greedy success
 * rate is measured every `evalEvery` updates. Target (issue): GRPO reaches ≥ 95% within 300 updates.
 */
import { reverseTask } from '../../src/envs/token-tasks/reverse';
import type { LanguageModel } from '../../src/models/language-model';
import { CharTokenizer } from '../../src/models/tokenizer';
import type { TransformerConfig } from '../../src/models/transformer-config';
import { transformerLayout } from '../../src/models/transformer-params';
import { evaluateTask } from '../../src/rl/evaluate';
import { createGrpoTrainer, DEFAULT_GRPO_CONFIG } from '../../src/rl/grpo';
import { createPpoLmTrainer, DEFAULT_PPO_LM_CONFIG } from '../../src/rl/ppo-lm';
import { DEFAULT_SFT_CONFIG, runSft } from '../../src/rl/sft';
import type { Trainer } from '../../src/rl/trainer';

export interface CurvePoint {
  update: number;
  samples: number;
  successRate: number;
  rewardMean: number;
  seconds: number;
}

export interface TokenTaskResult {
  backend: string;
  sftSteps: number;
  startSuccessRate: number;
  curves: Record<'grpo' | 'ppo', CurvePoint[]>;
  /** First update at which greedy success reached ≥ 95% (null: not within the budget). */
  reached95: Record<'grpo' | 'ppo', number | null>;
  tokensPerSecond: Record<'grpo' | 'ppo', number>;
}

export async function tokenTaskBenchmark(
  makeModel: (config: TransformerConfig, params: Float32Array) => Promise<LanguageModel>,
  backend: string,
  options: {
    updates?: number;
    evalEvery?: number;
    sftSteps?: number;
    log?: (line: string) => void;
  } = {},
): Promise<TokenTaskResult> {
  const updates = options.updates ?? 300;
  const evalEvery = options.evalEvery ?? 25;
  const sftSteps = options.sftSteps ?? 200;
  const log = options.log ?? console.log;
  const tokenizer = CharTokenizer.createDefault();
  const task = reverseTask({ minLength: 3, maxLength: 6 });
  const config: TransformerConfig = {
    vocab: tokenizer.vocabSize,
    context: task.maxChars + 2 + 2,
    width: 64,
    layers: 2,
    heads: 4,
    tiedEmbeddings: true,
    valueHead: true, // PPO's critic; GRPO ignores it
  };
  const warm = await makeModel(config, transformerLayout(config).initialize<Float32Array>(1));
  await runSft(warm, tokenizer, task, { ...DEFAULT_SFT_CONFIG, steps: sftSteps, seed: 1 });
  const start = await warm.readParams();
  const evaluate = (model: LanguageModel) =>
    evaluateTask(model, tokenizer, task, { seed: 12345, samples: 256 });
  const startSuccessRate = (await evaluate(warm)).successRate;
  warm.dispose();
  log(
    `${backend}: warm-up ${sftSteps} SFT steps → greedy success ${(startSuccessRate * 100).toFixed(1)}%`,
  );

  const result: TokenTaskResult = {
    backend,
    sftSteps,
    startSuccessRate,
    curves: { grpo: [], ppo: [] },
    reached95: { grpo: null, ppo: null },
    tokensPerSecond: { grpo: 0, ppo: 0 },
  };
  // Same sample budget: 64 completions per update for both.
  const runs: ['grpo' | 'ppo', (policy: LanguageModel) => Trainer<object>][] = [
    [
      'grpo',
      (policy) =>
        createGrpoTrainer(
          { policy, tokenizer, task, seed: 2 },
          { ...DEFAULT_GRPO_CONFIG, groupSize: 8, promptsPerUpdate: 8, lr: 1e-3, maxNewTokens: 8 },
        ),
    ],
    [
      'ppo',
      (policy) =>
        createPpoLmTrainer(
          { policy, tokenizer, task, seed: 2 },
          { ...DEFAULT_PPO_LM_CONFIG, promptsPerUpdate: 64, minibatches: 2, epochs: 2, lr: 1e-3 },
        ),
    ],
  ];
  for (const [name, build] of runs) {
    const policy = await makeModel(config, start);
    const trainer = build(policy);
    const started = performance.now();
    let tokens = 0;
    let trainSeconds = 0;
    for (let u = 1; u <= updates; u++) {
      const t0 = performance.now();
      const m = await trainer.update();
      trainSeconds += (performance.now() - t0) / 1000;
      tokens += (m['response_length/mean'] ?? 0) * 64;
      if (u % evalEvery === 0 || u === updates) {
        const successRate = (await evaluate(policy)).successRate;
        result.curves[name].push({
          update: u,
          samples: u * 64,
          successRate,
          rewardMean: m['reward/mean']!,
          seconds: (performance.now() - started) / 1000,
        });
        log(
          `${backend} ${name}: update ${u}  greedy success ${(successRate * 100).toFixed(1)}%  reward ${m['reward/mean']!.toFixed(3)}`,
        );
        if (successRate >= 0.95 && result.reached95[name] === null) result.reached95[name] = u;
      }
    }
    result.tokensPerSecond[name] = tokens / trainSeconds;
    policy.dispose();
  }
  return result;
}
