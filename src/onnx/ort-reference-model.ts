/**
 * The frozen reference policy on onnxruntime-web, as a LanguageModel that GRPO and PPO can take as
 * their `reference`: the KL term only ever asks the reference to score tokens, which needs no
 * gradients, so the forward pass can run on an inference engine (WebGPU EP in browsers, wasm on
 * the CPU) while our own engine trains the policy.
 *
 *   scoreTokens  ORT logits (B, T, V) → our tokenLogprobs op (the op CpuLanguageModel.scoreTokens
 *                uses), logits divided by the temperature: logp and entropy (B·T), and the value
 *                head's values (B·T) when the model has one.
 *   logits       ORT logits (B, T, V).
 *   readParams   the weights the session was built from (a copy).
 *   takeMetrics  always [] (nothing trains).
 * Everything that would change the model, or that a reference has no use for (generate, the
 * optimizer state), throws FrozenModelError ("reference model is frozen").
 *
 * Build one from a checkpoint (fromCheckpoint), from parameters (fromParams: exported with
 * exportTransformerOnnx, then createOrtSession), or wrap an ORT session made elsewhere (the
 * constructor; the benchmarks do this with their own ORT build).
 */
import type { GenerateRequest, Generation } from '../models/generate';
import type {
  LanguageModel,
  OptimizerSnapshot,
  StepMetrics,
  TokenScores,
} from '../models/language-model';
import { loadLanguageModel } from '../models/lm-checkpoint';
import { fromTransformerConfig, type ModelSpec } from '../models/model-spec';
import type { OptimizerConfig } from '../models/optimizer';
import { groupNamed, type ParamGroup, type ParamGroupName } from '../models/param-groups';
import type { ParamLayout } from '../models/param-layout';
import type { TokenizerSpec } from '../models/tokenizer';
import type { TransformerConfig } from '../models/transformer-config';
import { transformerParamGroups } from '../models/transformer-params';
import { OpInputError } from '../ops/errors';
import { resolveTemperature, tokenLogprobs } from '../ops/token-logprobs';
import type { SequenceBatch } from '../models/sequence-batch';
import { exportTransformerOnnx } from './export-transformer';
import { OnnxError } from './onnx-error';
import {
  createOrtSession,
  ortForward,
  type OrtSessionOptions,
  type OrtTransformerSession,
} from './ort-reference';

const SCORE_OP = 'OrtReferenceModel.scoreTokens';

/** A training or generation call on a reference model. */
export class FrozenModelError extends Error {
  override readonly name = 'FrozenModelError';
  constructor(readonly method: string) {
    super(
      `OrtReferenceModel.${method}: reference model is frozen (it only scores tokens for the ` +
        'KL term; train, sample from and checkpoint the policy instead)',
    );
  }
}

export class OrtReferenceModel implements LanguageModel {
  /** 'webgpu' when ORT runs on its WebGPU EP, else 'cpu' (the wasm EP). */
  readonly backend: 'webgpu' | 'cpu';
  readonly spec: ModelSpec;
  /** The groups of the policy this mirrors (its 'base'); nothing here trains them. */
  readonly groups: readonly ParamGroup[];
  readonly config: TransformerConfig;
  readonly layout: ParamLayout;
  private released = false;

  /**
   * Wraps a transformer session. `params` (layout.total floats) are the weights the session holds,
   * for readParams(); without them readParams() throws.
   */
  constructor(
    readonly policy: OrtTransformerSession,
    private readonly params?: Float32Array,
  ) {
    if (policy.format !== 'transformer') {
      throw new OnnxError(
        'input',
        'policy',
        `is a ${(policy as { format: string }).format} session; a reference model needs a transformer`,
      );
    }
    this.config = policy.config;
    this.spec = fromTransformerConfig(policy.config);
    this.groups = transformerParamGroups(policy.config);
    this.layout = this.groups[0]!.layout;
    if (params !== undefined && params.length !== this.layout.total) {
      throw new OnnxError(
        'input',
        'params',
        `must hold the layout's ${this.layout.total} floats, got ${params.length}`,
      );
    }
    this.backend = policy.executionProviders[0] === 'webgpu' ? 'webgpu' : 'cpu';
  }

  /** Exports `params` to ONNX and starts an ORT session on it. */
  static async fromParams(
    config: TransformerConfig,
    params: Float32Array,
    tokenizer: TokenizerSpec,
    options: OrtSessionOptions,
  ): Promise<OrtReferenceModel> {
    const bytes = exportTransformerOnnx(config, params, tokenizer);
    const session = await createOrtSession(bytes, options);
    if (session.format !== 'transformer') {
      await session.release();
      throw new OnnxError('input', 'params', 'did not export as a transformer'); // unreachable
    }
    return new OrtReferenceModel(session, params.slice());
  }

  /** A transformer checkpoint file (lm-checkpoint.ts) → its frozen reference on ORT. */
  static async fromCheckpoint(
    bytes: Uint8Array,
    options: OrtSessionOptions,
  ): Promise<OrtReferenceModel> {
    const loaded = loadLanguageModel(bytes);
    if (!loaded.tokenizer) {
      throw new OnnxError('input', 'checkpoint', 'has no tokenizer; the ONNX export needs one');
    }
    return OrtReferenceModel.fromParams(loaded.config, loaded.params, loaded.tokenizer, options);
  }

  /**
   * log softmax(logits / temperature)[target] and the entropy of that distribution, per position
   * (B·T), from ORT's logits; NaN everywhere when the logits are not finite (as CpuLanguageModel).
   */
  async scoreTokens(
    tokens: Int32Array,
    targets: Int32Array,
    batch: number,
    seq: number,
    temperature: number,
  ): Promise<TokenScores> {
    this.checkLive('scoreTokens');
    const rows = batch * seq;
    // The checks that do not need logits, before ORT runs (ortForward checks tokens and shape).
    resolveTemperature(SCORE_OP, { temperature });
    if (targets.length !== rows) {
      throw new OpInputError(
        SCORE_OP,
        'targets',
        `must have batch × seq = ${rows} ids, got ${targets.length}`,
      );
    }
    const { logits, values } = await ortForward(this.policy, tokens, batch, seq);
    if (!logits.every(Number.isFinite)) {
      return { logp: new Float32Array(rows).fill(NaN), entropy: new Float32Array(rows).fill(NaN) };
    }
    // tokenLogprobs checks targets (length B·T, ids in [0, V)) and the temperature.
    const { logp, entropy } = tokenLogprobs(logits, targets, rows, this.spec.vocab, {
      temperature,
    });
    return { logp, entropy: entropy!, ...(values ? { values } : {}) };
  }

  async logits(tokens: Int32Array, batch: number, seq: number): Promise<Float32Array> {
    this.checkLive('logits');
    return (await ortForward(this.policy, tokens, batch, seq)).logits;
  }

  async readParams(group: ParamGroupName = 'base'): Promise<Float32Array> {
    this.checkLive('readParams');
    groupNamed(this.groups, group);
    if (!this.params) {
      throw new OnnxError('input', 'params', 'were not given when this reference was built');
    }
    return this.params.slice();
  }

  /** Nothing trains, so there are never metrics. */
  async takeMetrics(): Promise<StepMetrics[]> {
    return [];
  }

  async trainCrossEntropy(_batch: SequenceBatch, _optimizer: OptimizerConfig): Promise<void> {
    throw new FrozenModelError('trainCrossEntropy');
  }

  async backwardFromLogp(
    _dLogp: Float32Array,
    _dEntropy: Float32Array | undefined,
    _optimizer: OptimizerConfig,
    _dValues?: Float32Array,
  ): Promise<void> {
    throw new FrozenModelError('backwardFromLogp');
  }

  async generate(_request: GenerateRequest): Promise<Generation> {
    throw new FrozenModelError('generate');
  }

  writeParams(_params: Float32Array): void {
    throw new FrozenModelError('writeParams');
  }

  async readOptimizer(): Promise<OptimizerSnapshot> {
    throw new FrozenModelError('readOptimizer');
  }

  writeOptimizer(_snapshot: OptimizerSnapshot): void {
    throw new FrozenModelError('writeOptimizer');
  }

  /** Releases the ORT session (idempotent). */
  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    await this.policy.release();
  }

  dispose(): void {
    void this.release().catch(() => undefined);
  }

  private checkLive(method: string): void {
    if (this.released) {
      throw new OnnxError('input', `OrtReferenceModel.${method}`, 'called after release()');
    }
  }
}
