/**
 * Token tasks with verifiable rewards: a prompt, a reference answer, and a verifier that scores any
 * completion. The transformer sees `<bos> prompt completion <eos>` as characters.
 */

export interface TokenTaskSample {
  /** What the model is given, e.g. "abc=". */
  prompt: string;
  /** The one correct completion, e.g. "cba" (without <eos>). */
  answer: string;
}

export interface TokenTask {
  readonly name: string;
  /** A fresh sample from the seeded uniform source `random` (values in [0, 1)). */
  sample(random: () => number): TokenTaskSample;
  /** 1 for a correct completion (the text the model wrote before <eos>), else 0. */
  verify(sample: TokenTaskSample, completion: string): number;
  /** Longest prompt + answer in characters, to size the context. */
  readonly maxChars: number;
}
