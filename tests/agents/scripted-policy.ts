/**
 * A stand-in policy for episode tests: `next(promptText, turn)` says what the "model" writes next,
 * and generate() returns it the way a real model's Generation would — prompt tokens, then the
 * written tokens up to and including the first stop token, cut at maxNewTokens and at the row
 * length, mask 1 on written tokens. Every other LanguageModel method refuses to run.
 */
import type { GenerateRequest, Generation } from '../../src/models/generate';
import type { LanguageModel } from '../../src/models/language-model';
import { fromTransformerConfig } from '../../src/models/model-spec';
import type { TransformerConfig } from '../../src/models/transformer-config';
import type { CharTokenizer } from '../../src/models/tokenizer';

export interface ScriptedPolicy extends LanguageModel {
  /** The prompts each generate() call saw, as text, one array per call. */
  readonly calls: string[][];
}

export function scriptedPolicy(
  tokenizer: CharTokenizer,
  next: (promptText: string, call: number) => string,
): ScriptedPolicy {
  const calls: string[][] = [];
  const refuse = (): never => {
    throw new Error('scriptedPolicy: only generate() is scripted');
  };
  const config: TransformerConfig = {
    vocab: tokenizer.vocabSize,
    context: 256,
    width: 16,
    layers: 1,
    heads: 1,
    tiedEmbeddings: true,
    valueHead: false,
  };
  return {
    backend: 'cpu',
    spec: fromTransformerConfig(config),
    get groups() {
      return refuse();
    },
    calls,
    async generate(request: GenerateRequest): Promise<Generation> {
      const L = request.maxLength;
      const B = request.prompts.length;
      const tokens = new Int32Array(B * L).fill(request.padToken);
      const mask = new Float32Array(B * L);
      const promptLengths = new Int32Array(B);
      const texts: string[] = [];
      request.prompts.forEach((prompt, b) => {
        const text = tokenizer.decode(prompt);
        texts.push(text);
        tokens.set(prompt, b * L);
        promptLengths[b] = prompt.length;
        const written = tokenizer.encode(next(text, calls.length));
        let t = prompt.length;
        for (let i = 0; i < written.length && i < request.maxNewTokens && t < L; i++, t++) {
          tokens[b * L + t] = written[i]!;
          mask[b * L + t] = 1;
          if (request.stopTokens.includes(written[i]!)) break;
        }
      });
      calls.push(texts);
      return {
        batch: B,
        maxLength: L,
        tokens,
        logprobs: new Float32Array(B * L),
        mask,
        promptLengths,
      };
    },
    trainCrossEntropy: refuse,
    scoreTokens: refuse,
    backwardFromLogp: refuse,
    takeMetrics: refuse,
    logits: refuse,
    readParams: refuse,
    writeParams: refuse,
    readOptimizer: refuse,
    writeOptimizer: refuse,
    dispose: () => undefined,
  };
}
