/**
 * A noisy demonstrator for the supervised warm-up: the same prompts as the task, but each answer
 * character of a demonstration is replaced, with probability `charNoise`, by a character drawn
 * uniformly from the task's answer alphabet (which may redraw the right one).
 *
 * Why: a start made for RL. A model imitating such demonstrations learns the right character as
 * the most likely one at every position, but with only about 1 − charNoise·(1 − 1/|A|) of the
 * probability, so a sampled answer of L characters is right about (that)^L of the time — low —
 * while G samples of the same prompt usually hold a right one (high pass@G). Its mistakes are
 * spread over all prompts instead of sitting on the hard ones, so most GRPO groups carry signal,
 * and the verifier's reward can sharpen what imitation left blurred. This is RL's effect in
 * practice (a policy made sharper on what its own samples show to work), at a scale a browser
 * trains in seconds.
 *
 * Only the demonstrations change; judge the warmed-up model with the original task, whose samples
 * carry the true answers.
 */
import type { CharsetTask } from '../envs/token-tasks/shared';
import type { TokenTaskSample } from '../envs/token-tasks/types';
import { OpInputError } from '../ops/errors';

export function noisyDemonstrations(task: CharsetTask, charNoise: number): CharsetTask {
  if (!(charNoise >= 0 && charNoise <= 1)) {
    throw new OpInputError(
      'noisyDemonstrations',
      'charNoise',
      `must be in [0, 1], got ${charNoise}`,
    );
  }
  const alphabet = task.answerChars;
  if (alphabet.length === 0) {
    throw new OpInputError('noisyDemonstrations', 'task.answerChars', 'must not be empty');
  }
  return {
    name: `${task.name}, demonstrations ${Math.round(charNoise * 100)}% noisy`,
    maxChars: task.maxChars,
    answerChars: alphabet,
    // The prompt's draws first, then one draw per answer character (and one more for each
    // replaced one), all from the caller's seeded stream: the warm-up stays reproducible.
    sample(random: () => number): TokenTaskSample {
      const clean = task.sample(random);
      let answer = '';
      for (const c of clean.answer) {
        answer += random() < charNoise ? alphabet[Math.floor(random() * alphabet.length)]! : c;
      }
      return { prompt: clean.prompt, answer };
    },
    verify: (sample, completion) => task.verify(sample, completion),
  };
}
