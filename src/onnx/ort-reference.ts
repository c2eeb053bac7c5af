/**
 * Running an exported policy on onnxruntime-web: an inference engine nobody here wrote, used as an
 * independent check of our forward pass and as a frozen reference policy (log-probs for the KL
 * term need no gradients).
 *
 * Execution providers: 'webgpu' in browsers that have WebGPU, 'wasm' (ORT's CPU kernels compiled to
 * WebAssembly) everywhere. Two builds of the package, each imported on first use so that pages
 * which never run ORT never load it:
 *   'webgpu'  onnxruntime-web/webgpu: WebGPU and wasm EPs; ort-wasm-simd-threaded.asyncify.wasm
 *             (29 MB). The default, and the one for browsers.
 *   'wasm'    onnxruntime-web: wasm EP only; ort-wasm-simd-threaded.wasm (15 MB), and in Node the
 *             package's node build. For Node (nodeOrtOptions() in ort-node.ts): the asyncify
 *             binary takes seconds to compile there, and Node then spent about a minute of CPU
 *             finishing its optimized compile before the process could exit (measured here).
 *
 * ORT's wasm settings are global to a build and take effect when its runtime first starts: the
 * first session of each build decides wasmPaths and numThreads.
 *   wasmPaths  where ORT fetches its .wasm (the build's JS glue is bundled in). Default for the
 *              'webgpu' build: the URL Vite gives the package's .wasm (the `?url` import below),
 *              right in the app, the browser tests and `vite build`. Node: nodeOrtOptions().
 *   numThreads 1 by default: more threads need cross-origin isolation in browsers and did not
 *              start in Node here (bench notes); one thread is also the fair CPU comparison.
 *
 * Shapes: B = batch, T = seq (≤ context), V = vocab, D = observations, A = actions.
 */
import type { InferenceSession, Tensor } from 'onnxruntime-web';
import ortWasmUrl from 'onnxruntime-web/ort-wasm-simd-threaded.asyncify.wasm?url';
import { checkInt } from '../ops/validate';
import { OpInputError } from '../ops/errors';
import { tokenLogprobs } from '../ops/token-logprobs';
import type { TransformerConfig } from '../models/transformer-config';
import type { MlpConfig } from '../models/mlp-params';
import { importOnnx } from './import';
import { OnnxError } from './onnx-error';
import { LOGITS_OUTPUT, TRANSFORMER_INPUT, VALUES_OUTPUT } from './export-transformer';
import { OBS_INPUT } from './export-mlp';

export type OrtModule = typeof import('onnxruntime-web');
export type OrtExecutionProvider = 'webgpu' | 'wasm';
export type OrtBuild = 'webgpu' | 'wasm';

export interface OrtSessionOptions {
  /** In order of preference; ORT places each node on the first one that supports it. */
  executionProviders: OrtExecutionProvider[];
  /** Which package build to load (see the file comment); default 'webgpu'. */
  build?: OrtBuild;
  /** URL prefix of ORT's dist/ (ending in '/') or the .wasm file's URL; see the file comment. */
  wasmPaths?: string | { wasm?: string; mjs?: string };
  /** Threads of the wasm EP; default 1. */
  numThreads?: number;
  /** ORT's log severity for this session: 0 verbose … 4 fatal; default 3 (errors only). */
  logSeverityLevel?: 0 | 1 | 2 | 3 | 4;
}

interface SessionBase {
  readonly session: InferenceSession;
  /** The ORT build the session came from (its Tensor class must make the inputs). */
  readonly ort: OrtModule;
  readonly executionProviders: readonly OrtExecutionProvider[];
  release(): Promise<void>;
}

export interface OrtTransformerSession extends SessionBase {
  readonly format: 'transformer';
  readonly config: TransformerConfig;
}

export interface OrtActorCriticSession extends SessionBase {
  readonly format: 'mlp-actor-critic';
  readonly actorConfig: MlpConfig;
  readonly criticConfig: MlpConfig;
}

export type OrtPolicySession = OrtTransformerSession | OrtActorCriticSession;

const loading = new Map<OrtBuild, Promise<OrtModule>>();

/** An ORT build, imported once; its first caller's wasm settings stick (see the file comment). */
export function loadOrt(
  options: Pick<OrtSessionOptions, 'build' | 'wasmPaths' | 'numThreads'> = {},
): Promise<OrtModule> {
  const build = options.build ?? 'webgpu';
  let module = loading.get(build);
  if (module) return module;
  if (options.wasmPaths === undefined && isNode()) {
    // Vite's URL default means nothing to Node; ORT would fail with "fetching of the wasm failed".
    throw new OnnxError(
      'input',
      'wasmPaths',
      'must be given in Node: pass ...nodeOrtOptions() (ort-node.ts)',
    );
  }
  module = (async () => {
    const ort: OrtModule =
      build === 'webgpu' ? await import('onnxruntime-web/webgpu') : await import('onnxruntime-web');
    const fallback = build === 'webgpu' ? { wasm: new URL(ortWasmUrl, baseUrl()).href } : undefined;
    const wasmPaths = options.wasmPaths ?? fallback;
    if (wasmPaths !== undefined) ort.env.wasm.wasmPaths = wasmPaths;
    ort.env.wasm.numThreads = options.numThreads ?? 1;
    return ort;
  })();
  loading.set(build, module);
  module.catch(() => loading.delete(build)); // a failed import may be retried
  return module;
}

function isNode(): boolean {
  const proc = (globalThis as { process?: { versions?: { node?: string } } }).process;
  return typeof window === 'undefined' && typeof proc?.versions?.node === 'string';
}

/** Where a root-relative URL from Vite resolves: the page in a browser. */
function baseUrl(): string {
  return typeof location === 'undefined' ? 'file:///' : location.href;
}

/**
 * Bytes of a model this lab exported → an ORT session. The file is imported first
 * (importOnnx: format, config and every weight checked), so a foreign or damaged file fails
 * with an OnnxError before ORT sees it.
 */
export async function createOrtSession(
  bytes: Uint8Array,
  options: OrtSessionOptions,
): Promise<OrtPolicySession> {
  const imported = importOnnx(bytes);
  const providers = options.executionProviders;
  if (providers.length === 0) {
    throw new OnnxError('input', 'executionProviders', "must name at least one ('webgpu', 'wasm')");
  }
  if (options.build === 'wasm' && providers.includes('webgpu')) {
    throw new OnnxError('input', 'executionProviders', "'webgpu' needs the 'webgpu' build");
  }
  const ort = await loadOrt(options);
  const session = await ort.InferenceSession.create(bytes, {
    executionProviders: [...providers],
    logSeverityLevel: options.logSeverityLevel ?? 3,
  });
  const base: SessionBase = {
    session,
    ort,
    executionProviders: [...providers],
    release: () => session.release(),
  };
  return imported.format === 'transformer'
    ? { ...base, format: 'transformer', config: imported.config }
    : {
        ...base,
        format: 'mlp-actor-critic',
        actorConfig: imported.actorConfig,
        criticConfig: imported.criticConfig,
      };
}

const OP = 'ortLogits';

function expectTransformer(policy: OrtPolicySession): OrtTransformerSession {
  if (policy.format !== 'transformer') {
    throw new OnnxError(
      'input',
      'policy',
      `is a ${policy.format} session; this needs a transformer`,
    );
  }
  return policy;
}

function expectActorCritic(policy: OrtPolicySession): OrtActorCriticSession {
  if (policy.format !== 'mlp-actor-critic') {
    throw new OnnxError(
      'input',
      'policy',
      `is a ${policy.format} session; this needs an actor-critic`,
    );
  }
  return policy;
}

/**
 * tokens (B·T, row-major) → logits (B, T, V) [and values (B, T) with a value head].
 * Token ids must be integers in [0, V); T in [1, context].
 */
export async function ortForward(
  policy: OrtPolicySession,
  tokens: Int32Array,
  batch: number,
  seq: number,
): Promise<{ logits: Float32Array; values: Float32Array | undefined }> {
  const { config } = expectTransformer(policy);
  checkInt(OP, 'batch', batch, 1, 2 ** 20);
  checkInt(OP, 'seq', seq, 1, config.context);
  if (tokens.length !== batch * seq) {
    throw new OpInputError(
      OP,
      'tokens',
      `must have batch × seq = ${batch * seq} ids, got ${tokens.length}`,
    );
  }
  const ids = new BigInt64Array(tokens.length);
  for (let i = 0; i < tokens.length; i++) {
    const id = tokens[i]!;
    if (id < 0 || id >= config.vocab) {
      throw new OpInputError(
        OP,
        'tokens',
        `index ${i}: id must be in [0, ${config.vocab - 1}], got ${id}`,
      );
    }
    ids[i] = BigInt(id);
  }
  const input = new policy.ort.Tensor('int64', ids, [batch, seq]);
  const names = config.valueHead ? [LOGITS_OUTPUT, VALUES_OUTPUT] : [LOGITS_OUTPUT];
  const out = await policy.session.run({ [TRANSFORMER_INPUT]: input }, names);
  input.dispose();
  const logits = await takeFloats(out[LOGITS_OUTPUT], batch * seq * config.vocab, LOGITS_OUTPUT);
  const values = config.valueHead
    ? await takeFloats(out[VALUES_OUTPUT], batch * seq, VALUES_OUTPUT)
    : undefined;
  return { logits, values };
}

/** tokens (B·T) → logits (B, T, V), computed by onnxruntime. */
export async function ortLogits(
  policy: OrtPolicySession,
  tokens: Int32Array,
  batch: number,
  seq: number,
): Promise<Float32Array> {
  return (await ortForward(policy, tokens, batch, seq)).logits;
}

/**
 * The frozen reference policy's log-probs: logp[n] = log softmax(logits[n] / temperature)[targets[n]]
 * (B·T), the logits from onnxruntime and the log-softmax from our CPU op (tokenLogprobs, the same
 * op LanguageModel.scoreTokens uses), so the KL term compares like with like.
 */
export async function ortReferenceLogprobs(
  policy: OrtPolicySession,
  tokens: Int32Array,
  targets: Int32Array,
  batch: number,
  seq: number,
  temperature = 1,
): Promise<Float32Array> {
  const logits = await ortLogits(policy, tokens, batch, seq);
  return tokenLogprobs(logits, targets, batch * seq, expectTransformer(policy).config.vocab, {
    temperature,
    withEntropy: false,
  }).logp;
}

/** obs (B, D) → logits (B, A), values (B) of an exported actor-critic. */
export async function ortActorCritic(
  policy: OrtPolicySession,
  obs: Float32Array,
  batch: number,
): Promise<{ logits: Float32Array; values: Float32Array }> {
  const { actorConfig } = expectActorCritic(policy);
  const D = actorConfig.inputs;
  checkInt('ortActorCritic', 'batch', batch, 1, 2 ** 20);
  if (obs.length !== batch * D) {
    throw new OpInputError(
      'ortActorCritic',
      'obs',
      `must have batch × ${D} = ${batch * D} floats, got ${obs.length}`,
    );
  }
  const input = new policy.ort.Tensor('float32', obs.slice(), [batch, D]);
  const out = await policy.session.run({ [OBS_INPUT]: input }, ['logits', 'values']);
  input.dispose();
  return {
    logits: await takeFloats(out.logits, batch * actorConfig.outputs, 'logits'),
    values: await takeFloats(out.values, batch, 'values'),
  };
}

/** An output tensor's floats as a fresh array (read back from the GPU if it lives there). */
async function takeFloats(
  tensor: Tensor | undefined,
  expected: number,
  name: string,
): Promise<Float32Array> {
  if (tensor === undefined || tensor.type !== 'float32') {
    throw new OnnxError(
      'malformed',
      `output "${name}"`,
      `is ${tensor ? tensor.type : 'missing'}, expected float32`,
    );
  }
  const data = (await tensor.getData(true)) as Float32Array;
  if (data.length !== expected) {
    throw new OnnxError(
      'malformed',
      `output "${name}"`,
      `has ${data.length} floats, expected ${expected}`,
    );
  }
  return data.slice();
}
