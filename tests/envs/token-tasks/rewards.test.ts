import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { copyTask } from '../../../src/envs/token-tasks/copy';
import {
  checkRewardConfig,
  DEFAULT_REWARD_CONFIG,
  isWellFormed,
  overlongPenalty,
  readCompletion,
  REWARD_CONFIG_SPEC,
  scoreCompletion,
  summarizeRewards,
  type RewardConfig,
} from '../../../src/envs/token-tasks/rewards';
import { reverseTask } from '../../../src/envs/token-tasks/reverse';
import { CharTokenizer } from '../../../src/models/tokenizer';
import { OpInputError } from '../../../src/ops/errors';
import { configFromFlags } from '../../../src/util/hyperparams';

const tok = CharTokenizer.createDefault();
/** Generated ids: the text's characters, then <eos> unless `truncated`. */
const ids = (text: string, eos = true): number[] => [
  ...tok.encode(text),
  ...(eos ? [tok.eos] : []),
];

describe('overlongPenalty (DAPO eq. 13)', () => {
  it.each([
    // L_max = 20, L_cache = 5: free up to 15, then ((20 − 5) − |y|) / 5, −1 beyond 20.
    [0, 20, 5, 0],
    [15, 20, 5, 0],
    [16, 20, 5, -0.2], // (15 − 16) / 5
    [17, 20, 5, -0.4],
    [18, 20, 5, -0.6],
    [19, 20, 5, -0.8],
    [20, 20, 5, -1], // (15 − 20) / 5: meets the −1 beyond L_max
    [21, 20, 5, -1],
    [1000, 20, 5, -1],
    // L_cache = L_max = 4: punished from the first token, (0 − |y|) / 4.
    [1, 4, 4, -0.25],
    [3, 4, 4, -0.75],
    [5, 4, 4, -1],
  ])('|y| = %i, L_max = %i, L_cache = %i → %f', (length, maxLength, buffer, expected) => {
    expect(overlongPenalty(length, maxLength, buffer)).toBeCloseTo(expected, 12);
  });

  it('property: in [−1, 0] and non-increasing in |y|', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 500 }),
        fc.integer({ min: 0, max: 499 }),
        fc.nat(600),
        (maxLength, shrink, length) => {
          const buffer = Math.max(1, maxLength - shrink);
          const p = overlongPenalty(length, maxLength, buffer);
          expect(p).toBeGreaterThanOrEqual(-1);
          expect(p).toBeLessThanOrEqual(0);
          expect(overlongPenalty(length + 1, maxLength, buffer)).toBeLessThanOrEqual(p);
        },
      ),
    );
  });
});

describe('readCompletion', () => {
  it('stops at the first <eos> and counts it in |y|', () => {
    expect(readCompletion(tok, [...ids('abc'), tok.pad, tok.pad])).toEqual({
      text: 'abc',
      length: 4,
      truncated: false,
      specialTokens: 0,
    });
    expect(readCompletion(tok, [...ids('ab'), ...ids('cd')]).text).toBe('ab');
    expect(readCompletion(tok, [tok.eos])).toEqual({
      text: '',
      length: 1,
      truncated: false,
      specialTokens: 0,
    });
  });

  it('marks a completion without <eos> truncated, and counts stray special tokens', () => {
    expect(readCompletion(tok, ids('abc', false))).toEqual({
      text: 'abc',
      length: 3,
      truncated: true,
      specialTokens: 0,
    });
    const call = tok.special['<call>'];
    expect(readCompletion(tok, [tok.encode('a')[0]!, call, tok.bos, tok.eos])).toEqual({
      text: 'a',
      length: 4,
      truncated: false,
      specialTokens: 2,
    });
  });
});

describe('isWellFormed', () => {
  it('needs <eos>, no special tokens, and only answer characters', () => {
    const ok = { text: 'abc', length: 4, truncated: false, specialTokens: 0 };
    expect(isWellFormed(ok, 'abcde')).toBe(true);
    expect(isWellFormed(ok)).toBe(true);
    expect(isWellFormed({ ...ok, text: 'abz' }, 'abcde')).toBe(false);
    expect(isWellFormed({ ...ok, text: 'abz' })).toBe(true); // no charset: characters not checked
    expect(isWellFormed({ ...ok, truncated: true }, 'abcde')).toBe(false);
    expect(isWellFormed({ ...ok, specialTokens: 1 }, 'abcde')).toBe(false);
    expect(isWellFormed({ ...ok, text: '' }, 'abcde')).toBe(true);
  });
});

describe('scoreCompletion', () => {
  const task = copyTask(); // answer characters a–e
  const sample = { prompt: 'abc:', answer: 'abc' };
  const config: RewardConfig = {
    correctWeight: 1,
    formatWeight: 0.5,
    lengthPenalty: 0.1,
    lengthTarget: 3,
    lengthBonus: 0,
    verifierMatch: 'full',
    overlongEnable: true,
    overlongMaxLength: 6,
    overlongBuffer: 2,
    overlongPenaltyFactor: 2,
    rewardModelWeight: 0,
  };
  const score = (generated: number[]) =>
    scoreCompletion(task, sample, readCompletion(tok, generated), config);

  it('adds the weighted terms (worked by hand)', () => {
    // "abc<eos>": |y| = 4. correct 1·1; format 0.5·1; length −0.1·(4 − 3) = −0.1;
    // overlong: 4 ≤ 6 − 2 → 0. Total 1.4.
    const right = score(ids('abc'));
    expect(right).toMatchObject({
      correct: 1,
      format: 0.5,
      overlongPenalty: 0,
      verified: true,
      wellFormed: true,
      truncated: false,
      length: 4,
    });
    expect(right.lengthPenalty).toBeCloseTo(-0.1, 12);
    expect(right.total).toBeCloseTo(1.4, 12);

    // "abcabc" with no <eos> (hit the limit): |y| = 6, truncated. correct 0; format 0;
    // length −0.1·3 = −0.3; overlong 2·((6 − 2) − 6)/2 = −2. Total −2.3.
    const cut = score(ids('abcabc', false));
    expect(cut).toMatchObject({ correct: 0, format: 0, verified: false, truncated: true });
    expect(cut.lengthPenalty).toBeCloseTo(-0.3, 12);
    expect(cut.overlongPenalty).toBeCloseTo(-2, 12);
    expect(cut.total).toBeCloseTo(-2.3, 12);

    // "abx<eos>": wrong, and 'x' is no answer character: only the length term, −0.1.
    const foreign = score(ids('abx'));
    expect(foreign).toMatchObject({ correct: 0, format: 0, overlongPenalty: 0 });
    expect(foreign.total).toBeCloseTo(-0.1, 12);

    // "a<bos>bc<eos>": the verifier reads "abc" (special tokens dropped, as evaluate.ts does)
    // but the format fails. |y| = 5: length −0.2, overlong 2·(4 − 5)/2 = −1. Total −0.2.
    const stray = score([...tok.encode('a'), tok.bos, ...ids('bc')]);
    expect(stray).toMatchObject({ correct: 1, format: 0, verified: true, wellFormed: false });
    expect(stray.overlongPenalty).toBeCloseTo(-1, 12);
    expect(stray.total).toBeCloseTo(-0.2, 12);
  });

  it('with the defaults, the reward is the verifier score alone', () => {
    for (const [generated, expected] of [
      [ids('abc'), 1],
      [ids('abd'), 0],
      [ids('abc'.repeat(30), false), 0],
    ] as const) {
      const r = scoreCompletion(
        task,
        sample,
        readCompletion(tok, generated),
        DEFAULT_REWARD_CONFIG,
      );
      expect(r.total).toBe(expected);
      expect([r.format, r.lengthPenalty, r.overlongPenalty]).toEqual([0, 0, 0]);
    }
  });

  it('works for a task without answerChars (format = <eos> and no special tokens)', () => {
    const plain = { ...reverseTask(), answerChars: undefined };
    const r = scoreCompletion(
      plain,
      { prompt: 'ab=', answer: 'ba' },
      readCompletion(tok, ids('b!')),
      { ...DEFAULT_REWARD_CONFIG, formatWeight: 1 },
    );
    expect(r).toMatchObject({ correct: 0, format: 1, total: 1 });
  });
});

describe('the settings made to be gamed: lengthBonus and a prefix verifier', () => {
  const task = copyTask();
  const sample = { prompt: 'abc:', answer: 'abc' };
  const gamed = { ...DEFAULT_REWARD_CONFIG, lengthBonus: 0.1, verifierMatch: 'prefix' as const };

  it('pays per token written, and the prefix verifier ignores what follows a right answer', () => {
    // "abcaaa" cut off at the limit: |y| = 6 (no <eos>). The prefix verifier reads "abc" → 1;
    // the full verifier reads "abcaaa" → 0. Total 1 + 0.1·6 = 1.6.
    const padded = scoreCompletion(task, sample, readCompletion(tok, ids('abcaaa', false)), gamed);
    expect(padded).toMatchObject({ verified: true, strictlyVerified: false, correct: 1 });
    expect(padded.lengthBonus).toBeCloseTo(0.6, 12);
    expect(padded.total).toBeCloseTo(1.6, 12);
    // The honest answer "abc<eos>": |y| = 4, both verifiers say 1. Total 1 + 0.4 = 1.4 < 1.6:
    // under this reward, rambling after the answer pays.
    const honest = scoreCompletion(task, sample, readCompletion(tok, ids('abc')), gamed);
    expect(honest).toMatchObject({ verified: true, strictlyVerified: true });
    expect(honest.total).toBeCloseTo(1.4, 12);
    // With the full verifier the same padding costs the correctness term: 0 + 0.6 < 1.4.
    const strict = { ...gamed, verifierMatch: 'full' as const };
    const caught = scoreCompletion(task, sample, readCompletion(tok, ids('abcaaa', false)), strict);
    expect(caught).toMatchObject({ verified: false, strictlyVerified: false, correct: 0 });
    expect(caught.total).toBeCloseTo(0.6, 12);
    // A short wrong answer stays wrong under the prefix verifier: "ab<eos>" reads "ab" ≠ "abc".
    const short = scoreCompletion(task, sample, readCompletion(tok, ids('ab')), gamed);
    expect(short).toMatchObject({ verified: false, strictlyVerified: false });
  });

  it('summarizes the bonus and both accuracies', () => {
    const padded = scoreCompletion(task, sample, readCompletion(tok, ids('abcaaa', false)), gamed);
    const honest = scoreCompletion(task, sample, readCompletion(tok, ids('abc')), gamed);
    const summary = summarizeRewards([padded, honest]);
    expect(summary['reward/accuracy']).toBe(1);
    expect(summary['reward/strict_accuracy']).toBe(0.5);
    expect(summary['reward/length_bonus']).toBeCloseTo(0.5, 12); // (0.6 + 0.4) / 2
  });

  it('property: the prefix verifier never passes less than the full one', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[abcde]{0,8}$/), (text) => {
        const generated = text.length > 0 ? ids(text) : [tok.eos];
        const r = scoreCompletion(task, sample, readCompletion(tok, generated), gamed);
        return !r.strictlyVerified || r.verified;
      }),
    );
  });
});

describe('summarizeRewards', () => {
  it('averages each term under verl-style names', () => {
    const task = copyTask();
    const sample = { prompt: 'abc:', answer: 'abc' };
    const config = { ...DEFAULT_REWARD_CONFIG, formatWeight: 1 };
    // a: right and well formed, 1 + 1, |y| = 4; b: cut off, 0, |y| = 2.
    const a = scoreCompletion(task, sample, readCompletion(tok, ids('abc')), config);
    const b = scoreCompletion(task, sample, readCompletion(tok, ids('ab', false)), config);
    expect(summarizeRewards([a, b])).toEqual({
      'reward/mean': 1, // (2 + 0) / 2
      'reward/correct': 0.5,
      'reward/format': 0.5,
      'reward/length_penalty': 0,
      'reward/length_bonus': 0,
      'reward/overlong_penalty': 0,
      'reward/accuracy': 0.5,
      'reward/strict_accuracy': 0.5,
      'response_length/mean': 3,
      'response_length/max': 4,
      'response_length/clip_ratio': 0.5,
    });
    expect(() => summarizeRewards([])).toThrow(/summarizeRewards: rewards must not be empty/);
  });
});

describe('checkRewardConfig', () => {
  it('accepts the defaults and names the field and range of a bad value', () => {
    expect(() => checkRewardConfig({ ...DEFAULT_REWARD_CONFIG })).not.toThrow();
    const bad: [Partial<RewardConfig> & Record<string, unknown>, RegExp][] = [
      [{ correctWeight: -1 }, /rewards: correctWeight must be a number in \[0, 100\], got -1/],
      [{ lengthTarget: 2.5 }, /rewards: lengthTarget must be an integer in \[0, 4096\], got 2.5/],
      [{ overlongEnable: 1 as unknown as boolean }, /overlongEnable must be true or false/],
      [{ overlongBuffer: 0 }, /overlongBuffer must be an integer in \[1, 4096\], got 0/],
      [
        { overlongBuffer: 65 },
        /overlongBuffer must be ≤ overlongMaxLength = 64 \(L_cache ≤ L_max\), got 65/,
      ],
      [{ formatWeight: Number.NaN }, /formatWeight must be a number/],
      [{ bonus: 1 }, /rewards: bonus is not a setting of rewards/],
    ];
    for (const [change, message] of bad) {
      expect(() => checkRewardConfig({ ...DEFAULT_REWARD_CONFIG, ...change })).toThrow(
        OpInputError,
      );
      expect(() => checkRewardConfig({ ...DEFAULT_REWARD_CONFIG, ...change })).toThrow(message);
    }
    const missing: Partial<RewardConfig> = { ...DEFAULT_REWARD_CONFIG };
    delete missing.overlongBuffer;
    expect(() => checkRewardConfig(missing as RewardConfig)).toThrow(/overlongBuffer is missing/);
  });

  it('reads CLI flags through its spec', () => {
    const flags = new Map([
      ['overlong-enable', 'true'],
      ['overlong-buffer', '8'],
      ['format-weight', '0.2'],
    ]);
    expect(configFromFlags('rewards', REWARD_CONFIG_SPEC, flags)).toEqual({
      overlongEnable: true,
      overlongBuffer: 8,
      formatWeight: 0.2,
    });
  });
});
