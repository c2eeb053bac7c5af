/**
 * Word problems: short grade-school arithmetic stories in the spirit of GSM8K, generated here
 * (nothing is downloaded). A person starts with a quantity, 1–4 steps change it, and the question
 * asks for the result:
 *
 *   "mia has 12 marbles. she buys 3 bags of 6 marbles. she keeps one of 5 equal shares. how many
 *    marbles does she have now? answer with the number." → "6"
 *
 * Three scenario frames vary the text: things a person owns, dollars earned and spent, and pages
 * left to read. Step kinds: a gain, a loss, a gain or loss of equal groups (bags of marbles, cups
 * sold at a price, pages a day for some days), doubling or tripling, and keeping one of k equal
 * shares. Every value along the way is a whole number in [0, maxAnswer] by construction: a step
 * draws its numbers inside the room the current value leaves, a kind that cannot fit is drawn
 * again a bounded number of times, then a gain or loss that always fits is taken.
 *
 * The text is lowercase ASCII without '<' (the small models' character tokenizer has no capital
 * letters, and special tokens start with '<'). Answer: the number alone. The verifier follows
 * GSM8K's convention: a completion scores 1 when the last number written in it equals the answer,
 * so worked reasoning before the result ("3*6=18, 12+18=30, 30/5=6. the answer is 6") also
 * scores 1.
 */
import { OpInputError } from '../../ops/errors';
import { checkInt } from '../../ops/validate';
import { randomInt, withDefaults, type CharsetTask } from './shared';
import type { TokenTaskSample } from './types';

export interface WordProblemOptions {
  /** Fewest steps between the start and the question, 1 ≤ minSteps ≤ maxSteps. Default 1. */
  minSteps?: number;
  /** Most steps, ≤ 4 (the prompt must fit the small models' context). Default 2. */
  maxSteps?: number;
  /** Every number written in a problem is ≤ this, 5 ≤ maxNumber ≤ 999. Default 20. */
  maxNumber?: number;
  /**
   * Every value along the way, and the answer, is ≤ this, maxNumber ≤ maxAnswer ≤ 9999.
   * Default 100.
   */
  maxAnswer?: number;
}

export const DEFAULT_WORD_PROBLEM_OPTIONS: Readonly<Required<WordProblemOptions>> = Object.freeze({
  minSteps: 1,
  maxSteps: 2,
  maxNumber: 20,
  maxAnswer: 100,
});

/** Curriculum rungs, easiest first: more steps, bigger numbers and results. */
export const wordProblemDifficultyLevels: readonly Readonly<Required<WordProblemOptions>>[] = [
  { minSteps: 1, maxSteps: 1, maxNumber: 10, maxAnswer: 20 },
  { minSteps: 1, maxSteps: 2, maxNumber: 20, maxAnswer: 100 },
  { minSteps: 2, maxSteps: 3, maxNumber: 50, maxAnswer: 500 },
  { minSteps: 3, maxSteps: 4, maxNumber: 99, maxAnswer: 999 },
];

/** Characters an answer is written in. */
export const WORD_PROBLEM_ANSWER_CHARS = '0123456789';

/** Closes every prompt, so a chat model knows to end with the number. */
export const WORD_PROBLEM_INSTRUCTION = ' answer with the number.';

/** Draws of a step kind per step before the always-fitting fallback. */
const ATTEMPTS = 20;

/** Most groups in a groups step and most shares in a share step: small multipliers. */
const MAX_FACTOR = 9;

/**
 * A number: an optional '-' (a sign only when no digit stands right before it, so "20-5" ends
 * with 5), digits with optional thousands commas ("1,200"), an optional decimal part. A '.' with
 * no digit after it ends a sentence and is not part of the number. Only ASCII digits count.
 */
const NUMBER = /(?:(?<![0-9])(-))?([0-9]{1,3}(?:,[0-9]{3})+(?![0-9])|[0-9]+)(?:\.([0-9]+))?/g;

/**
 * The last number written in `text` ("3*6=18, 12+18=30. the answer is $30." → 30n), or
 * undefined when there is none or the last one is not whole ("2.5"; "2.50" is not, "2.00" is:
 * a zero decimal part counts as whole). Never throws.
 */
export function lastNumber(text: string): bigint | undefined {
  let last: RegExpExecArray | undefined;
  for (const match of String(text).matchAll(NUMBER)) last = match;
  if (!last) return undefined;
  const [, sign, digits, fraction] = last;
  if (fraction !== undefined && /[1-9]/.test(fraction)) return undefined;
  const value = BigInt(digits!.replace(/,/g, ''));
  return sign ? -value : value;
}

/** The words a problem is written with (one draw of each per problem). */
interface Words {
  name: string;
  /** Subject, possessive and object pronouns. */
  he: string;
  his: string;
  him: string;
  item: string;
  container: string;
  relative: string;
  thing: string;
  things: string;
}

const PEOPLE: readonly (readonly [name: string, female: boolean])[] = [
  ['ana', true],
  ['ben', false],
  ['cal', false],
  ['dee', true],
  ['eli', false],
  ['fay', true],
  ['gus', false],
  ['ivy', true],
  ['jon', false],
  ['kim', true],
  ['leo', false],
  ['mia', true],
  ['ned', false],
  ['ola', true],
  ['raj', false],
  ['sam', false],
  ['tia', true],
  ['uma', true],
  ['zed', false],
  ['zoe', true],
];
const ITEMS = [
  'apples',
  'beads',
  'cards',
  'coins',
  'marbles',
  'pens',
  'rocks',
  'shells',
  'stamps',
  'stickers',
] as const;
const CONTAINERS = ['bags', 'boxes', 'packs'] as const;
const RELATIVES = ['brother', 'sister', 'friend', 'cousin'] as const;
/** Priced things, singular and plural. */
const THINGS = [
  ['book', 'books'],
  ['cup', 'cups'],
  ['hat', 'hats'],
  ['kite', 'kites'],
  ['pen', 'pens'],
  ['toy', 'toys'],
] as const;

const pick = <T>(random: () => number, list: readonly T[]): T =>
  list[randomInt(random, 0, list.length - 1)]!;

function drawWords(random: () => number): Words {
  const [name, female] = pick(random, PEOPLE);
  const [thing, things] = pick(random, THINGS);
  return {
    name,
    he: female ? 'she' : 'he',
    his: female ? 'her' : 'his',
    him: female ? 'her' : 'him',
    item: pick(random, ITEMS),
    container: pick(random, CONTAINERS),
    relative: pick(random, RELATIVES),
    thing,
    things,
  };
}

const longest = (list: readonly string[]): string =>
  list.reduce((a, b) => (b.length > a.length ? b : a), '');

/** Every slot at its longest value: text written with these is at least as long as any real one. */
const LONGEST_WORDS: Words = {
  name: longest(PEOPLE.map(([name]) => name)),
  he: 'she',
  his: 'her',
  him: 'her',
  item: longest(ITEMS),
  container: longest(CONTAINERS),
  relative: longest(RELATIVES),
  thing: longest(THINGS.map(([one]) => one)),
  things: longest(THINGS.map(([, many]) => many)),
};

interface Limits {
  maxNumber: number;
  maxAnswer: number;
}

/** A step's result and the numbers its text writes, in the text's order. */
interface Drawn {
  value: number;
  numbers: number[];
}

/** How a step changes the value x; undefined when no step of this kind fits x. */
type Arithmetic = (random: () => number, x: number, limits: Limits) => Drawn | undefined;

/** Add 2…maxNumber, staying ≤ maxAnswer. */
const gain: Arithmetic = (random, x, { maxNumber, maxAnswer }) => {
  const room = Math.min(maxNumber, maxAnswer - x);
  if (room < 2) return undefined;
  const a = randomInt(random, 2, room);
  return { value: x + a, numbers: [a] };
};

/** Take away 2…maxNumber, staying ≥ 0. */
const loss: Arithmetic = (random, x, { maxNumber }) => {
  const room = Math.min(maxNumber, x);
  if (room < 2) return undefined;
  const a = randomInt(random, 2, room);
  return { value: x - a, numbers: [a] };
};

/** g groups of k each (2 ≤ g ≤ 9, k ≥ 2), added or taken away. */
function groups(sign: 1 | -1): Arithmetic {
  return (random, x, { maxNumber, maxAnswer }) => {
    const g = randomInt(random, 2, Math.min(MAX_FACTOR, maxNumber));
    const room = sign > 0 ? maxAnswer - x : x;
    const k = Math.min(maxNumber, Math.floor(room / g));
    if (k < 2) return undefined;
    const size = randomInt(random, 2, k);
    return { value: x + sign * g * size, numbers: [g, size] };
  };
}

/** Double or triple (written as a word, so `numbers` holds the factor, not a written number). */
const multiply: Arithmetic = (random, x, { maxAnswer }) => {
  const factor = randomInt(random, 2, 3);
  if (x < 1 || x * factor > maxAnswer) return undefined;
  return { value: x * factor, numbers: [factor] };
};

/** Keep one of k equal shares, for a k in 2…9 that divides x exactly. */
const share: Arithmetic = (random, x, { maxNumber }) => {
  const ks: number[] = [];
  for (let k = 2; k <= Math.min(MAX_FACTOR, maxNumber); k++) if (x >= k && x % k === 0) ks.push(k);
  if (ks.length === 0) return undefined;
  const k = pick(random, ks);
  return { value: x / k, numbers: [k] };
};

type Text = (w: Words, n: readonly number[]) => string;

interface StepKind {
  arithmetic: Arithmetic;
  /** Ways to write the step (one is drawn after the numbers). */
  texts: readonly Text[];
}

interface Frame {
  start: Text;
  question: Text;
  /** The fallback needs `gain` and `loss` to be among these. */
  steps: readonly StepKind[];
  gain: StepKind;
  loss: StepKind;
}

const times = (f: number, two: string, three: string) => (f === 2 ? two : three);

function frame(
  start: Text,
  question: Text,
  gainKind: StepKind,
  lossKind: StepKind,
  others: StepKind[],
): Frame {
  return {
    start,
    question,
    steps: [gainKind, lossKind, ...others],
    gain: gainKind,
    loss: lossKind,
  };
}

const shareKind: StepKind = {
  arithmetic: share,
  texts: [(w, [k]) => `${w.he} keeps one of ${k} equal shares.`],
};

/** Things a person owns. */
const ITEMS_FRAME = frame(
  (w, [n]) => `${w.name} has ${n} ${w.item}.`,
  (w) => `how many ${w.item} does ${w.he} have now?`,
  {
    arithmetic: gain,
    texts: [(w, [a]) => `${w.he} buys ${a} more.`, (w, [a]) => `${w.he} finds ${a} more.`],
  },
  {
    arithmetic: loss,
    texts: [
      (w, [a]) => `${w.he} loses ${a}.`,
      (w, [a]) => `${w.he} gives ${a} to ${w.his} ${w.relative}.`,
    ],
  },
  [
    {
      arithmetic: groups(1),
      texts: [(w, [g, k]) => `${w.he} buys ${g} ${w.container} of ${k} ${w.item}.`],
    },
    {
      arithmetic: multiply,
      texts: [(w, [f]) => `${w.his} ${w.item} ${times(f!, 'double', 'triple')}.`],
    },
    shareKind,
  ],
);

/** Dollars earned and spent on priced things. */
const MONEY_FRAME = frame(
  (w, [n]) => `${w.name} has $${n}.`,
  (w) => `how many dollars does ${w.he} have now?`,
  {
    arithmetic: gain,
    texts: [(w, [a]) => `${w.he} earns $${a}.`, (w, [a]) => `${w.his} aunt gives ${w.him} $${a}.`],
  },
  { arithmetic: loss, texts: [(w, [a]) => `${w.he} spends $${a} on a ${w.thing}.`] },
  [
    {
      arithmetic: groups(1),
      texts: [(w, [g, k]) => `${w.he} sells ${g} ${w.things} for $${k} each.`],
    },
    {
      arithmetic: groups(-1),
      texts: [(w, [g, k]) => `${w.he} buys ${g} ${w.things} for $${k} each.`],
    },
    {
      arithmetic: multiply,
      texts: [(w, [f]) => `${w.his} money ${times(f!, 'doubles', 'triples')}.`],
    },
    shareKind,
  ],
);

/** Pages left to read in a book. */
const PAGES_FRAME = frame(
  (w, [n]) => `${w.name} has ${n} pages left to read.`,
  () => `how many pages are left to read?`,
  { arithmetic: gain, texts: [(w, [a]) => `${w.his} teacher adds ${a} pages.`] },
  { arithmetic: loss, texts: [(w, [a]) => `${w.he} reads ${a} pages.`] },
  [
    {
      arithmetic: groups(-1),
      texts: [(w, [g, k]) => `${w.he} reads ${k} a day for ${g} days.`],
    },
  ],
);

const FRAMES: readonly Frame[] = [ITEMS_FRAME, MONEY_FRAME, PAGES_FRAME];

/** One step from x: a kind that fits, or after ATTEMPTS misses a gain or a loss (one always fits). */
function drawStep(random: () => number, f: Frame, x: number, limits: Limits): [StepKind, Drawn] {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const kind = pick(random, f.steps);
    const drawn = kind.arithmetic(random, x, limits);
    if (drawn) return [kind, drawn];
  }
  // maxAnswer ≥ maxNumber ≥ 5: if x + 2 > maxAnswer then x ≥ 4, so a loss of 2 fits.
  const kind = x + 2 <= limits.maxAnswer ? f.gain : f.loss;
  return [kind, kind.arithmetic(random, x, limits)!];
}

/** The longest text any of `texts` writes with numbers ≤ maxNumber. */
function longestText(texts: readonly Text[], maxNumber: number): number {
  return Math.max(...texts.map((t) => t(LONGEST_WORDS, [maxNumber, maxNumber]).length));
}

export function wordProblemTask(options: WordProblemOptions = {}): CharsetTask {
  const o = withDefaults(DEFAULT_WORD_PROBLEM_OPTIONS, options);
  checkInt('wordProblemTask', 'maxSteps', o.maxSteps, 1, 4);
  checkInt('wordProblemTask', 'minSteps', o.minSteps, 1, o.maxSteps);
  checkInt('wordProblemTask', 'maxNumber', o.maxNumber, 5, 999);
  checkInt('wordProblemTask', 'maxAnswer', o.maxAnswer, o.maxNumber, 9999);
  const { minSteps, maxSteps, maxNumber, maxAnswer } = o;
  const limits: Limits = { maxNumber, maxAnswer };

  // Every slot at its longest and every number at maxNumber's digit count bounds any prompt.
  const promptChars = Math.max(
    ...FRAMES.map(
      (f) =>
        longestText([f.start], maxNumber) +
        maxSteps *
          (1 +
            longestText(
              f.steps.flatMap((k) => k.texts),
              maxNumber,
            )) +
        1 +
        longestText([f.question], maxNumber),
    ),
  );

  return {
    name: `wordproblem(${minSteps}–${maxSteps} steps, numbers ≤ ${maxNumber}, answers ≤ ${maxAnswer})`,
    maxChars: promptChars + WORD_PROBLEM_INSTRUCTION.length + String(maxAnswer).length,
    answerChars: WORD_PROBLEM_ANSWER_CHARS,
    sample(random: () => number): TokenTaskSample {
      const f = pick(random, FRAMES);
      const w = drawWords(random);
      const count = randomInt(random, minSteps, maxSteps);
      let x = randomInt(random, 2, maxNumber);
      const sentences = [f.start(w, [x])];
      for (let i = 0; i < count; i++) {
        const [kind, drawn] = drawStep(random, f, x, limits);
        sentences.push(pick(random, kind.texts)(w, drawn.numbers));
        x = drawn.value;
      }
      sentences.push(f.question(w, []));
      return { prompt: sentences.join(' ') + WORD_PROBLEM_INSTRUCTION, answer: String(x) };
    },
    verify(sample: TokenTaskSample, completion: string): number {
      const answer = sample.answer;
      if (typeof answer !== 'string' || !/^[0-9]+$/.test(answer)) {
        throw new OpInputError(
          'wordProblemTask',
          'sample.answer',
          `must be a whole number written in digits, got ${JSON.stringify(answer)}`,
        );
      }
      return lastNumber(completion) === BigInt(answer) ? 1 : 0;
    },
  };
}
