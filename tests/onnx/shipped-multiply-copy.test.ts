/**
 * The tool-use lesson's start copies its calculator's result into the answer, three-digit results
 * as well as four-digit ones. Warmed up on the calc-and-memory mixture from the first step, it
 * copied 34 of 186 three-digit results (sampled as the lesson samples), which capped RL near 0.9;
 * its recipe now learns the calc demonstrations alone first (bench/learn/result-copy.ts,
 * bench/results/2026-12-05T19-00-00Z-multiply-result-copy-own-first.json: 185 of 187).
 */
import { describe, expect, it } from 'vitest';
import { isAgentTask } from '../../src/agents/agent-task';
import { runEpisodes } from '../../src/agents/episode';
import { CpuLanguageModel } from '../../src/models/lm-cpu';
import { seededRandom } from '../../src/util/random';
import { tallyResultCopies } from '../../bench/learn/result-copy';
import { loadShipped } from './shipped';

describe('the shipped multiply start', () => {
  it('copies the calculator’s result, whatever its length', async () => {
    const shipped = loadShipped('multiply');
    const { task, config } = shipped;
    if (!isAgentTask(task)) throw new Error('multiply is an agent task');
    // Prompts whose product has 3 digits drawn as often as 4-digit ones: 24 of each, 8 answers
    // each at the lesson's temperature (about 0.27 of episodes call).
    const random = seededRandom(7);
    const byLength = new Map<number, ReturnType<typeof task.sample>[]>([
      [3, []],
      [4, []],
    ]);
    while ([...byLength.values()].some((list) => list.length < 24)) {
      const sample = task.sample(random);
      const list = byLength.get(sample.answer.length);
      if (list && list.length < 24) list.push(sample);
    }
    const samples = [...byLength.values()].flat().flatMap((s) => Array<typeof s>(8).fill(s));
    const episodes = await runEpisodes({
      policy: new CpuLanguageModel(config, shipped.params),
      tokenizer: shipped.tokenizerObject,
      task,
      samples,
      maxLength: config.context,
      maxTurnTokens: config.context - 1,
      sampling: { temperature: shipped.entry.sampled.temperature },
      seed: 1,
    });
    const { byDigits } = tallyResultCopies(task, episodes);
    for (const digits of [3, 4]) {
      const tally = byDigits.get(digits)!;
      // Each length has dozens of right calls; the old start copied 18% of three-digit results.
      expect(tally.calledRight, `${digits}-digit calls`).toBeGreaterThanOrEqual(20);
      expect(tally.copied / tally.calledRight, `${digits}-digit copies`).toBeGreaterThanOrEqual(
        0.9,
      );
    }
  }, 60_000);
});
