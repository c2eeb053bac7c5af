/**
 * A retained task: a second task whose skill an RL run should keep while it trains on its own.
 * RL on one narrow task moves weights every task shares, and what the warm-up taught elsewhere
 * can fade (the "alignment tax" of InstructGPT, arXiv:2203.02155). Two settings act on it, both
 * off by default:
 *
 *   retainedEvalPrompts  after every update, greedy success on that many fixed prompts of the
 *                        retained task (`retained/success_rate`): the forgetting curve. The prompts
 *                        are the same at every update, so the curve moves only with the weights.
 *   ptxCoef, ptxBatch    InstructGPT's PPO-ptx (OpenRLHF `ptx_coef`): every optimizer step also
 *                        takes the supervised loss on `ptxBatch` demonstrations of the retained task,
 *
 *                          L = L_RL + ptxCoef · L_ptx,   L_ptx = −Σ m·log π(y) / Σ m
 *
 *                        (token mean over the demonstrations' trained tokens, as SFT takes it).
 *
 * The demonstration rows join the RL rows in one forward and one backward pass: the models score
 * and back-propagate a batch at a time, so the sum of the two gradients goes through one clip and
 * one AdamW step, as OpenRLHF adds the ptx loss's gradient before its optimizer step. Both parts are
 * scored at the rollout temperature (one pass, one temperature); at temperature 1, the default,
 * L_ptx is exactly the SFT loss. Demonstrations are drawn from a stream keyed by (seed, update,
 * optimizer step), so a resumed run draws the same ones without a checkpointed random state.
 */
import type { TokenTask } from '../envs/token-tasks/types';
import type { LanguageModel } from '../models/language-model';
import type { CharTokenizer } from '../models/tokenizer';
import type { Tokenizer } from '../models/tokenizer-api';
import { OpInputError } from '../ops/errors';
import { counterHash } from '../util/counter-rng';
import type { ConfigSpec } from '../util/hyperparams';
import { seededRandom } from '../util/random';
import { charTokenizerFor, evaluateTask } from './evaluate';
import type { SequenceBatch } from '../models/sequence-batch';
import { sftBatch } from './sft';

export interface RetainedConfig {
  ptxCoef: number;
  ptxBatch: number;
  retainedEvalPrompts: number;
}

export const RETAINED_CONFIG_SPEC: ConfigSpec<RetainedConfig> = {
  ptxCoef: {
    kind: 'number',
    min: 0,
    max: 10,
    live: true,
    doc: 'Weight of the supervised (ptx) loss on demonstrations of the retained task, added to every optimizer step (0 = off)',
    framework: 'OpenRLHF: ptx_coef (with pretrain_data); InstructGPT PPO-ptx γ',
  },
  ptxBatch: {
    kind: 'int',
    min: 1,
    max: 256,
    live: true,
    doc: 'Demonstrations of the retained task per optimizer step when ptxCoef > 0',
    framework: 'OpenRLHF: the pretrain data micro-batch',
  },
  retainedEvalPrompts: {
    kind: 'int',
    min: 0,
    max: 256,
    live: true,
    doc: 'Fixed prompts of the retained task answered greedily after every update: retained/success_rate (0 = off)',
  },
};

export const DEFAULT_RETAINED_CONFIG: RetainedConfig = {
  ptxCoef: 0,
  ptxBatch: 8,
  retainedEvalPrompts: 0,
};

/** The retained task's prompts for retained/success_rate: one fixed draw for the whole run. */
const RETAINED_EVAL_SEED = 20_261_203;
/** Keeps the demonstration stream apart from the rollouts' (counterHash(seed, step, round)). */
const PTX_SALT = 0x5f3a_91c7;

/** Throws unless the settings that use a retained task have one, and its rows fit the model. */
export function checkRetained(
  config: RetainedConfig,
  retained: TokenTask | undefined,
  context: number,
  op: string,
): void {
  if (!retained) {
    for (const field of ['ptxCoef', 'retainedEvalPrompts'] as const) {
      if (config[field] > 0) {
        throw new OpInputError(op, field, 'needs a retained task in the run (none was given)');
      }
    }
    return;
  }
  if (retainedRowLength(retained) > context) {
    throw new OpInputError(
      op,
      'retained',
      `${retained.name} needs rows of ${retainedRowLength(retained)} tokens, the model's context is ${context}`,
    );
  }
}

/** Tokens a row must hold for any demonstration of `task` (its text, <bos> and <eos>). */
export function retainedRowLength(task: TokenTask): number {
  return task.maxChars + 2;
}

/**
 * A (rows, T) batch of RL rows joined by ptx demonstrations. The policy step (src/rl/policy-step.ts)
 * gives the demonstration rows the ptx term's gradient −coef·m/Σm and nothing else.
 */
export interface PtxMix {
  tokens: Int32Array;
  targets: Int32Array;
  /** RL rows + demonstration rows. */
  rows: number;
  /** ((rows − RL rows)·T) 0/1: the demonstrations' answer tokens. */
  mask: Float32Array;
}

/** Where in a run a ptx batch is drawn: `key` numbers the optimizer step within the update. */
export interface PtxDraw {
  seed: number;
  step: number;
  key: number;
}

/** The `count` demonstrations (count, seq) of `retained` that the optimizer step `at` trains on. */
export function ptxDemonstrations(
  retained: TokenTask,
  tokenizer: CharTokenizer,
  count: number,
  seq: number,
  at: PtxDraw,
): SequenceBatch {
  const random = seededRandom(counterHash(at.seed ^ PTX_SALT, at.step, at.key));
  const samples = Array.from({ length: count }, () => retained.sample(random));
  return sftBatch(tokenizer, retained, samples, seq);
}

/**
 * The RL rows (B, T) with `ptxBatch` demonstrations of `retained` appended, or undefined when
 * ptx is off. `at.key` numbers this optimizer step within the update (iteration, minibatch).
 */
export function mixPtx(
  retained: TokenTask | undefined,
  tokenizer: Tokenizer,
  config: RetainedConfig,
  rl: { tokens: Int32Array; targets: Int32Array; rows: number; seq: number },
  at: PtxDraw,
): PtxMix | undefined {
  if (!retained || config.ptxCoef === 0) return undefined;
  const { rows: B, seq: T } = rl;
  const chars = charTokenizerFor(tokenizer, 'ptx', 'ptxCoef > 0');
  const demos = ptxDemonstrations(retained, chars, config.ptxBatch, T, at);
  const tokens = new Int32Array((B + demos.batch) * T);
  tokens.set(rl.tokens);
  tokens.set(demos.tokens, B * T);
  const targets = new Int32Array((B + demos.batch) * T);
  targets.set(rl.targets);
  targets.set(demos.targets, B * T);
  return { tokens, targets, rows: B + demos.batch, mask: demos.mask };
}

/** retained/success_rate: greedy success on the retained task's fixed prompts ({} when off). */
export async function retainedMetrics(
  policy: LanguageModel,
  tokenizer: Tokenizer,
  retained: TokenTask | undefined,
  config: RetainedConfig,
): Promise<Record<string, number>> {
  if (!retained || config.retainedEvalPrompts === 0) return {};
  const evaluation = await evaluateTask(policy, tokenizer, retained, {
    samples: config.retainedEvalPrompts,
    seed: RETAINED_EVAL_SEED,
  });
  return { 'retained/success_rate': evaluation.successRate };
}
