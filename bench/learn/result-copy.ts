/**
 * How well a tool-using start copies its calculator's result into its answer, by the result's
 * number of digits: `node scripts/run-ts.mjs bench/learn/result-copy.ts [--name=multiply]
 * [--models=public/models] [--manifest=src/models/shipped-manifest.json] [--prompts=512]
 * [--samples=8] [--seed=1] [--out=bench/results/….json]` (the temperature is the entry's own).
 *
 * It samples whole episodes (the real calculator) on the multiply task the checkpoint was built
 * for, as the tool-use lesson samples them, and looks at every episode whose last call returned
 * the right product: the answer should be that result, character for character. A start that
 * copies four-digit results but not three-digit ones (the failure this measures) caps what RL can
 * reach, since every group on such a prompt is all wrong.
 */
import { join } from 'node:path';
import { isAgentTask, type AgentTask } from '../../src/agents/agent-task';
import { runEpisodes, type Episode } from '../../src/agents/episode';
import { createTokenTask } from '../../src/agents/token-task-registry';
import { CliArgs } from '../../src/cli/args';
import { modelFileError, readModelFile } from '../../src/cli/model-file';
import { prepareOutput, writeAtomically } from '../../src/cli/output-file';
import { CpuLanguageModel } from '../../src/models/lm-cpu';
import { loadLanguageModel } from '../../src/models/lm-checkpoint';
import { CharTokenizer } from '../../src/models/tokenizer';
import { seededRandom } from '../../src/util/random';
import { readManifest } from '../../scripts/build-models';

export interface CopyTally {
  /** Episodes whose last call returned the right product, by the product's digits. */
  calledRight: number;
  /** Of those, answers equal to the result. */
  copied: number;
}

/**
 * Per result length (digits), episodes whose last call returned the right answer and how many of
 * them answered with that result; also the episodes with a call and those answered right.
 */
export function tallyResultCopies(
  task: AgentTask,
  episodes: readonly Episode[],
): { byDigits: Map<number, CopyTally>; calls: number; right: number } {
  const byDigits = new Map<number, CopyTally>();
  let calls = 0;
  let right = 0;
  for (const episode of episodes) {
    if (episode.answer !== null && task.verify(episode.sample, episode.answer) === 1) right++;
    const last = episode.calls[episode.calls.length - 1];
    if (!last) continue;
    calls++;
    if (!last.ok || last.result !== episode.sample.answer) continue;
    const digits = episode.sample.answer.length;
    const tally = byDigits.get(digits) ?? { calledRight: 0, copied: 0 };
    tally.calledRight++;
    if (episode.answer === last.result) tally.copied++;
    byDigits.set(digits, tally);
  }
  return { byDigits, calls, right };
}

export async function main(argv: string[]): Promise<number> {
  const args = new CliArgs(argv);
  const name = args.string('name', 'multiply');
  const modelsDir = args.string('models', 'public/models');
  const manifestPath = args.string('manifest', 'src/models/shipped-manifest.json');
  const prompts = args.number('prompts', 512);
  const samples = args.number('samples', 8);
  const seed = args.number('seed', 1);
  const out = args.optional('out');
  args.checkAllUsed();
  if (out) prepareOutput(out); // before the episodes, not after them

  const manifest = readManifest(manifestPath, 'manifest');
  const entry = manifest.models.find((m) => m.name === name);
  if (!entry) throw new Error(`--name: no model '${name}' in ${manifestPath}`);
  const modelPath = join(modelsDir, entry.checkpoint.file);
  const { temperature } = entry.sampled;
  const bytes = readModelFile(modelPath, 'models', 'the folder of the manifest’s checkpoints');
  let loaded: ReturnType<typeof loadLanguageModel>;
  try {
    loaded = loadLanguageModel(bytes);
  } catch (error) {
    throw modelFileError(error, 'models', modelPath);
  }
  const tokenizer = loaded.tokenizer
    ? CharTokenizer.fromSpec(loaded.tokenizer)
    : CharTokenizer.createDefault();
  const task = createTokenTask(entry.task, entry.taskOptions);
  if (!isAgentTask(task)) throw new Error(`${modelPath}: not a tool-use task (${task.name})`);
  const model = new CpuLanguageModel(loaded.config, loaded.params);
  const random = seededRandom(seed);
  const drawn = Array.from({ length: prompts }, () => task.sample(random));
  const repeated = drawn.flatMap((sample) => Array.from({ length: samples }, () => sample));
  const started = process.cpuUsage();
  const episodes = await runEpisodes({
    policy: model,
    tokenizer,
    task,
    samples: repeated,
    maxLength: loaded.config.context,
    maxTurnTokens: loaded.config.context - 1,
    sampling: { temperature },
    seed,
  });
  const { byDigits, calls, right } = tallyResultCopies(task, episodes);
  const used = process.cpuUsage(started);
  const cpuSeconds = (used.user + used.system) / 1e6;
  const rows = [...byDigits.entries()].sort(([a], [b]) => a - b);
  console.log(
    `${modelPath} (${loaded.config.positions ?? 'learned'} positions): ${episodes.length} episodes at ` +
      `temperature ${temperature}; success ${(right / episodes.length).toFixed(3)}, ` +
      `episodes with a call ${(calls / episodes.length).toFixed(3)}; ${cpuSeconds.toFixed(1)} CPU s`,
  );
  for (const [digits, tally] of rows) {
    console.log(
      `  ${digits}-digit results: copied ${tally.copied} of ${tally.calledRight} ` +
        `(${((tally.copied / Math.max(1, tally.calledRight)) * 100).toFixed(1)}%)`,
    );
  }
  if (out) {
    const result = {
      model: modelPath,
      positions: loaded.config.positions ?? 'learned',
      prompts,
      samples,
      temperature,
      seed,
      successRate: right / episodes.length,
      callRate: calls / episodes.length,
      copyByResultDigits: Object.fromEntries(rows),
    };
    writeAtomically(out, `${JSON.stringify(result, null, 2)}\n`);
    console.log(`wrote ${out}`);
  }
  return 0;
}
