/**
 * Multiplication with a calculator: "347*86=" → 29842. Products of several-digit numbers are far
 * beyond what a tiny transformer can compute in its weights, but one call does it:
 *
 *   347*86= <call>calc(347*86)</call><result>29842</result><answer>29842</answer>
 *
 * With useTools off the demonstration answers at once (`<answer>29842</answer>`): the no-tool
 * baseline the tool-use lesson compares against.
 */
import { checkInt } from '../../ops/validate';
import { randomInt, withDefaults } from '../../envs/token-tasks/shared';
import type { TokenTaskSample } from '../../envs/token-tasks/types';
import {
  answerText,
  callText,
  DEFAULT_AGENT_ENV_OPTIONS,
  type AgentEnvOptions,
  type AgentTask,
} from '../agent-task';

export interface MultiplyOptions extends AgentEnvOptions {
  /** Fewest digits of a factor, 1 ≤ minDigits ≤ maxDigits. Default 2. */
  minDigits?: number;
  /** Most digits of a factor, ≤ 6 (products stay within the calculator's 18-digit numbers). Default 3. */
  maxDigits?: number;
}

export const DEFAULT_MULTIPLY_OPTIONS: Readonly<Required<MultiplyOptions>> = Object.freeze({
  ...DEFAULT_AGENT_ENV_OPTIONS,
  minDigits: 2,
  maxDigits: 3,
});

/** Curriculum rungs, easiest first. */
export const multiplyDifficultyLevels: readonly Readonly<Required<MultiplyOptions>>[] = [
  { ...DEFAULT_MULTIPLY_OPTIONS, minDigits: 1, maxDigits: 2 },
  { ...DEFAULT_MULTIPLY_OPTIONS, minDigits: 2, maxDigits: 3 },
  { ...DEFAULT_MULTIPLY_OPTIONS, minDigits: 3, maxDigits: 4 },
  { ...DEFAULT_MULTIPLY_OPTIONS, minDigits: 4, maxDigits: 6 },
];

/** A factor with exactly `digits` digits (no leading zero). */
function factor(random: () => number, digits: number): bigint {
  const low = digits === 1 ? 0 : 10 ** (digits - 1);
  return BigInt(randomInt(random, low, 10 ** digits - 1));
}

export function multiplyTask(options: MultiplyOptions = {}): AgentTask {
  const full = withDefaults(DEFAULT_MULTIPLY_OPTIONS, options);
  const { minDigits, maxDigits } = full;
  checkInt('multiplyTask', 'maxDigits', maxDigits, 1, 6);
  checkInt('multiplyTask', 'minDigits', minDigits, 1, maxDigits);
  const tools = full.useTools ? ['calc'] : [];
  return {
    kind: 'agent',
    name: `multiply(${minDigits}–${maxDigits} digits${full.useTools ? ', calc' : ', no tools'})`,
    tools,
    env: full,
    // Prompt "a*b=" (2·maxDigits + 2), one call with its result (≈ 2·maxDigits + 30 with the
    // tags as characters) and the answer (2·maxDigits + 17).
    maxChars: 8 * maxDigits + 50,
    answerChars: '0123456789',
    sample(random: () => number): TokenTaskSample {
      const a = factor(random, randomInt(random, minDigits, maxDigits));
      const b = factor(random, randomInt(random, minDigits, maxDigits));
      return { prompt: `${a}*${b}=`, answer: String(a * b) };
    },
    demonstration(sample: TokenTaskSample): string {
      const expression = sample.prompt.slice(0, -1);
      const call = full.useTools ? callText('calc', expression, sample.answer) : '';
      return call + answerText(sample.answer);
    },
    verify(sample: TokenTaskSample, answer: string): number {
      return answer === sample.answer ? 1 : 0;
    },
    chatQuestion(sample: TokenTaskSample): string {
      return `What is ${sample.prompt.slice(0, -1)}?`;
    },
  };
}
