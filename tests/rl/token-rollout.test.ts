/** Single-turn rollouts: completions read from what the policy generated, and nothing else. */
import { describe, expect, it } from 'vitest';
import { createTokenTask } from '../../src/agents/token-task-registry';
import { DEFAULT_REWARD_CONFIG } from '../../src/envs/token-tasks/rewards';
import type { GenerateRequest, Generation } from '../../src/models/generate';
import type { LanguageModel } from '../../src/models/language-model';
import { CharTokenizer } from '../../src/models/tokenizer';
import { nonFiniteReward, rollout } from '../../src/rl/token-rollout';
import type { RewardBreakdown } from '../../src/envs/token-tasks/rewards';

const tokenizer = CharTokenizer.createDefault();
const task = createTokenTask('copy', { minLength: 3, maxLength: 3, alphabet: 'abcde' });
const sample = task.sample(() => 0.5);

/** A policy that writes `text` (then <eos> if `stops`), cut at maxNewTokens, padded to L. */
function scripted(text: string, stops: boolean): LanguageModel {
  return {
    async generate(request: GenerateRequest): Promise<Generation> {
      const L = request.maxLength;
      const prompt = request.prompts[0]!;
      const wanted = [...tokenizer.encode(text), ...(stops ? [tokenizer.eos] : [])];
      const written = wanted.slice(0, request.maxNewTokens);
      const tokens = new Int32Array(L).fill(request.padToken);
      const mask = new Float32Array(L);
      tokens.set(prompt);
      tokens.set(written, prompt.length);
      mask.fill(1, prompt.length, prompt.length + written.length);
      return {
        batch: 1,
        maxLength: L,
        tokens,
        logprobs: new Float32Array(L),
        mask,
        promptLengths: Int32Array.of(prompt.length),
      };
    },
  } as unknown as LanguageModel;
}

async function complete(text: string, stops: boolean, maxNewTokens: number) {
  const [row] = await rollout({
    policy: scripted(text, stops),
    tokenizer,
    task,
    rewards: { ...DEFAULT_REWARD_CONFIG, lengthPenalty: 1, lengthTarget: 2 },
    samples: [sample],
    maxLength: 20, // room for much more than maxNewTokens after this 5-token prompt
    maxNewTokens,
    sampling: { temperature: 1 },
    seed: 1,
  });
  return row!;
}

describe('rollout: completion length', () => {
  it('a completion cut at maxNewTokens is maxNewTokens long (padding is not counted)', async () => {
    const row = await complete('aaaaaaaaaa', false, 4);
    expect(row.completion).toMatchObject({ text: 'aaaa', length: 4, truncated: true });
    // The length penalty sees the same 4 tokens: 1 · (4 − 2).
    expect(row.reward.lengthPenalty).toBe(-2);
  });

  it('a completion that stops counts its <eos> (verl valid response length)', async () => {
    const row = await complete(sample.answer, true, 8);
    expect(row.completion).toMatchObject({ text: sample.answer, length: 4, truncated: false });
    expect(row.reward.verified).toBe(true);
  });
});

describe('nonFiniteReward', () => {
  const reward = (terms: Partial<RewardBreakdown>): { reward: RewardBreakdown } => {
    const base = {
      correct: 1,
      format: 0,
      lengthPenalty: 0,
      lengthBonus: 0,
      overlongPenalty: 0,
      verified: true,
      strictlyVerified: true,
      wellFormed: true,
      truncated: false,
      length: 3,
      ...terms,
    };
    const total =
      terms.total ??
      base.correct +
        base.format +
        base.lengthPenalty +
        base.lengthBonus +
        base.overlongPenalty +
        (base.model ?? 0);
    return { reward: { ...base, total } };
  };
  it.each<[string, Partial<RewardBreakdown>[], string | undefined]>([
    ['all finite', [{}, { model: 0.5 }], undefined],
    [
      "a reward model's NaN",
      [{}, {}, { model: NaN }],
      "non-finite reward: the 'model' term of row 2 is NaN; update skipped",
    ],
    [
      'the first bad row and term',
      [{ lengthBonus: -Infinity }, { correct: Infinity }],
      "non-finite reward: the 'lengthBonus' term of row 0 is -Infinity; update skipped",
    ],
    [
      'a total with no bad term',
      [{ total: NaN }],
      "non-finite reward: row 0's total is NaN; update skipped",
    ],
  ])('%s', (_what, rows, reason) => {
    expect(nonFiniteReward(rows.map(reward))).toBe(reason);
  });
});
