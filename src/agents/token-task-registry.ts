/**
 * Every token task by name, with its options declared once (a ConfigSpec: meaning, range,
 * whether a running trainer may change it), its defaults, a worked example and its curriculum
 * rungs, so the CLI (`--task=countdown --max-count=4`) and the lab's forms are generated from one
 * place and every option set is validated the same way.
 *
 * Options are `live`: a curriculum moves a running trainer to a harder rung by building a new
 * task between updates (the model's context must still fit the new task's maxChars + 2).
 *
 * The registry stands in src/agents, above src/envs: it lists the agent tasks beside the plain
 * token tasks, so it sits above both kinds.
 */
import {
  additionDifficultyLevels,
  additionTask,
  DEFAULT_ADDITION_OPTIONS,
  type AdditionOptions,
} from '../envs/token-tasks/addition';
import {
  copyDifficultyLevels,
  copyTask,
  DEFAULT_COPY_OPTIONS,
  type CopyOptions,
} from '../envs/token-tasks/copy';
import {
  countdownDifficultyLevels,
  countdownTask,
  DEFAULT_COUNTDOWN_OPTIONS,
  type CountdownOptions,
} from '../envs/token-tasks/countdown';
import {
  DEFAULT_REVERSE_OPTIONS,
  reverseDifficultyLevels,
  reverseTask,
  type ReverseOptions,
} from '../envs/token-tasks/reverse';
import { ALPHABET_PRESETS, type CharsetTask } from '../envs/token-tasks/shared';
import {
  DEFAULT_SORT_OPTIONS,
  sortDifficultyLevels,
  sortTask,
  type SortOptions,
} from '../envs/token-tasks/sort';
import type { TokenTaskSample } from '../envs/token-tasks/types';
import {
  DEFAULT_WORD_PROBLEM_OPTIONS,
  wordProblemDifficultyLevels,
  wordProblemTask,
  type WordProblemOptions,
} from '../envs/token-tasks/word-problems';
import { OpInputError } from '../ops/errors';
import { checkConfig, checkPartial, type ConfigSpec } from '../util/hyperparams';
import { AGENT_ENV_SPEC } from './agent-task';
import {
  DEFAULT_FACTS_OPTIONS,
  factsDifficultyLevels,
  factsTask,
  type FactsOptions,
} from './tasks/facts';
import {
  DEFAULT_MULTIPLY_OPTIONS,
  multiplyDifficultyLevels,
  multiplyTask,
  type MultiplyOptions,
} from './tasks/multiply';
import {
  DEFAULT_SHOPPING_OPTIONS,
  shoppingDifficultyLevels,
  shoppingTask,
  type ShoppingOptions,
} from './tasks/shopping';

/** The options type of each task. */
export interface TokenTaskOptions {
  reverse: ReverseOptions;
  copy: CopyOptions;
  sort: SortOptions;
  addition: AdditionOptions;
  countdown: CountdownOptions;
  wordproblem: WordProblemOptions;
  multiply: MultiplyOptions;
  shopping: ShoppingOptions;
  facts: FactsOptions;
}

export type TokenTaskName = keyof TokenTaskOptions;

/** The tasks in curriculum order (roughly easiest first). */
export const TOKEN_TASK_NAMES: readonly TokenTaskName[] = [
  'copy',
  'reverse',
  'sort',
  'addition',
  'countdown',
  'wordproblem',
  'multiply',
  'shopping',
  'facts',
];

export interface TokenTaskDefinition<O extends object> {
  readonly name: TokenTaskName;
  /** One line for the CLI's help and the lab's task picker. */
  readonly doc: string;
  /** A hand-written prompt → answer pair in the task's format. */
  readonly example: TokenTaskSample;
  /** One entry per option: meaning, range, live. */
  readonly spec: ConfigSpec<O>;
  readonly defaults: Readonly<Required<O>>;
  /** Curriculum rungs, level 0 easiest; each a full option set. */
  readonly difficultyLevels: readonly Readonly<Required<O>>[];
  /**
   * Trainer settings this task needs beyond the algorithms' defaults (the lab's form applies them
   * when the task is picked): agent tasks need room for a call per turn and a longer warm-up.
   * `start` names the shipped model a new run starts from by default: one made for RL on this
   * task (src/models/shipped-manifest.json), so the form's defaults learn visibly. `settings`:
   * per algorithm, the few settings under which a run from that start rises visibly within 20
   * updates (measured by `npm run bench:learn -- --only=defaults`; the algorithms' own defaults
   * stay the frameworks').
   */
  readonly recommended?: {
    readonly maxNewTokens?: number;
    readonly sftSteps?: number;
    readonly start?: string;
    readonly settings?: Readonly<Record<string, Readonly<Record<string, number>>>>;
    /**
     * Where the form's defaults show no clear rise in 20 updates — no start made for RL ships (no
     * `start`), or the task's start does not learn that fast — one sentence for the form, before
     * Create, on what a run with them does (measured by `npm run bench:learn -- --only=defaults`).
     */
    readonly expect?: string;
  };
  /**
   * Validates `options` against `spec` (unknown keys and out-of-range values are OpInputErrors
   * naming the field and range), fills in the defaults and builds the task.
   */
  create(options?: Partial<O>): CharsetTask;
}

const lengthFields = {
  minLength: {
    kind: 'int',
    min: 1,
    max: 32,
    live: true,
    doc: 'shortest string (≤ maxLength)',
  },
  maxLength: {
    kind: 'int',
    min: 1,
    max: 32,
    live: true,
    doc: 'longest string',
  },
  alphabet: {
    kind: 'choice',
    options: ALPHABET_PRESETS,
    live: true,
    doc: 'characters the strings are drawn from',
  },
} as const satisfies ConfigSpec<CopyOptions>;

/** A model turn holds a whole call (`<call>calc(123*456)</call>` is 13 tokens); syntax takes SFT. */
const AGENT_RECOMMENDED = { maxNewTokens: 32, sftSteps: 400 } as const;

/**
 * The copy lessons' settings, for a run from a single-turn start made for RL (copy-noisy,
 * reverse-noisy, sort-noisy, addition-noisy: noisy demonstrations): GRPO two passes over
 * each batch (verl's ppo_epochs 2), 16 prompts and lr 1.5e-3; PPO 128 prompts (GRPO's 128
 * answers); DPO 32 prompts (about 48 pairs an update instead of 12) at its default lr 1e-3.
 */
const NOISY_START_SETTINGS = {
  grpo: { iterations: 2, promptsPerUpdate: 16, lr: 1.5e-3 },
  ppo: { promptsPerUpdate: 128 },
  dpo: { promptsPerUpdate: 32 },
} as const;

function define<O extends object>(
  definition: Omit<TokenTaskDefinition<O>, 'create'>,
  factory: (options: O) => CharsetTask,
): TokenTaskDefinition<O> {
  return {
    ...definition,
    create(options: Partial<O> = {}): CharsetTask {
      const scope = `task ${definition.name}`;
      checkPartial(scope, definition.spec, options, { liveOnly: false });
      const full = { ...definition.defaults } as Required<O>;
      for (const [key, value] of Object.entries(options)) {
        if (value !== undefined) (full as Record<string, unknown>)[key] = value;
      }
      checkConfig(scope, definition.spec, full);
      return factory(full);
    },
  };
}

export const TOKEN_TASKS: {
  readonly [N in TokenTaskName]: TokenTaskDefinition<TokenTaskOptions[N]>;
} = {
  copy: define<CopyOptions>(
    {
      name: 'copy',
      doc: 'repeat the string before the colon',
      example: { prompt: 'abc:', answer: 'abc' },
      spec: lengthFields,
      defaults: DEFAULT_COPY_OPTIONS,
      difficultyLevels: copyDifficultyLevels,
      recommended: {
        start: 'copy-noisy',
        // From copy-noisy (its copies wholly right 30% of the time at every length), 20 updates on
        // seeds 1–10 (CPU, bench:learn --only=defaults): grpo-copy's settings (2 passes over each
        // batch, 16 prompts, lr 1.5e-3) rise 0.21–0.41; PPO with 128 prompts (grpo-copy's sample
        // budget) 0.24–0.40; DPO with 32 prompts (about 48 pairs an update instead of 12) at its
        // default lr 1e-3 0.31–0.38 (at 1.5e-3 seed 6 rose only 0.12, at 2e-3 0.26–0.44); their
        // lr 1e-9 controls −0.05 to +0.04. On the previous copy-noisy start (30% of letters noisy
        // in every answer) GRPO with verl's default ppo_epochs 1 rose 0.19–0.32 and PPO with 32
        // prompts 0.10–0.39; DPO at 8 prompts 0.15–0.36.
        settings: NOISY_START_SETTINGS,
      },
    },
    copyTask,
  ),
  reverse: define<ReverseOptions>(
    {
      name: 'reverse',
      doc: 'write the string before "=" backwards',
      example: { prompt: 'abc=', answer: 'cba' },
      spec: lengthFields,
      defaults: DEFAULT_REVERSE_OPTIONS,
      difficultyLevels: reverseDifficultyLevels,
      recommended: {
        start: 'reverse-noisy',
        // copy's settings from reverse-noisy (made as copy-noisy is, after clean steps), 20
        // updates on seeds 1–5 (CPU, bench:learn --only=defaults --tasks=reverse): GRPO rises
        // 0.30–0.45, PPO 0.24–0.38, DPO 0.41–0.46; their lr 1e-9 controls −0.05 to +0.04
        // (bench/results/learn-2026-12-06T00-04-10-283Z.json).
        settings: NOISY_START_SETTINGS,
      },
    },
    reverseTask,
  ),
  sort: define<SortOptions>(
    {
      name: 'sort',
      doc: 'write the characters before the colon in ascending order',
      example: { prompt: 'cab:', answer: 'abc' },
      spec: lengthFields,
      defaults: DEFAULT_SORT_OPTIONS,
      difficultyLevels: sortDifficultyLevels,
      recommended: {
        start: 'sort-noisy',
        // From sort-noisy, 20 updates on seeds 1–5 (CPU, bench:learn --only=defaults
        // --tasks=sort): GRPO rises 0.36–0.43, PPO 0.35–0.39, DPO 0.40–0.43; their lr 1e-9
        // controls −0.03 to +0.03 (bench/results/learn-2026-12-06T00-24-36-143Z.json).
        settings: NOISY_START_SETTINGS,
      },
    },
    sortTask,
  ),
  addition: define<AdditionOptions>(
    {
      name: 'addition',
      doc: 'add two whole numbers',
      example: { prompt: '12+345=', answer: '357' },
      spec: {
        minDigits: {
          kind: 'int',
          min: 1,
          max: 20,
          live: true,
          doc: 'fewest digits of an operand (≤ maxDigits)',
        },
        maxDigits: { kind: 'int', min: 1, max: 20, live: true, doc: 'most digits of an operand' },
        reverseAnswer: {
          kind: 'boolean',
          live: true,
          doc: 'write the sum least significant digit first (easier for small models)',
        },
      },
      defaults: DEFAULT_ADDITION_OPTIONS,
      difficultyLevels: additionDifficultyLevels,
      recommended: {
        start: 'addition-noisy',
        // From addition-noisy (sums written reversed: a run from it takes that option), 20
        // updates on seeds 1–5 (CPU, bench:learn --only=defaults --tasks=addition): GRPO rises
        // 0.30–0.44, PPO 0.35–0.41, DPO 0.34–0.40; their lr 1e-9 controls −0.05 to +0.04
        // (bench/results/learn-2026-12-06T00-45-50-956Z.json).
        settings: NOISY_START_SETTINGS,
      },
    },
    additionTask,
  ),
  countdown: define<CountdownOptions>(
    {
      name: 'countdown',
      doc: 'reach the target from the given numbers with + - * / and parentheses, each number at most once',
      example: { prompt: '3 5 7>26:', answer: '3*7+5' },
      spec: {
        minCount: {
          kind: 'int',
          min: 2,
          max: 6,
          live: true,
          doc: 'fewest numbers given (≤ maxCount)',
        },
        maxCount: { kind: 'int', min: 2, max: 6, live: true, doc: 'most numbers given' },
        maxValue: {
          kind: 'int',
          min: 1,
          max: 999,
          live: true,
          doc: 'numbers are drawn from 1…maxValue',
        },
        maxTarget: {
          kind: 'int',
          min: 1,
          max: 999,
          live: true,
          doc: 'targets lie in 1…maxTarget (≥ maxValue)',
        },
        operators: {
          kind: 'choice',
          options: ['+', '+-', '+-*', '+-*/'],
          live: true,
          doc: 'operators the targets are built with (the verifier accepts all four)',
        },
      },
      defaults: DEFAULT_COUNTDOWN_OPTIONS,
      difficultyLevels: countdownDifficultyLevels,
      recommended: {
        start: 'countdown',
        settings: NOISY_START_SETTINGS,
        // bench/results/learn-2026-12-07T11-27-26-313Z.json (--tasks=countdown).
        expect:
          'From the shipped countdown start (about one sampled answer in three right, and a ' +
          'right one among 8 for four prompts in five), GRPO with these settings moved success ' +
          'by −0.05 to +0.12 in 20 updates on seeds 1–5, little more than its control at lr ' +
          '1e-9 (−0.06 to +0.04). RL sharpens what a model can already do, and this one cannot ' +
          'yet do the arithmetic most targets need: expect success to stay near its start in a ' +
          'short run.',
      },
    },
    countdownTask,
  ),
  wordproblem: define<WordProblemOptions>(
    {
      name: 'wordproblem',
      doc: 'solve a short arithmetic word problem (GSM8K-style); the last number written is the answer',
      example: {
        prompt:
          'jon has 15 cards. he keeps one of 5 equal shares. his cards double. how many cards does he have now? answer with the number.',
        answer: '6',
      },
      spec: {
        minSteps: {
          kind: 'int',
          min: 1,
          max: 4,
          live: true,
          doc: 'fewest steps between the start and the question (≤ maxSteps)',
        },
        maxSteps: { kind: 'int', min: 1, max: 4, live: true, doc: 'most steps' },
        maxNumber: {
          kind: 'int',
          min: 5,
          max: 999,
          live: true,
          doc: 'largest number written in a problem',
        },
        maxAnswer: {
          kind: 'int',
          min: 5,
          max: 9999,
          live: true,
          doc: 'largest value along the way and answer (≥ maxNumber)',
        },
      },
      defaults: DEFAULT_WORD_PROBLEM_OPTIONS,
      difficultyLevels: wordProblemDifficultyLevels,
      recommended: {
        // bench/results/learn-defaults-2026-12-07T08-41-00Z-log.json (--tasks=wordproblem).
        expect:
          'No start made for RL ships for wordproblem: it is written for instruction-tuned ' +
          'models (train one on "Bring a model"). From a new tiny model, GRPO with these ' +
          'defaults moved +0.01 and −0.02 in 20 updates on seeds 1 and 2, as its control at lr ' +
          '1e-9 did; about 2 minutes a run on a 2-core CPU. Expect no rise here.',
      },
    },
    wordProblemTask,
  ),
  multiply: define<MultiplyOptions>(
    {
      name: 'multiply',
      doc: 'multiply two numbers, with a calculator tool (agent task)',
      example: { prompt: '347*86=', answer: '29842' },
      spec: {
        minDigits: {
          kind: 'int',
          min: 1,
          max: 6,
          live: true,
          doc: 'fewest digits of a factor (≤ maxDigits)',
        },
        maxDigits: { kind: 'int', min: 1, max: 6, live: true, doc: 'most digits of a factor' },
        ...AGENT_ENV_SPEC,
      },
      defaults: DEFAULT_MULTIPLY_OPTIONS,
      difficultyLevels: multiplyDifficultyLevels,
      recommended: { ...AGENT_RECOMMENDED, start: 'multiply' },
    },
    multiplyTask,
  ),
  shopping: define<ShoppingOptions>(
    {
      name: 'shopping',
      doc: 'total a shopping list: look prices up, then calculate (agent task)',
      example: { prompt: '3 candle+2 bolt=', answer: '25' },
      spec: {
        items: { kind: 'int', min: 1, max: 3, live: true, doc: 'distinct items on a list' },
        maxQuantity: {
          kind: 'int',
          min: 1,
          max: 9,
          live: true,
          doc: 'largest quantity of an item (1: quantities are not written)',
        },
        ...AGENT_ENV_SPEC,
      },
      defaults: DEFAULT_SHOPPING_OPTIONS,
      difficultyLevels: shoppingDifficultyLevels,
      recommended: {
        ...AGENT_RECOMMENDED,
        // bench/results/learn-defaults-2026-12-07T08-41-00Z-log.json (--tasks=shopping).
        expect:
          'No start made for RL ships for shopping. From a new model, GRPO with these defaults ' +
          'rose 0.11 in 20 updates on seed 1 (its control at lr 1e-9: 0.01) — short of a clear ' +
          'rise — and took 7 minutes on a 2-core CPU. The tool-use lesson climbs its curriculum ' +
          'instead; expect a slow start here.',
      },
    },
    shoppingTask,
  ),
  facts: define<FactsOptions>(
    {
      name: 'facts',
      doc: 'answer a question by searching a small local document collection (agent task)',
      example: { prompt: 'how deep is lake miro?', answer: '37' },
      spec: {
        documents: {
          kind: 'int',
          min: 1,
          max: 40,
          live: true,
          doc: 'questions are about the first n documents of the collection',
        },
        ...AGENT_ENV_SPEC,
      },
      defaults: DEFAULT_FACTS_OPTIONS,
      difficultyLevels: factsDifficultyLevels,
      recommended: {
        ...AGENT_RECOMMENDED,
        // bench/results/learn-defaults-2026-12-07T08-41-00Z-log.json (--tasks=facts).
        expect:
          'No start made for RL ships for facts. From a new model, GRPO with these defaults rose ' +
          '0.04 in 20 updates on seed 1 — no more than its control at lr 1e-9 — and took 12 ' +
          'minutes on a 2-core CPU (each answer is an episode of searches). Expect a long run ' +
          'before any rise.',
      },
    },
    factsTask,
  ),
};

function isTaskName(name: string): name is TokenTaskName {
  return Object.prototype.hasOwnProperty.call(TOKEN_TASKS, name);
}

/**
 * Builds a task from its name and options as plain data (CLI flags, a run file, the lab's form).
 * An unknown name is an OpInputError listing the known ones.
 */
export function createTokenTask(name: string, options: Record<string, unknown> = {}): CharsetTask {
  if (!isTaskName(name)) {
    throw new OpInputError(
      'createTokenTask',
      'name',
      `must be one of ${TOKEN_TASK_NAMES.map((n) => `'${n}'`).join(', ')}, got '${name}'`,
    );
  }
  const definition = TOKEN_TASKS[name] as TokenTaskDefinition<Record<string, unknown>>;
  return definition.create(options);
}

/** The task `name` at curriculum `level` (0 = easiest). */
export function createTokenTaskAtLevel(name: TokenTaskName, level: number): CharsetTask {
  const definition = TOKEN_TASKS[name] as TokenTaskDefinition<Record<string, unknown>>;
  const levels = definition.difficultyLevels;
  if (!Number.isInteger(level) || level < 0 || level >= levels.length) {
    throw new OpInputError(
      'createTokenTaskAtLevel',
      'level',
      `must be an integer in [0, ${levels.length - 1}] for task '${name}', got ${level}`,
    );
  }
  return definition.create(levels[level]!);
}
