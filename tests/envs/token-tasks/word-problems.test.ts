import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_WORD_PROBLEM_OPTIONS,
  lastNumber,
  wordProblemDifficultyLevels,
  wordProblemTask,
  type WordProblemOptions,
} from '../../../src/envs/token-tasks/word-problems';
import { CharTokenizer } from '../../../src/models/tokenizer';
import { OpInputError } from '../../../src/ops/errors';
import { seededRandom } from '../../../src/util/random';
import { drawsAll } from './scripted';

const INSTRUCTION = ' answer with the number.';

/** A problem read back from its text alone: frame, steps, the value after each. */
interface Reading {
  frame: 'items' | 'money' | 'pages';
  /** The name of the step pattern each step sentence matched. */
  kinds: string[];
  /** The start and the value after each step. */
  values: number[];
  /** Every number written in digits. */
  numbers: number[];
}

type Step = (x: number, n: number[]) => number;

/**
 * Sentence patterns per frame, written from the task's description rather than from its code, so
 * a generator whose text says something other than what it computed fails here.
 */
const FRAMES: Record<
  Reading['frame'],
  { start: RegExp; question: RegExp; steps: Record<string, [RegExp, Step]> }
> = {
  items: {
    start: /^[a-z]+ has (\d+) ([a-z]+)\.$/,
    question: /^how many ([a-z]+) does (?:he|she) have now\?$/,
    steps: {
      'items-gain': [/^(?:he|she) (?:buys|finds) (\d+) more\.$/, (x, [a]) => x + a!],
      'items-lose': [/^(?:he|she) loses (\d+)\.$/, (x, [a]) => x - a!],
      'items-give': [
        /^(?:he|she) gives (\d+) to (?:his|her) (?:brother|sister|friend|cousin)\.$/,
        (x, [a]) => x - a!,
      ],
      'items-groups': [
        /^(?:he|she) buys (\d+) (?:bags|boxes|packs) of (\d+) ([a-z]+)\.$/,
        (x, [g, k]) => x + g! * k!,
      ],
      'items-double': [/^(?:his|her) ([a-z]+) double\.$/, (x) => 2 * x],
      'items-triple': [/^(?:his|her) ([a-z]+) triple\.$/, (x) => 3 * x],
      'items-share': [/^(?:he|she) keeps one of (\d+) equal shares\.$/, share],
    },
  },
  money: {
    start: /^[a-z]+ has \$(\d+)\.$/,
    question: /^how many dollars does (?:he|she) have now\?$/,
    steps: {
      'money-earn': [/^(?:he|she) earns \$(\d+)\.$/, (x, [a]) => x + a!],
      'money-aunt': [/^(?:his aunt gives him|her aunt gives her) \$(\d+)\.$/, (x, [a]) => x + a!],
      'money-spend': [/^(?:he|she) spends \$(\d+) on a [a-z]+\.$/, (x, [a]) => x - a!],
      'money-sell': [
        /^(?:he|she) sells (\d+) [a-z]+ for \$(\d+) each\.$/,
        (x, [g, p]) => x + g! * p!,
      ],
      'money-buy': [
        /^(?:he|she) buys (\d+) [a-z]+ for \$(\d+) each\.$/,
        (x, [g, p]) => x - g! * p!,
      ],
      'money-double': [/^(?:his|her) money doubles\.$/, (x) => 2 * x],
      'money-triple': [/^(?:his|her) money triples\.$/, (x) => 3 * x],
      'money-share': [/^(?:he|she) keeps one of (\d+) equal shares\.$/, share],
    },
  },
  pages: {
    start: /^[a-z]+ has (\d+) pages left to read\.$/,
    question: /^how many pages are left to read\?$/,
    steps: {
      'pages-read': [/^(?:he|she) reads (\d+) pages\.$/, (x, [a]) => x - a!],
      'pages-daily': [
        /^(?:he|she) reads (\d+) a day for (\d+) days\.$/,
        (x, [k, d]) => x - k! * d!,
      ],
      'pages-added': [/^(?:his|her) teacher adds (\d+) pages\.$/, (x, [a]) => x + a!],
    },
  },
};

/** Keep one of k equal shares: only where k divides x, or the problem has no whole answer. */
function share(x: number, [k]: number[]): number {
  if (x % k! !== 0) throw new Error(`${x} does not split into ${k} equal shares`);
  return x / k!;
}

/** Reads a prompt sentence by sentence; throws on any sentence no pattern accounts for. */
function readProblem(prompt: string): Reading {
  if (!prompt.endsWith(INSTRUCTION)) throw new Error(`no instruction at the end: ${prompt}`);
  const sentences = prompt.slice(0, -INSTRUCTION.length).split(/(?<=[.?]) /);
  const first = sentences[0]!;
  const question = sentences.at(-1)!;
  const frame = (Object.keys(FRAMES) as Reading['frame'][]).find((f) =>
    FRAMES[f].start.test(first),
  );
  if (!frame) throw new Error(`unknown start: ${first}`);
  const { start, steps } = FRAMES[frame];
  const questionMatch = FRAMES[frame].question.exec(question);
  if (!questionMatch) throw new Error(`unknown question: ${question}`);
  const startMatch = start.exec(first)!;
  let x = Number(startMatch[1]);
  const numbers = [x];
  const values = [x];
  const kinds: string[] = [];
  // Owned things keep one name from start to question.
  if (frame === 'items') check(questionMatch[1] === startMatch[2], 'the item changes', prompt);
  for (const sentence of sentences.slice(1, -1)) {
    const found = Object.entries(steps).find(([, [pattern]]) => pattern.test(sentence));
    if (!found) throw new Error(`unknown step in ${frame}: ${sentence}`);
    const [kind, [pattern, apply]] = found;
    const match = pattern.exec(sentence)!;
    const written = match
      .slice(1)
      .filter((m) => /^\d+$/.test(m ?? ''))
      .map(Number);
    const words = match.slice(1).filter((m) => m !== undefined && !/^\d+$/.test(m));
    if (frame === 'items')
      check(
        words.every((w) => w === startMatch[2]),
        'the item changes',
        prompt,
      );
    x = apply(x, written);
    kinds.push(kind);
    numbers.push(...written);
    values.push(x);
  }
  // One person throughout: the pronouns agree with each other.
  const female = /\b(?:she|her)\b/.test(prompt);
  const male = /\b(?:he|his|him)\b/.test(prompt);
  check(!(female && male), 'the pronouns disagree', prompt);
  return { frame, kinds, values, numbers };
}

const tokenizer = CharTokenizer.createDefault();

/** A failed check names the problem and the prompt (cheaper than expect() in loops of thousands). */
function check(ok: boolean, what: string, prompt: string): void {
  if (!ok) throw new Error(`${what}: ${JSON.stringify(prompt)}`);
}

/** Everything a problem must satisfy, checked from its text and answer only. */
function checkSample(
  options: Required<WordProblemOptions>,
  prompt: string,
  answer: string,
): Reading {
  check(/^[a-z0-9 .,$?]+$/.test(prompt), 'not lowercase text', prompt);
  const text = prompt + answer;
  check(
    [...text].every((c) => CharTokenizer.DEFAULT_CHARS.includes(c)),
    'outside the alphabet',
    prompt,
  );
  check(tokenizer.encode(text).length === text.length, 'not one token per character', prompt);
  check(!prompt.includes('<'), "a '<'", prompt);
  check(/^(0|[1-9][0-9]*)$/.test(answer), `answer ${answer} is not a whole number`, prompt);
  const reading = readProblem(prompt);
  check(
    reading.values.at(-1) === Number(answer),
    `answer ${answer} is not what the text gives`,
    prompt,
  );
  const steps = reading.kinds.length;
  check(steps >= options.minSteps && steps <= options.maxSteps, `${steps} steps`, prompt);
  for (const v of reading.values) {
    check(Number.isInteger(v) && v >= 0 && v <= options.maxAnswer, `value ${v}`, prompt);
  }
  for (const n of reading.numbers) {
    check(n >= 1 && n <= options.maxNumber, `number ${n}`, prompt);
  }
  return reading;
}

describe('wordProblemTask', () => {
  it('builds a problem step by step (worked from scripted draws)', () => {
    const draws = [
      0, // frame floor(0 · 3) = 0: things owned
      0.56, // person floor(0.56 · 20) = 11: mia (she)
      0, // priced thing (unused here)
      0.45, // item floor(0.45 · 10) = 4: marbles
      0, // container 0: bags
      0, // relative 0 (unused here)
      0.9, // steps 1 + floor(0.9 · 2) = 2
      0.55, // start 2 + floor(0.55 · 19) = 12
      0.5, // step 1: kind floor(0.5 · 5) = 2, groups
      0.15, // groups 2 + floor(0.15 · 8) = 3
      0.25, // of 2 + floor(0.25 · 19) = 6 (3 · 6 ≤ 100 − 12): 12 + 18 = 30
      0, // its one wording
      0.9, // step 2: kind floor(0.9 · 5) = 4, share
      0.5, // k: item floor(0.5 · 4) = 2 of the divisors [2, 3, 5, 6] of 30: 5 → 6
      0, // its one wording
    ];
    drawsAll(draws, (random) => {
      expect(wordProblemTask().sample(random)).toEqual({
        prompt:
          'mia has 12 marbles. she buys 3 bags of 6 marbles. she keeps one of 5 equal shares. ' +
          'how many marbles does she have now? answer with the number.',
        answer: '6',
      });
    });
  });

  it('retries a step that does not fit, then falls back to one that always does', () => {
    const draws = [
      0.9, // frame 2: pages left to read
      0, // ana (she)
      0,
      0,
      0,
      0,
      0, // steps: 1 (1…1 still draws)
      0.99, // start 2 + floor(0.99 · 4) = 5 = maxAnswer
      // 20 draws of a gain (kind 0 of 3), which never fits at 5 = maxAnswer
      ...Array<number>(20).fill(0),
      0.5, // fallback: a loss of 2 + floor(0.5 · 4) = 4
      0, // its one wording
    ];
    drawsAll(draws, (random) => {
      const task = wordProblemTask({ minSteps: 1, maxSteps: 1, maxNumber: 5, maxAnswer: 5 });
      expect(task.sample(random)).toEqual({
        prompt:
          'ana has 5 pages left to read. she reads 4 pages. how many pages are left to read? ' +
          'answer with the number.',
        answer: '1',
      });
    });
  });

  it('is deterministic per seed, and different seeds give different problems', () => {
    const draw = (seed: number) => {
      const task = wordProblemTask();
      const random = seededRandom(seed);
      return Array.from({ length: 20 }, () => task.sample(random));
    };
    expect(draw(3)).toEqual(draw(3));
    expect(draw(3)).not.toEqual(draw(4));
    expect(new Set(draw(3).map((s) => s.prompt)).size).toBeGreaterThan(15);
  });

  it('every sample at every level: lowercase text in the tokenizer alphabet, within maxChars, an answer the text itself gives', () => {
    const seen = new Set<string>();
    const frames = new Set<string>();
    for (const [level, options] of wordProblemDifficultyLevels.entries()) {
      const task = wordProblemTask(options);
      const random = seededRandom(100 + level);
      const lengths = new Set<number>();
      for (let i = 0; i < 1500; i++) {
        const s = task.sample(random);
        check(s.prompt.length + s.answer.length <= task.maxChars, 'over maxChars', s.prompt);
        const reading = checkSample(options, s.prompt, s.answer);
        reading.kinds.forEach((k) => seen.add(k));
        frames.add(reading.frame);
        lengths.add(reading.kinds.length);
        const scores = [
          task.verify(s, s.answer),
          task.verify(s, String(Number(s.answer) + 1)),
          task.verify(s, `so ${s.answer}7`),
          task.verify(s, `3+4=7. the answer is ${s.answer}.`),
        ];
        check(scores.join() === '1,0,0,1', `scores ${scores.join()}`, s.prompt);
      }
      // Every step count in range occurs.
      expect([...lengths].sort()).toEqual(
        Array.from(
          { length: options.maxSteps - options.minSteps + 1 },
          (_, i) => i + options.minSteps,
        ),
      );
      if (level === wordProblemDifficultyLevels.length - 1) {
        // The hardest rung still leaves the small models' 256-token context room.
        expect(task.maxChars).toBeLessThanOrEqual(224);
      }
    }
    // All three frames and every kind of step and wording occur.
    expect([...frames].sort()).toEqual(['items', 'money', 'pages']);
    const all = Object.values(FRAMES).flatMap((f) => Object.keys(f.steps));
    expect([...seen].sort()).toEqual([...all].sort());
  });

  it('keeps prompts at the hardest rung ≤ 220 characters', () => {
    const options = wordProblemDifficultyLevels.at(-1)!;
    const task = wordProblemTask(options);
    const random = seededRandom(9);
    let longest = 0;
    for (let i = 0; i < 5000; i++) longest = Math.max(longest, task.sample(random).prompt.length);
    expect(longest).toBeLessThanOrEqual(220);
    expect(task.maxChars - String(options.maxAnswer).length).toBeLessThanOrEqual(220);
  });

  it('sizes maxChars from the longest sentences', () => {
    // Defaults (2 steps, numbers ≤ 20, answers ≤ 100): the pages frame is longest —
    // "ana has 20 pages left to read." (30), 2 × (1 + "she reads 20 a day for 20 days." (31)),
    // " how many pages are left to read?" (33), the instruction (24), a 3-digit answer: 154.
    const task = wordProblemTask();
    expect(task.maxChars).toBe(154);
    expect(task.answerChars).toBe('0123456789');
    expect(task.name).toBe('wordproblem(1–2 steps, numbers ≤ 20, answers ≤ 100)');
    // Hardest rung: things owned, "ana has 99 stickers." (20) + 4 × (1 + "she buys 99 boxes of
    // 99 stickers." (33)) + " how many stickers does she have now?" (37) + 24 + 3 = 220.
    expect(wordProblemTask(wordProblemDifficultyLevels.at(-1)!).maxChars).toBe(220);
  });

  const cases: fc.Arbitrary<Required<WordProblemOptions>> = fc.oneof(
    fc.constantFrom(...wordProblemDifficultyLevels),
    fc
      .record({
        minSteps: fc.integer({ min: 1, max: 4 }),
        extra: fc.integer({ min: 0, max: 3 }),
        maxNumber: fc.integer({ min: 5, max: 999 }),
        extraAnswer: fc.integer({ min: 0, max: 9999 }),
      })
      .map(({ minSteps, extra, maxNumber, extraAnswer }) => ({
        minSteps,
        maxSteps: Math.min(4, minSteps + extra),
        maxNumber,
        maxAnswer: Math.min(9999, maxNumber + extraAnswer),
      })),
  );

  it('property: any valid options give problems within them that read back to their answer', () => {
    fc.assert(
      fc.property(cases, fc.integer(), (options, seed) => {
        const task = wordProblemTask(options);
        expect(task.maxChars + 2).toBeLessThanOrEqual(256);
        const random = seededRandom(seed);
        for (let i = 0; i < 20; i++) {
          const s = task.sample(random);
          check(s.prompt.length + s.answer.length <= task.maxChars, 'over maxChars', s.prompt);
          checkSample(options, s.prompt, s.answer);
          check(task.verify(s, s.answer) === 1, 'its answer fails', s.prompt);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('refuses options out of range, naming the field and the range', () => {
    const bad: [WordProblemOptions, RegExp][] = [
      [{ maxSteps: 5 }, /wordProblemTask: maxSteps must be an integer in \[1, 4\], got 5/],
      [{ maxSteps: 0 }, /maxSteps must be an integer in \[1, 4\], got 0/],
      [{ minSteps: 3 }, /wordProblemTask: minSteps must be an integer in \[1, 2\], got 3/],
      [{ minSteps: 0 }, /minSteps must be an integer in \[1, 2\], got 0/],
      [{ minSteps: 1.5 }, /minSteps must be an integer in \[1, 2\], got 1.5/],
      [{ maxNumber: 4 }, /wordProblemTask: maxNumber must be an integer in \[5, 999\], got 4/],
      [{ maxNumber: 1000, maxAnswer: 2000 }, /maxNumber must be an integer in \[5, 999\]/],
      [{ maxAnswer: 19 }, /wordProblemTask: maxAnswer must be an integer in \[20, 9999\], got 19/],
      [{ maxAnswer: 10000 }, /maxAnswer must be an integer in \[20, 9999\], got 10000/],
      [{ maxNumber: 50, maxAnswer: 40 }, /maxAnswer must be an integer in \[50, 9999\], got 40/],
    ];
    for (const [options, message] of bad) {
      expect(() => wordProblemTask(options)).toThrow(OpInputError);
      expect(() => wordProblemTask(options)).toThrow(message);
    }
    expect(() => wordProblemTask({ minSteps: undefined })).not.toThrow();
    expect(DEFAULT_WORD_PROBLEM_OPTIONS).toEqual(wordProblemDifficultyLevels[1]);
  });

  it('refuses a reference answer that is not a whole number, naming sample.answer', () => {
    const task = wordProblemTask();
    for (const answer of ['2.5', '-3', '', 'twenty', ' 20', '20.0']) {
      expect(() => task.verify({ prompt: 'x', answer }, '20')).toThrow(
        /wordProblemTask: sample.answer must be a whole number written in digits/,
      );
    }
  });
});

/** The verifier's rule, GSM8K's: the last number written equals the answer. */
const VERIFY_CASES: [answer: string, completion: string, score: 0 | 1][] = [
  ['20', '20', 1],
  ['20', 'she has 20 apples.', 1],
  ['20', '3*5=15, 15+5=20. the answer is 20', 1],
  ['20', 'the answer is $20.', 1],
  ['20', '20.', 1],
  ['20', '20.0', 1],
  ['20', '20.00.', 1],
  ['20', ' 20 \n', 1],
  ['20', '25-5=20', 1],
  ['20', 'x=20!', 1],
  ['20', '#### 20', 1],
  ['20', '20 or 21', 0],
  ['20', '', 0],
  ['20', 'twenty', 0],
  ['20', '21', 0],
  ['20', '200', 0],
  ['20', '-20', 0],
  ['20', '20.5', 0],
  ['20', '20.05', 0],
  ['20', '2,0', 0],
  ['20', '2 0', 0],
  ['20', '20 apples, 3 left', 0],
  ['20', '\u0662\u0660', 0], // Arabic-Indic digits are not ASCII digits
  ['20', '20-1', 0],
  ['1200', '1,200', 1],
  ['1200', 'she has $1,200.00.', 1],
  ['1200', '1200', 1],
  ['1200', '1,2000', 0],
  ['1200', '12,00', 0],
  ['1200', '1.200', 0],
  ['5000000', '5,000,000', 1],
  ['0', '0', 1],
  ['0', 'none left: 0.', 1],
  ['0', '0.0', 1],
  ['0', '-0', 1],
  ['0', '', 0],
];

describe('the verifier (last number written equals the answer)', () => {
  const task = wordProblemTask();
  it.each(VERIFY_CASES)('answer %j, completion %j → %d', (answer, completion, score) => {
    expect(task.verify({ prompt: '', answer }, completion)).toBe(score);
  });

  it.each([
    ['the answer is 20.', 20n],
    ['-5 and then -7', -7n],
    ['20-5', 5n],
    ['$1,234,567.000', 1234567n],
    ['1,23', 23n],
    ['2.5', undefined],
    ['no number', undefined],
    ['', undefined],
    ['9'.repeat(40), BigInt('9'.repeat(40))],
  ])('lastNumber(%j) = %s', (text, value) => {
    expect(lastNumber(text)).toBe(value);
  });

  it('never throws, for any text', () => {
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ unit: 'binary' }),
          fc.string({ unit: fc.constantFrom(...'0123456789,.-$ a') }),
        ),
        (text) => {
          expect([0, 1]).toContain(task.verify({ prompt: '', answer: '20' }, text));
        },
      ),
      { numRuns: 500 },
    );
    expect(task.verify({ prompt: '', answer: '7' }, `${'5,'.repeat(50_000)} so 7`)).toBe(1);
    expect(task.verify({ prompt: '', answer: '7' }, '9'.repeat(100_000))).toBe(0);
  });
});
