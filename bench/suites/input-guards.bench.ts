/**
 * The guards in front of untrusted input, timed beside the work they save: the JSON depth scan
 * against the JSON.parse it runs before, a nesting bomb refused by a run-file import against
 * JSON.parse reading the same text, an over-long expression refused against a valid one parsed,
 * and `npm run train`'s flag reading. The tests assert what the guards do (where they stop, that
 * JSON.parse never sees a bomb, that no file is opened); how long that takes is measured here,
 * where a loaded machine makes a number slower instead of a test red. CPU only: the GPU of the
 * environment is not used.
 */
import { FlagError } from '../../src/cli/args';
import { readTrainFlags } from '../../src/cli/train-flags';
import { ImportError, parseRunFile } from '../../src/compare/run-file';
import {
  ExpressionError,
  MAX_EXPRESSION_LENGTH,
  parseExpression,
} from '../../src/envs/token-tasks/expression';
import { OpInputError } from '../../src/ops/errors';
import { jsonDepthProblem, MAX_JSON_DEPTH } from '../../src/util/json-depth';
import { runCatalog } from '../../src/worker/run-spec';
import { measure, settleQuietly } from '../core/measure';
import type { BenchContext, BenchSuite, Measurement } from '../core/types';

const REPS = { max: 9, budgetMs: 3000 };
const PARSE = 'JSON.parse';
const SCAN = 'jsonDepthProblem (scan)';

/** What a guard returned or threw, as a string to validate against (never timed apart). */
function outcomeOf(read: () => unknown): string {
  try {
    read();
    return 'accepted';
  } catch (error) {
    return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  }
}

/** One synchronous call per launch, validated once: `error` is 0 when the outcome is right. */
function timeCall(
  ctx: BenchContext,
  impl: string,
  shape: Record<string, number>,
  bytes: number,
  call: () => unknown,
  right: (outcome: string) => boolean,
): Promise<Measurement> {
  return measure({
    impl,
    shape,
    bytes,
    reps: REPS,
    prepare: () => Promise.resolve({ run: () => Promise.resolve(outcomeOf(call)), dispose() {} }),
    error: (outcome) => (right(outcome) ? 0 : 1),
    tolerance: 0,
    log: ctx.log,
  });
}

/** Shallow JSON of about `mb` MB: [[i, "x["], …], brackets in strings that the scan must skip. */
function shallowJson(mb: number): string {
  const rows = Math.round((mb * 2_000_000) / 20);
  return JSON.stringify(Array.from({ length: rows }, (_, i) => [i % 1000, 'x[']));
}

/** A run file's text whose `checkpoint` is {"a":{"a":…}} nested `depth` deep. */
function nestingBomb(depth: number): string {
  return (
    '{"format":"agent-rl-lab/lab-run","checkpoint":' +
    '{"a":'.repeat(depth) +
    '{}' +
    '}'.repeat(depth) +
    '}'
  );
}

/**
 * Flag sets as `npm run train` gets them: the defaults, language-model runs with shapes and
 * warm-ups, environment runs, and refusals (a bad range, an unknown flag, a prototype name).
 */
const FLAG_SETS: readonly (readonly string[])[] = [
  [],
  ['--algo=grpo', '--task=copy', '--updates=50', '--seed=3'],
  ['--algo=ppo', '--task=reverse', '--sft-steps=100', '--backend=cpu', '--positions=rotary'],
  ['--algo=dpo', '--task=copy', '--log-every=5'],
  ['--algo=q-learning', '--env=cliffwalking', '--updates=200'],
  ['--algo=ppo-mlp', '--env=cartpole', '--out=run.json'],
  ['--algo=grpo', '--updates=-5'],
  ['--algo=sarsa', '--seed=0.5'],
  ['--algo=grpo', '--task=copy', '--nope=1'],
  ['--constructor=1'],
];

/** "1+1+…+1" within the length bound, and one far past it. */
const LONGEST = '1' + '+1'.repeat((MAX_EXPRESSION_LENGTH - 1) / 2);
const HUGE = '1+'.repeat(100_000) + '1';

/** Characters of every flag set together: the shape of the readTrainFlags row. */
const FLAG_CHARS = FLAG_SETS.flat().join(' ').length;

function flagSetsOnce(): string {
  let accepted = 0;
  for (const argv of FLAG_SETS) {
    try {
      readTrainFlags(argv);
      accepted++;
    } catch (error) {
      if (!(error instanceof FlagError || error instanceof OpInputError)) throw error;
    }
  }
  return `${accepted} accepted`;
}

async function run(ctx: BenchContext): Promise<Measurement[]> {
  const quick = ctx.options.quick;
  const out: Measurement[] = [];

  // The depth scan beside the parse it guards, on shallow JSON it lets through.
  const mb = quick ? 2 : 20;
  const shallow = shallowJson(mb);
  const shallowShape = { chars: shallow.length };
  await settleQuietly(ctx);
  out.push(
    await timeCall(
      ctx,
      PARSE,
      shallowShape,
      shallow.length,
      () => JSON.parse(shallow),
      (o) => o === 'accepted',
    ),
    await timeCall(
      ctx,
      SCAN,
      shallowShape,
      shallow.length,
      () => {
        if (jsonDepthProblem(shallow) !== undefined) throw new Error('refused shallow JSON');
      },
      (o) => o === 'accepted',
    ),
  );

  // A nesting bomb: the import's refusal (the scan stops at level 65) beside JSON.parse reading
  // the whole of it, which is what the import would cost without the scan.
  const depth = quick ? 200_000 : 2_000_000;
  const bomb = nestingBomb(depth);
  const bombShape = { chars: bomb.length };
  const catalog = runCatalog();
  const refused = `${ImportError.name}: (file): nests deeper than ${MAX_JSON_DEPTH}`;
  await settleQuietly(ctx);
  out.push(
    await timeCall(
      ctx,
      PARSE,
      bombShape,
      bomb.length,
      () => JSON.parse(bomb),
      // A JSON.parse that runs out of stack on it is recorded as such, not timed.
      (o) => o === 'accepted',
    ),
    await timeCall(
      ctx,
      'parseRunFile (refusal)',
      bombShape,
      bomb.length,
      () => parseRunFile(bomb, catalog),
      (o) => o.startsWith(refused),
    ),
  );

  // An expression past the length bound, refused by its length, beside one of the longest
  // accepted expressions parsed in full.
  await settleQuietly(ctx);
  out.push(
    await timeCall(
      ctx,
      'parseExpression (longest accepted)',
      { chars: LONGEST.length },
      LONGEST.length,
      () => parseExpression(LONGEST),
      (o) => o === 'accepted',
    ),
    await timeCall(
      ctx,
      'parseExpression (too long: refusal)',
      { chars: HUGE.length },
      HUGE.length,
      () => parseExpression(HUGE),
      (o) => o.startsWith(`${ExpressionError.name}: expression: longer than`),
    ),
  );

  // The train CLI's flags, read and checked before any model is built.
  await settleQuietly(ctx);
  out.push(
    await timeCall(
      ctx,
      'readTrainFlags',
      { chars: FLAG_CHARS },
      FLAG_CHARS,
      flagSetsOnce,
      (o) => o === 'accepted',
    ),
  );
  return out;
}

export const inputGuardsSuite: BenchSuite = {
  name: 'input-guards',
  run: async (ctx) => ({
    suite: 'input-guards',
    title: 'input guards: refusals of untrusted input beside the work they save (CPU)',
    notes: [
      `${SCAN} beside ${PARSE} on shallow JSON ([i, "x["] rows; 20 MB, 2 with --quick): one pass over the characters against the parse it runs before.`,
      `parseRunFile (refusal) beside ${PARSE} on a run file whose checkpoint nests {"a":…} 2e6 deep (2e5 with --quick): the import stops at level ${MAX_JSON_DEPTH + 1}; a failed ${PARSE} row means the parse itself gave out (its reason says how).`,
      `parseExpression: one of the LONGEST expressions accepted (${LONGEST.length} characters of at most ${MAX_EXPRESSION_LENGTH}) parsed in full, and a ${HUGE.length.toLocaleString('en')}-character one refused by its length.`,
      `readTrainFlags: one pass over ${FLAG_SETS.length} flag sets (accepted and refused), ms for all of them.`,
      'Every row is one synchronous call per repetition on the CPU, validated once (the right result or refusal) before it is timed. The shape is the input in characters; GB/s counts them as bytes; the ratio is to JSON.parse on the same text.',
    ],
    baseline: PARSE,
    measurements: await run(ctx),
  }),
};
