/**
 * Source views: the excerpts of the lab's own code (TypeScript and WGSL) that a lesson shows
 * beside the formula they compute, with `::source{file="…" region="…"}`.
 *
 * The files a lesson may show are an explicit allow-list of Vite `?raw` imports. A lesson names a
 * file by its repository path; only these keys resolve, so no path from lesson text ever reaches
 * an import.
 *
 * An excerpt is a named region of its file, not a range of line numbers, so that an edit elsewhere
 * in the file cannot change what a lesson shows:
 *
 *     // #region clipped-surrogate
 *     …the lines the lesson shows…
 *     // #endregion clipped-surrogate
 *
 * Both TypeScript and WGSL write these as `//` line comments (editors fold them, too). The rules:
 * a marker is a line of its own; every region has a name (letters, digits, `-`, `_`), unique in
 * its file; `#endregion` repeats the name it closes; regions may nest, properly (the inner one
 * closes first), so that one lesson can show a whole block and another a part of it; a region
 * holds at least one line of code. The marker lines themselves — including those of regions nested
 * inside — are never shown. Any breach is an error naming the file and the region.
 */
import policyLossTs from '../ops/policy-loss.ts?raw';
import policyLossWgsl from '../../kernels/policy_loss.wgsl?raw';
import valueIterationTs from '../rl/value-iteration.ts?raw';
import policyIterationTs from '../rl/policy-iteration.ts?raw';
import qLearningTs from '../rl/q-learning.ts?raw';
import sarsaTs from '../rl/sarsa.ts?raw';
import groupAdvantagesTs from '../ops/group-advantages.ts?raw';
import groupAdvantagesWgsl from '../../kernels/group_advantages.wgsl?raw';
import episodeRowsTs from '../agents/episode-rows.ts?raw';
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
import policyStepRequestTs from '../models/policy-step-request.ts?raw';
import loraTs from '../ops/nn/lora.ts?raw';

export const SOURCE_VIEWS: Readonly<Record<string, string>> = {
  'src/ops/policy-loss.ts': policyLossTs,
  'kernels/policy_loss.wgsl': policyLossWgsl,
  'src/rl/value-iteration.ts': valueIterationTs,
  'src/rl/policy-iteration.ts': policyIterationTs,
  'src/rl/q-learning.ts': qLearningTs,
  'src/rl/sarsa.ts': sarsaTs,
  'src/ops/group-advantages.ts': groupAdvantagesTs,
  'kernels/group_advantages.wgsl': groupAdvantagesWgsl,
  'src/agents/episode-rows.ts': episodeRowsTs,
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
  'src/models/policy-step-request.ts': policyStepRequestTs,
  'src/ops/nn/lora.ts': loraTs,
};

/** One shown line, with its line number in the file. */
export interface SourceLine {
  number: number;
  text: string;
}

/** A region of a file: where its markers stand and the lines between them, markers left out. */
export interface SourceRegion {
  name: string;
  /** File lines of the `#region` and `#endregion` markers. */
  open: number;
  close: number;
  lines: SourceLine[];
}

const MARKER = /^\s*\/\/\s*#(region|endregion)\b(.*)$/;
const REGION_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;

/**
 * Every region of a file's text, by name; a message naming the file, the region and the line
 * otherwise (an unnamed, unclosed, misnested, duplicate or empty region, or a stray `#endregion`).
 */
export function parseRegions(file: string, text: string): Map<string, SourceRegion> | string {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  if (lines.at(-1) === '') lines.pop();
  const regions = new Map<string, SourceRegion>();
  const open: SourceRegion[] = [];
  for (let i = 0; i < lines.length; i++) {
    const number = i + 1;
    const marker = MARKER.exec(lines[i]!);
    if (!marker) {
      for (const region of open) region.lines.push({ number, text: lines[i]! });
      continue;
    }
    const [, kind, rest] = marker;
    const name = rest!.trim();
    if (!REGION_NAME.test(name)) {
      return `${file}:${number}: '#${kind}' needs one name of letters, digits, '-' or '_', got '${name}'`;
    }
    if (kind === 'region') {
      const twice = regions.get(name);
      if (twice) {
        return `${file}:${number}: region '${name}' is opened twice (lines ${twice.open} and ${number}); names are unique per file`;
      }
      const region: SourceRegion = { name, open: number, close: 0, lines: [] };
      regions.set(name, region);
      open.push(region);
      continue;
    }
    const inner = open.at(-1);
    if (inner === undefined || inner.name !== name) {
      const why = inner
        ? `while region '${inner.name}' (line ${inner.open}) is still open: regions nest, so the inner one closes first`
        : 'but no region is open';
      return `${file}:${number}: '#endregion ${name}' ${why}`;
    }
    open.pop();
    inner.close = number;
    if (!inner.lines.some((line) => line.text.trim() !== '')) {
      return `${file}:${inner.open}: region '${name}' is empty (no code between its markers)`;
    }
  }
  const unclosed = open.at(-1);
  if (unclosed) {
    return `${file}:${unclosed.open}: region '${unclosed.name}' is never closed (no '// #endregion ${unclosed.name}')`;
  }
  return regions;
}

const parsed = new Map<string, Map<string, SourceRegion> | string>();

/** The regions of an allow-listed file, parsed once; a message naming what is wrong otherwise. */
export function sourceRegions(file: string): Map<string, SourceRegion> | string {
  const source = Object.hasOwn(SOURCE_VIEWS, file) ? SOURCE_VIEWS[file] : undefined;
  if (source === undefined) {
    return `file '${file}' is not in the source-view allow-list (${Object.keys(SOURCE_VIEWS).join(', ')})`;
  }
  let regions = parsed.get(file);
  if (regions === undefined) {
    regions = parseRegions(file, source);
    parsed.set(file, regions);
  }
  return regions;
}

/** The lines a `::source` directive shows: region `name` of `file`, or a message saying why not. */
export function regionLines(file: string, name: string): SourceLine[] | string {
  const regions = sourceRegions(file);
  if (typeof regions === 'string') return regions;
  const region = regions.get(name);
  if (region === undefined) {
    const known = [...regions.keys()].join(', ') || 'none';
    return `${file} has no region '${name}' (its regions: ${known}); mark the lines with '// #region ${name}' and '// #endregion ${name}'`;
  }
  return region.lines;
}
