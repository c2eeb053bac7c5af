/**
 * The files a lesson's "show the kernel" view may display, as an explicit allow-list of Vite
 * `?raw` imports. A lesson names a file by its repository path; only these keys resolve, so no
 * path from lesson text ever reaches an import.
 */
import policyLossTs from '../ops/policy-loss.ts?raw';
import policyLossWgsl from '../../kernels/policy_loss_rows.wgsl?raw';
import valueIterationTs from '../rl/value-iteration.ts?raw';
import policyIterationTs from '../rl/policy-iteration.ts?raw';
import qLearningTs from '../rl/q-learning.ts?raw';
import sarsaTs from '../rl/sarsa.ts?raw';
import groupAdvantagesTs from '../ops/group-advantages.ts?raw';
import groupAdvantagesWgsl from '../../kernels/group_advantages.wgsl?raw';
import agentEpisodeTs from '../agents/episode.ts?raw';
import reinforceTs from '../rl/reinforce.ts?raw';
import gaeTs from '../ops/gae.ts?raw';
import gaeWgsl from '../../kernels/gae.wgsl?raw';
import valueLossTs from '../ops/value-loss.ts?raw';
import lossAggregationTs from '../ops/loss-aggregation.ts?raw';
import lossAggregationReduceWgsl from '../../kernels/loss_aggregation_reduce.wgsl?raw';
import tokenRewardsTs from '../envs/token-tasks/rewards.ts?raw';
import klTs from '../ops/kl.ts?raw';
import klWgsl from '../../kernels/kl.wgsl?raw';
import dpoLossTs from '../ops/dpo-loss.ts?raw';
import dpoTs from '../rl/dpo.ts?raw';
import ppoLmTs from '../rl/ppo-lm.ts?raw';
import grpoTs from '../rl/grpo.ts?raw';
import bradleyTerryTs from '../ops/bradley-terry.ts?raw';
import rewardModelTs from '../rl/reward-model.ts?raw';
import curriculumTs from '../rl/curriculum.ts?raw';
import policyStepTs from '../rl/policy-step.ts?raw';

export const KERNEL_SOURCES: Readonly<Record<string, string>> = {
  'src/ops/policy-loss.ts': policyLossTs,
  'kernels/policy_loss_rows.wgsl': policyLossWgsl,
  'src/rl/value-iteration.ts': valueIterationTs,
  'src/rl/policy-iteration.ts': policyIterationTs,
  'src/rl/q-learning.ts': qLearningTs,
  'src/rl/sarsa.ts': sarsaTs,
  'src/ops/group-advantages.ts': groupAdvantagesTs,
  'kernels/group_advantages.wgsl': groupAdvantagesWgsl,
  'src/agents/episode.ts': agentEpisodeTs,
  'src/rl/reinforce.ts': reinforceTs,
  'src/ops/gae.ts': gaeTs,
  'kernels/gae.wgsl': gaeWgsl,
  'src/ops/value-loss.ts': valueLossTs,
  'src/ops/loss-aggregation.ts': lossAggregationTs,
  'kernels/loss_aggregation_reduce.wgsl': lossAggregationReduceWgsl,
  'src/envs/token-tasks/rewards.ts': tokenRewardsTs,
  'src/ops/kl.ts': klTs,
  'kernels/kl.wgsl': klWgsl,
  'src/ops/dpo-loss.ts': dpoLossTs,
  'src/rl/dpo.ts': dpoTs,
  'src/rl/ppo-lm.ts': ppoLmTs,
  'src/rl/grpo.ts': grpoTs,
  'src/ops/bradley-terry.ts': bradleyTerryTs,
  'src/rl/reward-model.ts': rewardModelTs,
  'src/rl/curriculum.ts': curriculumTs,
  'src/rl/policy-step.ts': policyStepTs,
};

export interface LineRange {
  first: number;
  last: number;
}

/** `"236-280"` or `"12"` → 1-based inclusive range; a message otherwise. */
export function parseLineRange(text: string): LineRange | string {
  const match = /^\s*(\d+)\s*(?:-\s*(\d+))?\s*$/.exec(text);
  if (!match) return `lines must read 'first-last' (e.g. "12-40"), got '${text}'`;
  const first = Number(match[1]);
  const last = match[2] === undefined ? first : Number(match[2]);
  if (first < 1 || last < first) return `lines must satisfy 1 ≤ first ≤ last, got ${first}-${last}`;
  return { first, last };
}

/** The lines of an allow-listed file, or a message naming what is wrong. */
export function kernelLines(file: string, range: LineRange): string[] | string {
  const source = Object.hasOwn(KERNEL_SOURCES, file) ? KERNEL_SOURCES[file] : undefined;
  if (source === undefined) {
    return `file '${file}' is not in the kernel allow-list (${Object.keys(KERNEL_SOURCES).join(', ')})`;
  }
  const lines = source.replace(/\r\n?/g, '\n').split('\n');
  if (lines.at(-1) === '') lines.pop();
  if (range.last > lines.length) {
    return `lines ${range.first}-${range.last} run past the end of ${file} (${lines.length} lines)`;
  }
  return lines.slice(range.first - 1, range.last);
}

/**
 * The range still shows the code the lesson meant: its first and last lines begin with the given
 * text (leading whitespace ignored). A message naming what was found otherwise.
 */
export function checkKernelAnchors(
  file: string,
  range: LineRange,
  lines: readonly string[],
  anchors: { first: string; last: string },
): string | undefined {
  const at = (line: number, text: string | undefined, want: string): string | undefined =>
    want.trim() === ''
      ? `'${line === range.first ? 'first' : 'last'}' must not be empty`
      : text?.trimStart().startsWith(want.trim())
        ? undefined
        : `line ${line} of ${file} reads '${text?.trim() ?? ''}', not '${want.trim()}…' — ` +
          'the file changed; find the lines again and update lines, first and last';
  return at(range.first, lines[0], anchors.first) ?? at(range.last, lines.at(-1), anchors.last);
}
