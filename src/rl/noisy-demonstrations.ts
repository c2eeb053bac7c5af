/**
 * A noisy demonstrator for the supervised warm-up: the same prompts as the task, but each answer
 * character of a demonstration is replaced, with some probability, by a character drawn uniformly
 * from the task's answer alphabet (which may redraw the right one).
 *
 * Why: a start made for RL. A model imitating such demonstrations learns the right character as
 * the most likely one at every position, but with only part of the probability, so a sampled
 * answer is wholly right rarely — while G samples of the same prompt usually hold a right one
 * (high pass@G). Its mistakes are spread over all prompts instead of sitting on the hard ones, so
 * most GRPO groups carry signal, and the verifier's reward can sharpen what imitation left
 * blurred. This is RL's effect in practice (a policy made sharper on what its own samples show to
 * work), at a scale a browser trains in seconds.
 *
 * Two ways to set the noise:
 * - `{ perChar: n }`: every character is replaced with probability n. A character stays right
 *   with probability r = 1 − n·(1 − 1/|A|), an answer of L characters with r^L: long answers are
 *   almost never right, short ones often, so groups of long prompts are all wrong and groups of
 *   short ones often all right — both without signal.
 * - `{ wholeAnswerRight: q }`: the per-character rate depends on the answer's length L so that a
 *   demonstration is wholly right with probability q whatever L: r = q^(1/L), n = (1 − r)·|A|/(|A| − 1).
 *   Every prompt is then about equally hard, which keeps pass@G high at a low pass@1.
 *
 * Only the demonstrations change; judge the warmed-up model with the original task, whose samples
 * carry the true answers.
 */
import type { CharsetTask } from '../envs/token-tasks/shared';
import type { TokenTaskSample } from '../envs/token-tasks/types';
import { OpInputError } from '../ops/errors';

export type DemoNoise = { perChar: number } | { wholeAnswerRight: number };

/** The probability each character of an answer of `length` characters is replaced. */
export function charNoiseFor(noise: DemoNoise, length: number, alphabetSize: number): number {
  if ('perChar' in noise) return noise.perChar;
  if (length === 0) return 0;
  const keepRight = Math.pow(noise.wholeAnswerRight, 1 / length);
  return ((1 - keepRight) * alphabetSize) / (alphabetSize - 1);
}

function checkNoise(noise: DemoNoise, alphabetSize: number): void {
  if ('perChar' in noise) {
    if (!(noise.perChar >= 0 && noise.perChar <= 1)) {
      throw new OpInputError(
        'noisyDemonstrations',
        'noise.perChar',
        `must be in [0, 1], got ${noise.perChar}`,
      );
    }
    return;
  }
  // Replacing every character still leaves a 1/|A| chance of each: q below (1/|A|)^L cannot be
  // reached for an answer of L characters, so q must at least reach it for one character.
  const floor = 1 / alphabetSize;
  if (!(noise.wholeAnswerRight >= floor && noise.wholeAnswerRight <= 1)) {
    throw new OpInputError(
      'noisyDemonstrations',
      'noise.wholeAnswerRight',
      `must be in [${floor}, 1] for an alphabet of ${alphabetSize}, got ${noise.wholeAnswerRight}`,
    );
  }
}

export function describeDemoNoise(noise: DemoNoise): string {
  return 'perChar' in noise
    ? `${Math.round(noise.perChar * 100)}% of characters noisy`
    : `${Math.round(noise.wholeAnswerRight * 100)}% wholly right`;
}

export function noisyDemonstrations(task: CharsetTask, noise: DemoNoise): CharsetTask {
  const alphabet = task.answerChars;
  if (alphabet.length < 2) {
    throw new OpInputError(
      'noisyDemonstrations',
      'task.answerChars',
      `must hold at least 2 characters, got ${alphabet.length}`,
    );
  }
  checkNoise(noise, alphabet.length);
  return {
    name: `${task.name}, demonstrations ${describeDemoNoise(noise)}`,
    maxChars: task.maxChars,
    answerChars: alphabet,
    // The prompt's draws first, then one draw per answer character (and one more for each
    // replaced one), all from the caller's seeded stream: the warm-up stays reproducible.
    sample(random: () => number): TokenTaskSample {
      const clean = task.sample(random);
      const charNoise = Math.min(1, charNoiseFor(noise, clean.answer.length, alphabet.length));
      let answer = '';
      for (const c of clean.answer) {
        answer += random() < charNoise ? alphabet[Math.floor(random() * alphabet.length)]! : c;
      }
      return { prompt: clean.prompt, answer };
    },
    verify: (sample, completion) => task.verify(sample, completion),
  };
}
