/**
 * The reward of one agent episode, term by term (each reported on its own so a run can chart
 * which one moved), and the batch metrics of tool use.
 *
 *   total = correctWeight · verify(answer)                 the answer is right
 *         + formatWeight  · format                         ended with <answer>…</answer> in the
 *                                                          task's answer characters
 *         + callValidityWeight · valid calls / calls       (1 when no call was made: nothing invalid)
 *         + callBonus · valid calls                        a per-call payment (invites flooding)
 *         − toolCost · calls                               the price of each call
 *         − lengthPenalty, + lengthBonus, + DAPO overlong   on the tokens the model wrote
 *
 * Lengths count model tokens only: observation tokens are the environment's, not the policy's.
 * An episode that ran out of room is "truncated" (so mask_truncated_completions and verl's
 * response_length/clip_ratio treat it as they treat a single-turn completion).
 */
import {
  isWellFormed,
  lengthTerms,
  verdicts,
  type RewardBreakdown,
  type RewardConfig,
} from '../envs/token-tasks/rewards';
import type { AgentTask } from './agent-task';
import type { Episode } from './episode';

/** A RewardBreakdown with the two tool terms. */
export interface AgentRewardBreakdown extends RewardBreakdown {
  /** callValidityWeight · fraction of calls that parsed and ran. */
  callValidity: number;
  /** −toolCost · calls (≤ 0). */
  toolCost: number;
  /** callBonus · calls that ran (≥ 0). */
  callBonus: number;
}

export function scoreEpisode(
  task: AgentTask,
  episode: Episode,
  config: RewardConfig,
): AgentRewardBreakdown {
  const answer = episode.answer;
  const { verified, strictlyVerified } =
    answer === null
      ? { verified: false, strictlyVerified: false }
      : verdicts(task, episode.sample, answer, config.verifierMatch);
  const truncated = episode.end === 'token-limit';
  const wellFormed =
    answer !== null &&
    isWellFormed({ text: answer, length: 0, truncated: false, specialTokens: 0 }, task.answerChars);
  const calls = episode.calls.length;
  const valid = episode.calls.filter((c) => c.ok).length;
  const length = episode.modelTokens;
  const correct = config.correctWeight * (verified ? 1 : 0);
  const format = config.formatWeight * (wellFormed ? 1 : 0);
  const callValidity = task.env.callValidityWeight * (calls === 0 ? 1 : valid / calls);
  const toolCost = -task.env.toolCost * calls;
  const callBonus = task.env.callBonus * valid;
  const { lengthPenalty, lengthBonus, overlong } = lengthTerms(length, config);
  return {
    total:
      correct +
      format +
      callValidity +
      callBonus +
      toolCost +
      lengthPenalty +
      lengthBonus +
      overlong,
    correct,
    format,
    callValidity,
    // `+ 0` turns −0 into 0, so a term that is off reads as 0.
    toolCost: toolCost + 0,
    callBonus,
    lengthPenalty: lengthPenalty + 0,
    lengthBonus,
    overlongPenalty: overlong + 0,
    verified,
    strictlyVerified,
    wellFormed,
    truncated,
    length,
  };
}

/** Of the episodes that answered after a call that ran, the share that answered its result. */
function resultCopied(episodes: readonly Episode[]): number {
  let answeredAfterCall = 0;
  let copied = 0;
  for (const episode of episodes) {
    const lastRan = episode.calls.findLast((c) => c.ok);
    if (!lastRan || episode.answer === null) continue;
    answeredAfterCall += 1;
    if (episode.answer === lastRan.result) copied += 1;
  }
  return answeredAfterCall === 0 ? 0 : copied / answeredAfterCall;
}

/**
 * Batch metrics of tool use (verl's multi-turn names where it has them):
 *   tools/call_frequency      calls per episode
 *   tools/failure_frequency   failed calls / calls (0 when no call was made)
 *   tools/episodes_with_calls  fraction of episodes that called at least one tool
 *   tools/result_copied       of the episodes that answered after a call that ran, the fraction
 *                             whose answer is that last call's result: does the policy use what
 *                             its tool said? (0 when no episode qualifies)
 *   num_turns/mean, num_turns/max   model turns per episode
 *   reward/call_validity, reward/call_bonus, reward/tool_cost   the tool terms as added to the total
 *   response_length/observation_mean         tool tokens per episode (not in response_length)
 */
export function summarizeEpisodes(
  episodes: readonly Episode[],
  rewards: readonly AgentRewardBreakdown[],
): Record<string, number> {
  const n = episodes.length;
  const calls = episodes.reduce((s, e) => s + e.calls.length, 0);
  const failed = episodes.reduce((s, e) => s + e.calls.filter((c) => !c.ok).length, 0);
  const mean = (f: (i: number) => number) => {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += f(i);
    return sum / n;
  };
  return {
    'tools/call_frequency': calls / n,
    'tools/failure_frequency': calls === 0 ? 0 : failed / calls,
    'tools/episodes_with_calls': mean((i) => (episodes[i]!.calls.length > 0 ? 1 : 0)),
    'tools/result_copied': resultCopied(episodes),
    'num_turns/mean': mean((i) => episodes[i]!.turns),
    'num_turns/max': episodes.reduce((m, e) => Math.max(m, e.turns), 0),
    'reward/call_validity': mean((i) => rewards[i]!.callValidity),
    'reward/tool_cost': mean((i) => rewards[i]!.toolCost),
    'reward/call_bonus': mean((i) => rewards[i]!.callBonus),
    'response_length/observation_mean': mean((i) => episodes[i]!.observationTokens),
  };
}
