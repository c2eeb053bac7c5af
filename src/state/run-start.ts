/**
 * Where a language-model run's weights start, in words. The run card's line: a shipped start, a
 * file, or a new model — and then how that new model knows positions, which a card would otherwise
 * not show (a rotary run and a learned one read the same everywhere else). And the form's label
 * of each shipped start.
 */
import type { RunSpec, ShippedModelInfo } from '../worker/run-protocol';

type StartedSpec = Pick<RunSpec, 'task' | 'init' | 'positions' | 'sftSteps'>;

const POSITION_WORDS = {
  learned: 'learned positions (a position table, as GPT-2)',
  rotary: 'rotary positions (RoPE, as Llama, SmolLM2 and Qwen2.5)',
} as const;

/** Undefined for environment runs (no task: nothing to start from). */
export function startLine(spec: StartedSpec): string | undefined {
  if (spec.task === undefined) return undefined;
  const from =
    spec.init === undefined
      ? `a new model with ${POSITION_WORDS[spec.positions ?? 'learned']}`
      : spec.init.kind === 'shipped'
        ? `the shipped ${spec.init.model} model`
        : spec.init.name;
  const warmUp = spec.sftSteps ? `, then ${spec.sftSteps} SFT steps` : '';
  return `Starts from ${from}${warmUp}`;
}

/** Whole percents; a rate just short of 1 reads '>99%', never a 100% it did not reach. */
const percent = (x: number) => (x < 1 && x >= 0.995 ? '>99%' : `${(x * 100).toFixed(0)}%`);

/**
 * A shipped start as the form's "Start from" lists it: its greedy success and, where the build
 * measured it, the success of one sampled answer — what a run's first updates show (a start made
 * for RL answers right greedily but samples a right answer about one time in three).
 */
export function startingModelLabel(
  model: Pick<ShippedModelInfo, 'name' | 'successRate' | 'sampled'>,
): string {
  const sampled = model.sampled ? `, ${percent(model.sampled.passAt1)} sampled` : '';
  return `shipped ${model.name} (${percent(model.successRate)} greedy${sampled})`;
}
