/** Every benchmark `npm run bench` knows, in the order it runs them. Add a suite here. */
import type { BenchSuite } from '../core/types';
import { attentionGqaSuite } from './attention-gqa.bench';
import { gaeSuite } from './gae.bench';
import { generationSuite } from './generation.bench';
import { grpoSuite } from './grpo.bench';
import { inputGuardsSuite } from './input-guards.bench';
import { klLossSuite, valueLossSuite } from './kl-value-loss.bench';
import { linearF16Suite } from './linear-f16.bench';
import { llamaGenerateSuite } from './llama-generate.bench';
import { llamaPeerSuite } from './llama-peer.bench';
import { logSoftmaxSuite } from './log-softmax.bench';
import { matmulSuite } from './matmul.bench';
import { ortReferenceSuite } from './ort-reference.bench';
import { policyLossSuite } from './policy-loss.bench';
import { policyStepSuite } from './policy-step.bench';
import { rotarySuite } from './rotary.bench';
import { sampleLargeSuite } from './sample-large.bench';
import { tokenLogprobsSuite } from './token-logprobs.bench';
import { transformerStepSuite } from './transformer-step.bench';
import { whitenSuite } from './whiten.bench';

export const SUITES: readonly BenchSuite[] = [
  tokenLogprobsSuite,
  logSoftmaxSuite,
  // Advantage and loss kernels against their CPU references.
  gaeSuite,
  grpoSuite,
  whitenSuite,
  policyLossSuite,
  klLossSuite,
  valueLossSuite,
  // The policy layers and the whole model: matmul, the f16-weight linear layer, rotary positions, a training step against the tfjs peer, and generation.
  matmulSuite,
  linearF16Suite,
  rotarySuite,
  attentionGqaSuite,
  transformerStepSuite,
  // The RL step: its loss as kernels on the GPU, against the same loss on the CPU between passes.
  policyStepSuite,
  generationSuite,
  // Choosing the next token over a real model's vocabulary, on the GPU.
  sampleLargeSuite,
  // The frozen reference policy's log-probs: our engine vs onnxruntime-web.
  ortReferenceSuite,
  // CPU: the guards in front of untrusted input, beside the work they save.
  inputGuardsSuite,
  // The real-shape Llama models (SmolLM2-135M, Qwen2.5-0.5B): onnxruntime-web's prefill and decode.
  llamaPeerSuite,
  // GRPO-shaped generation of the same models: one batch of mixed prompt lengths, or one per length.
  llamaGenerateSuite,
];
