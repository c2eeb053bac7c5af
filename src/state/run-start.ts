/**
 * The run card's line on where a language-model run's weights come from: a shipped start, a file,
 * or a new model — and then how that new model knows positions, which a card would otherwise not
 * show (a rotary run and a learned one read the same everywhere else).
 */
import type { RunSpec } from '../worker/run-protocol';

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
