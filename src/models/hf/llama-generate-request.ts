/**
 * The lab's generation contract (models/generate.ts: rows of length L — prompt, generated ids,
 * padding — with each generated token's log-prob and a mask) on the Llama family's KV-cached
 * samplers, CPU (llama-cpu-generate.ts) and GPU (llama-gpu-generate.ts) alike: each row's budget is
 * min(maxNewTokens, L − its prompt); rows of equal budget are generated as one batch, seeded by
 * (seed, budget).
 */
import { checkSampleOptions } from '../../ops/nn/sample';
import { checkInt } from '../../ops/validate';
import type { GenerateRequest, Generation } from '../generate';
import type { ModelSpec } from '../model-spec';

/** What one batch of equal budgets asks of a sampler. */
export interface BudgetBatchOptions {
  maxNewTokens: number;
  temperature: number;
  topK: number;
  topP: number;
  stopIds: readonly number[];
  seed: number;
}

/** A sampler's answer for the prompts it was given, in order. */
export interface BudgetBatch {
  tokens: readonly Int32Array[];
  logprobs: readonly Float32Array[];
}

export async function generateByBudget(
  op: string,
  spec: ModelSpec,
  request: GenerateRequest,
  sample: (
    prompts: Int32Array[],
    options: BudgetBatchOptions,
  ) => Promise<BudgetBatch> | BudgetBatch,
): Promise<Generation> {
  const { prompts, maxLength: L } = request;
  const B = prompts.length;
  checkInt(op, 'prompts.length', B, 1, 4096);
  checkInt(op, 'maxLength', L, 2, spec.context);
  checkInt(op, 'maxNewTokens', request.maxNewTokens, 1, L - 1);
  checkInt(op, 'padToken', request.padToken, 0, spec.vocab - 1);
  checkInt(op, 'seed', request.seed, 0, 2 ** 32 - 1);
  const sampling = checkSampleOptions(request.sampling);
  const budgets = prompts.map((prompt, b) => {
    checkInt(op, `prompts[${b}].length`, prompt.length, 1, L - 1);
    return Math.min(request.maxNewTokens, L - prompt.length);
  });
  const tokens = new Int32Array(B * L).fill(request.padToken);
  const logprobs = new Float32Array(B * L);
  const mask = new Float32Array(B * L);
  const promptLengths = Int32Array.from(prompts, (p) => p.length);
  for (const budget of new Set(budgets)) {
    const rows = budgets.flatMap((n, b) => (n === budget ? [b] : []));
    const out = await sample(
      rows.map((b) => prompts[b]!),
      {
        maxNewTokens: budget,
        temperature: sampling.temperature,
        topK: sampling.topK,
        topP: sampling.topP,
        stopIds: request.stopTokens,
        seed: (request.seed + budget) >>> 0,
      },
    );
    rows.forEach((b, i) => {
      const start = b * L;
      const prompt = prompts[b]!;
      const generated = out.tokens[i]!;
      tokens.set(prompt, start);
      tokens.set(generated, start + prompt.length);
      logprobs.set(out.logprobs[i]!, start + prompt.length);
      mask.fill(1, start + prompt.length, start + prompt.length + generated.length);
    });
  }
  return { batch: B, maxLength: L, tokens, logprobs, mask, promptLengths };
}
