/**
 * A stand-in policy for episode tests: `next(promptText, turn)` says what the "model" writes next,
 * and generate() returns it the way a real model's Generation would — prompt tokens, then the
 * written tokens up to and including the first stop token, cut at maxNewTokens and at the row
 * length, mask 1 on written tokens. Every other LanguageModel method refuses to run.
 */
import type { GenerateRequest, Generation } from '../../src/models/generate';
import type { LanguageModel } from '../../src/models/language-model';
import { fromTransformerConfig } from '../../src/models/model-spec';
import { fromHfConfig } from '../../src/models/hf/hf-config';
import type { Tokenizer } from '../../src/models/tokenizer-api';

export interface ScriptedPolicy extends LanguageModel {
  /** The prompts each generate() call saw, as text, one array per call. */
  readonly calls: string[][];
}

export function scriptedPolicy(
  tokenizer: Tokenizer,
  next: (promptText: string, call: number) => string,
): ScriptedPolicy {
  const calls: string[][] = [];
  const refuse = (): never => {
    throw new Error('scriptedPolicy: only generate() is scripted');
  };
  // The tiny GPT's spec for its character tokenizer; a small Llama's for a brought model's.
  const spec =
    tokenizer.spec.kind === 'char'
      ? fromTransformerConfig({
          vocab: tokenizer.vocabSize,
          context: 256,
          width: 16,
          layers: 1,
          heads: 1,
          tiedEmbeddings: true,
          valueHead: false,
        })
      : fromHfConfig({
          model_type: 'llama',
          vocab_size: tokenizer.vocabSize,
          hidden_size: 16,
          intermediate_size: 32,
          num_hidden_layers: 1,
          num_attention_heads: 1,
          num_key_value_heads: 1,
          max_position_embeddings: 2048,
          rms_norm_eps: 1e-6,
          rope_theta: 10000,
          tie_word_embeddings: true,
        });
  return {
    backend: 'cpu',
    spec,
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
