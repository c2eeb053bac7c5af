/**
 * A policy step with every loss term on, for the host specification's tests and for the GPU
 * parity tests: B RL rows of random tokens with a random answer mask, random advantages, a
 * behaviour and a reference policy a little away from the model, a value term, an entropy bonus,
 * and P demonstration rows of addition for the ptx term.
 */
import { additionTask } from '../../src/envs/token-tasks/addition';
import type { LanguageModel } from '../../src/models/language-model';
import { CharTokenizer } from '../../src/models/tokenizer';
import type { TransformerConfig } from '../../src/models/transformer-config';
import { transformerLayout } from '../../src/models/transformer-params';
import type { PolicyStepRequest } from '../../src/rl/policy-step';
import { ptxDemonstrations } from '../../src/rl/retained-task';
import type { SequenceBatch } from '../../src/models/sequence-batch';
import { randomLogits, seededRandom } from './random';

export const stepTokenizer = CharTokenizer.createDefault();

export const STEP_SEQ = 10;

export const stepConfig: TransformerConfig = {
  vocab: stepTokenizer.vocabSize,
  context: STEP_SEQ,
  width: 32,
  layers: 2,
  heads: 4,
  tiedEmbeddings: true,
  valueHead: true,
};

/** Initial weights plus noise, so that nothing is at a symmetric point. */
export function stepParams(seed: number, config: TransformerConfig = stepConfig): Float32Array {
  const layout = transformerLayout(config);
  const params = layout.initialize<Float32Array>(seed);
  const noise = randomLogits(layout.total, 0.1, seed + 1);
  for (let i = 0; i < params.length; i++) params[i]! += noise[i]!;
  return params;
}

export interface StepFixture {
  request: PolicyStepRequest;
  /** The demonstration rows of the ptx term. */
  demos: SequenceBatch;
}

/**
 * B = rows RL rows and `demos` demonstration rows, every term on. The behaviour and reference
 * log-probs are the model's own (scored here) plus noise of ±0.3, so that some ratios clip.
 */
export async function fullStep(
  model: LanguageModel,
  rows: number,
  demos: number,
): Promise<StepFixture> {
  const T = STEP_SEQ;
  const n = rows * T;
  const next = seededRandom(11);
  const demoBatch = ptxDemonstrations(
    additionTask({ minDigits: 1, maxDigits: 2 }),
    stepTokenizer,
    demos,
    T,
    { seed: 5, step: 1, key: 0 },
  );
  const vocab = stepConfig.vocab;
  const tokens = new Int32Array((rows + demos) * T);
  const targets = new Int32Array((rows + demos) * T);
  for (let i = 0; i < n; i++) {
    tokens[i] = Math.floor(next() * vocab);
    targets[i] = Math.floor(next() * vocab);
  }
  tokens.set(demoBatch.tokens, n);
  targets.set(demoBatch.targets, n);
  // The answer: each row's last 4–9 positions.
  const mask = new Float32Array(n);
  for (let r = 0; r < rows; r++) {
    const start = 1 + Math.floor(next() * 6);
    for (let t = start; t < T; t++) mask[r * T + t] = 1;
  }
  const temperature = 0.9;
  const scored = await model.scoreTokens(tokens, targets, rows + demos, T, temperature);
  const logp = scored.logp.subarray(0, n);
  const jitter = () => (next() - 0.5) * 0.6;
  const request: PolicyStepRequest = {
    tokens,
    targets,
    rows,
    seq: T,
    temperature,
    mask,
    advantages: Float32Array.from({ length: n }, () => (next() - 0.5) * 2),
    oldLogp: logp.map((x) => x + jitter()),
    policyLoss: { clipLow: 0.2, clipHigh: 0.28, dualClip: 3, aggregation: 'seq-mean-token-mean' },
    aggregation: { mode: 'seq-mean-token-mean' },
    kl: { refLogp: logp.map((x) => x + jitter()), coef: 0.1, options: { estimator: 'k3' } },
    entropyCoef: 0.01,
    value: {
      oldValues: Float32Array.from({ length: n }, () => next() - 0.5),
      returns: Float32Array.from({ length: n }, () => next() * 2 - 1),
      coef: 0.5,
      options: { cliprangeValue: 0.2 },
    },
    ptx: { mask: demoBatch.mask, coef: 0.7 },
    optimizer: { lr: 1e-3, weightDecay: 0.01, maxGradNorm: 1 },
  };
  return { request, demos: demoBatch };
}
