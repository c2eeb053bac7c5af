/**
 * Learning benchmark for tool use: the calculator task (multiply 2–3-digit numbers).
 *
 *   with tools     SFT on demonstrations that call calc, then GRPO        target ≥ 90% success
 *   without tools  the same model and budgets, demonstrations answer directly   expected < 30%
 *   tool cost      GRPO from the with-tools start with toolCost 0 and 0.2 plus a call-validity
 *                  reward: calls per episode under each (the flooding lesson)
 *
 * Success is greedy (temperature 0) over 256 fixed prompts, whole episodes with the real tools.
 */
import type { AgentTask } from '../../src/agents/agent-task';
import { createTokenTask } from '../../src/agents/token-task-registry';
import type { LanguageModel } from '../../src/models/language-model';
import { CharTokenizer } from '../../src/models/tokenizer';
import type { TransformerConfig } from '../../src/models/transformer-config';
import { transformerLayout } from '../../src/models/transformer-params';
import { evaluateTask } from '../../src/rl/evaluate';
import { createGrpoTrainer } from '../../src/rl/grpo';
import { DEFAULT_GRPO_CONFIG, type GrpoConfig } from '../../src/rl/grpo-config';
import { DEFAULT_SFT_CONFIG, runSft } from '../../src/rl/sft';

export interface AgentCurvePoint {
  update: number;
  successRate: number;
  callsPerEpisode: number;
  rewardMean: number;
  seconds: number;
}

export interface AgentRunResult {
  task: string;
  startSuccessRate: number;
  finalSuccessRate: number;
  curve: AgentCurvePoint[];
}

export interface AgentToolsResult {
  backend: string;
  sftSteps: number;
  updates: number;
  grpo: Partial<GrpoConfig>;
  withTools: AgentRunResult;
  withoutTools: AgentRunResult;
  /** Calls per episode (batch mean over the last 10 updates) at each tool cost. */
  toolCost: { cost: number; callsPerEpisode: number; successRate: number }[];
}

export const AGENT_GRPO: Partial<GrpoConfig> = {
  groupSize: 8,
  promptsPerUpdate: 8,
  maxNewTokens: 24,
  lr: 3e-4,
  temperature: 1,
};

/** Context length of the benchmark's model (see agentToolsBenchmark). */
export const AGENT_CONTEXT = 44;

type MakeModel = (config: TransformerConfig, params: Float32Array) => Promise<LanguageModel>;

export async function agentToolsBenchmark(
  makeModel: MakeModel,
  backend: string,
  options: {
    updates?: number;
    sftSteps?: number;
    evalEvery?: number;
    log?: (line: string) => void;
  } = {},
): Promise<AgentToolsResult> {
  const updates = options.updates ?? 100;
  const sftSteps = options.sftSteps ?? 300;
  const evalEvery = options.evalEvery ?? 25;
  const log = options.log ?? console.log;
  const tokenizer = CharTokenizer.createDefault();
  const taskFor = (over: Record<string, unknown>) =>
    createTokenTask('multiply', { minDigits: 2, maxDigits: 3, ...over }) as AgentTask;
  const withTools = taskFor({});
  const config: TransformerConfig = {
    vocab: tokenizer.vocabSize,
    // The longest episode of 2–3-digit factors is 39 tokens (8 of prompt, 31 of call, result and
    // answer; each tag is one token). The task's maxChars (74) bounds the characters with every tag
    // spelled out, which would leave 32 never-trained position slots in the model.
    context: AGENT_CONTEXT,
    width: 64,
    layers: 2,
    heads: 4,
    tiedEmbeddings: true,
    valueHead: false,
  };
  const evaluate = (model: LanguageModel, task: AgentTask) =>
    evaluateTask(model, tokenizer, task, { seed: 4242, samples: 256 });

  /** SFT from the same initial weights; returns the warm parameters and their success. */
  async function warmUp(task: AgentTask) {
    const model = await makeModel(config, transformerLayout(config).initialize<Float32Array>(1));
    await runSft(model, tokenizer, task, { ...DEFAULT_SFT_CONFIG, steps: sftSteps, seed: 1 });
    const success = (await evaluate(model, task)).successRate;
    const params = await model.readParams();
    model.dispose();
    log(`${backend} ${task.name}: ${sftSteps} SFT steps → greedy success ${pct(success)}`);
    return { params, success };
  }

  async function train(
    task: AgentTask,
    start: Float32Array,
    startSuccess: number,
    budget = updates,
  ) {
    const policy = await makeModel(config, start);
    const trainer = createGrpoTrainer(
      { policy, tokenizer, task, seed: 2 },
      { ...DEFAULT_GRPO_CONFIG, ...AGENT_GRPO },
    );
    const started = performance.now();
    const curve: AgentCurvePoint[] = [];
    const calls: number[] = [];
    for (let u = 1; u <= budget; u++) {
      const m = await trainer.update();
      calls.push(m['tools/call_frequency'] ?? 0);
      if (u % evalEvery === 0 || u === budget) {
        const successRate = (await evaluate(policy, task)).successRate;
        const callsPerEpisode = mean(calls.slice(-10));
        curve.push({
          update: u,
          successRate,
          callsPerEpisode,
          rewardMean: m['reward/mean']!,
          seconds: (performance.now() - started) / 1000,
        });
        log(
          `${backend} ${task.name}: update ${u}  greedy success ${pct(successRate)}  calls/episode ${callsPerEpisode.toFixed(2)}  reward ${m['reward/mean']!.toFixed(3)}`,
        );
      }
    }
    policy.dispose();
    const final = curve[curve.length - 1]!;
    const result: AgentRunResult = {
      task: task.name,
      startSuccessRate: startSuccess,
      finalSuccessRate: final.successRate,
      curve,
    };
    return result;
  }

  const warmTools = await warmUp(withTools);
  const withToolsRun = await train(withTools, warmTools.params, warmTools.success);
  const noTools = taskFor({ useTools: false });
  const warmNoTools = await warmUp(noTools);
  const withoutToolsRun = await train(noTools, warmNoTools.params, warmNoTools.success);
  const toolCost: AgentToolsResult['toolCost'] = [];
  for (const cost of [0, 0.2]) {
    const task = taskFor({ toolCost: cost, callValidityWeight: 0.5 });
    const run = await train(task, warmTools.params, warmTools.success, Math.ceil(updates / 2));
    const last = run.curve[run.curve.length - 1]!;
    toolCost.push({ cost, callsPerEpisode: last.callsPerEpisode, successRate: last.successRate });
  }
  return {
    backend,
    sftSteps,
    updates,
    grpo: AGENT_GRPO,
    withTools: withToolsRun,
    withoutTools: withoutToolsRun,
    toolCost,
  };
}

function mean(values: readonly number[]): number {
  return values.reduce((s, v) => s + v, 0) / Math.max(1, values.length);
}

function pct(x: number): string {
  return `${(x * 100).toFixed(1)}%`;
}
