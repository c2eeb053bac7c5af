/**
 * Batched generation of the Llama family on the GPU with a KV cache: the twin of llamaGenerate()
 * (llama-cpu-generate.ts), same options, same counter-based draws (seed, step, prompt index), so
 * both pick the same tokens up to f32 rounding at a sampling boundary.
 *
 * Prompts of any lengths run in one batch: GRPO's G completions of each of its prompts decode
 * together. Only a prompt far longer than the rest runs apart (prompt-buckets.ts: a batch is cut
 * where padding to its longest prompt would more than double its rows). Each row draws as its
 * prompt's index in the list (the sampler's draw rows), so the tokens do not depend on the
 * batching. Per batch of B prompts of lengths P_b, P = max P_b:
 *   prefill   the prompts right-padded to P, B·P rows through every block, k and v appended to
 *             per-layer caches (B, P + maxNew, NKV·hs); each sequence's row P_b − 1 to the LM
 *             head; sample.
 *   decode    one row per sequence per step, sequence b's at position P_b + step − 1: its k and v
 *             written at that row of its cache and attention over its rows up to it (the KV
 *             kernels' per-sequence pasts), so a short prompt never reads a longer one's padding.
 * Logits never leave the GPU: the sampler writes each step's ids into the next step's input and
 * into a history buffer (maxNew, B) of ids and log-probs, which is read back every few steps to
 * see whether every sequence has stopped (a stopped sequence runs on until then; its extra
 * tokens are dropped).
 *
 * Shapes: B = sequences (prompts), C = width, NKV·hs = kv width, V = vocab.
 */
import type { CommandBatch } from '../../gpu/batch';
import type { GpuContext } from '../../gpu/context';
import { encodeSampleLarge } from '../../gpu/kernels/nn/sample-large';
import { OpInputError } from '../../ops/errors';
import type { Ints } from '../../ops/nn/floats';
import { rotaryTable } from '../../ops/nn/rotary';
import type { ModelSpec } from '../model-spec';
import {
  checkGenerateInput,
  type LlamaGenerated,
  type LlamaGenerateOptions,
} from './llama-cpu-generate';
import { LlamaWorkspace, recordHead, recordTrunk } from './llama-gpu';
import { type LlamaGpuLora, LoraScratch } from './llama-gpu-lora';
import { type GpuRotaryTable, uploadRotaryTable } from './llama-gpu-ops';
import type { LlamaGpuWeights } from './llama-gpu-weights';
import { promptBuckets } from './prompt-buckets';

/** llamaGenerate()'s options, with the adapters (when any) already on the GPU. */
export type LlamaGenerateGpuOptions = Omit<LlamaGenerateOptions, 'lora'> & {
  /** LoRA adapters to apply (llama-gpu-lora.ts); undefined: the base model. */
  lora?: LlamaGpuLora | undefined;
};

/** Read the history back (and stop when every sequence has) every this many steps. */
const STOP_CHECK_EVERY = 8;

/** Per layer K and V of B sequences: (B, capacity, NKV·hs) each. */
class KvCaches {
  readonly k: GPUBuffer[] = [];
  readonly v: GPUBuffer[] = [];

  constructor(
    private readonly gpu: GpuContext,
    spec: ModelSpec,
    sequences: number,
    readonly capacity: number,
  ) {
    const bytes = sequences * capacity * spec.kvHeads * spec.headDim * 4;
    for (let l = 0; l < spec.layers; l++) {
      this.k.push(gpu.storage(bytes, `kv cache k${l}`));
      this.v.push(gpu.storage(bytes, `kv cache v${l}`));
    }
  }

  release(): void {
    for (const buffer of [...this.k, ...this.v]) this.gpu.pool.release(buffer);
  }
}

/** The sampling state of one batch: each step's ids feed the next step and the history. */
interface GenerationState {
  weights: LlamaGpuWeights;
  caches: KvCaches;
  table: GpuRotaryTable;
  /** (B, C) the last row of each sequence; (B) ids and log-probs of the current step. */
  last: LlamaWorkspace;
  /** (maxNew, B) i32 ids and f32 log-probs of every step. */
  historyIds: GPUBuffer;
  historyLogprobs: GPUBuffer;
  /** (B) u32: each row's prompt index in the caller's list, the row its draws use. */
  drawRows: GPUBuffer;
}

/** Records final norm → LM head on state.last.x → sample into last.tokens and the history. */
async function recordSample(
  gpu: GpuContext,
  batch: CommandBatch,
  state: GenerationState,
  options: { sampling: ReturnType<typeof checkGenerateInput>['sampling']; seed: number },
  step: number,
): Promise<void> {
  const { spec } = state.weights;
  const ws = state.last;
  const B = ws.rows;
  await recordHead(gpu, batch, state.weights, ws);
  await encodeSampleLarge(
    gpu,
    batch,
    { logits: ws.logits, tokens: ws.tokens, logprobs: ws.logp },
    B,
    spec.vocab,
    { ...options.sampling, drawRows: state.drawRows },
    options.seed,
    step,
  );
  batch.copyRange(ws.tokens, 0, state.historyIds, step * B * 4, B * 4);
  batch.copyRange(ws.logp, 0, state.historyLogprobs, step * B * 4, B * 4);
}

/**
 * Generates for the prompts `members` (indices into the caller's list) in one batch: a right-padded
 * prefill of B × Pmax rows, then one decode loop in which sequence b writes and reads its cache at
 * its own length (pasts). Fills their entries of `out`.
 */
async function generateBatch(
  gpu: GpuContext,
  weights: LlamaGpuWeights,
  allPrompts: readonly Ints[],
  members: readonly number[],
  options: LlamaGenerateGpuOptions,
  resolved: ReturnType<typeof checkGenerateInput>,
  out: LlamaGenerated,
): Promise<void> {
  const { spec } = weights;
  const prompts = members.map((m) => allPrompts[m]!);
  const B = prompts.length;
  const lengths = prompts.map((p) => p.length);
  const P = Math.max(...lengths);
  const maxNew = options.maxNewTokens;
  const capacity = P + maxNew;
  const caches = new KvCaches(gpu, spec, B, capacity);
  const table = uploadRotaryTable(gpu, rotaryTable(capacity, spec.headDim, spec.rotaryBase));
  const prefill = new LlamaWorkspace(gpu, spec, B, P, false);
  const last = new LlamaWorkspace(gpu, spec, B, 1);
  const historyIds = gpu.storage(maxNew * B * 4, 'generate history ids');
  const historyLogprobs = gpu.storage(maxNew * B * 4, 'generate history logprobs');
  const drawRows = gpu.upload(Uint32Array.from(members), 'generate draw rows');
  // Sized for the prefill's B·P rows; each decode step uses its first B rows.
  const scratch = options.lora && new LoraScratch(gpu, B * P, options.lora.settings.rank);
  const lora = options.lora && scratch ? { lora: { adapters: options.lora, scratch } } : {};
  const state: GenerationState = {
    weights,
    caches,
    table,
    last,
    historyIds,
    historyLogprobs,
    drawRows,
  };
  const sampling = { sampling: resolved.sampling, seed: resolved.seed };
  try {
    // Right-padded with id 0: a padding row's k and v land after its prompt's last row, where
    // the first decode steps overwrite them before any query reads that far.
    const ids = new Int32Array(B * P);
    prompts.forEach((prompt, b) => ids.set(prompt, b * P));
    gpu.device.queue.writeBuffer(prefill.tokens, 0, ids);
    gpu.device.queue.writeBuffer(
      prefill.positions,
      0,
      Uint32Array.from({ length: B * P }, (_, r) => r % P),
    );
    let batch = gpu.beginBatch('llama prefill');
    const caches0 = { caches: { k: caches.k, v: caches.v, capacity, past: 0 } };
    await recordTrunk(gpu, batch, weights, prefill, table, { ...caches0, ...lora });
    const rowBytes = spec.width * 4;
    lengths.forEach((length, b) => {
      batch.copyRange(prefill.x, (b * P + length - 1) * rowBytes, last.x, b * rowBytes, rowBytes);
    });
    await recordSample(gpu, batch, state, sampling, 0);
    batch.submit();
    let steps = 1;
    for (; steps < maxNew; steps++) {
      if (
        steps % STOP_CHECK_EVERY === 0 &&
        (await allStopped(gpu, state, B, steps, resolved.stopIds))
      )
        break;
      // A decode step's one row per sequence sits at that sequence's cached length: its position
      // is its past, so last.positions serves the KV kernels as their per-sequence pasts.
      const pasts = last.positions;
      const own = Uint32Array.from(lengths, (length) => length + steps - 1);
      gpu.device.queue.writeBuffer(pasts, 0, own);
      const cachesNow = { k: caches.k, v: caches.v, capacity, past: P + steps - 1, pasts };
      batch = gpu.beginBatch('llama decode step');
      await recordTrunk(gpu, batch, weights, last, table, { caches: cachesNow, ...lora });
      await recordSample(gpu, batch, state, sampling, steps);
      batch.submit();
    }
    const history = await readHistory(gpu, state, B, steps);
    members.forEach((m, b) => {
      const tokens: number[] = [];
      const logprobs: number[] = [];
      let finish: 'stop' | 'length' = 'length';
      for (let s = 0; s < steps; s++) {
        const token = history.ids[s * B + b]!;
        tokens.push(token);
        logprobs.push(history.logprobs[s * B + b]!);
        if (resolved.stopIds.includes(token)) {
          finish = 'stop';
          break;
        }
      }
      out.tokens[m] = Int32Array.from(tokens);
      out.logprobs[m] = Float32Array.from(logprobs);
      out.finish[m] = finish;
    });
  } finally {
    for (const buffer of [historyIds, historyLogprobs, drawRows]) gpu.pool.release(buffer);
    scratch?.release();
    last.release();
    prefill.release();
    table.release();
    caches.release();
  }
}

async function readHistory(gpu: GpuContext, state: GenerationState, B: number, steps: number) {
  const ids = new Int32Array(await gpu.read(state.historyIds, steps * B * 4));
  const logprobs = new Float32Array(await gpu.read(state.historyLogprobs, steps * B * 4));
  return { ids, logprobs };
}

/** Whether every sequence has produced a stop id within the first `steps` steps. */
async function allStopped(
  gpu: GpuContext,
  state: GenerationState,
  B: number,
  steps: number,
  stopIds: readonly number[],
): Promise<boolean> {
  if (stopIds.length === 0) return false;
  const ids = new Int32Array(await gpu.read(state.historyIds, steps * B * 4));
  for (let b = 0; b < B; b++) {
    let stopped = false;
    for (let s = 0; s < steps && !stopped; s++) stopped = stopIds.includes(ids[s * B + b]!);
    if (!stopped) return false;
  }
  return true;
}

/**
 * Generates up to maxNewTokens after each prompt on the GPU; same options, checks and result as
 * llamaGenerate() (adapters, when given, uploaded: llama-gpu-lora.ts). Only sampled ids and their
 * log-probs are read back.
 */
export async function llamaGenerateGpu(
  gpu: GpuContext,
  weights: LlamaGpuWeights,
  prompts: readonly Ints[],
  options: LlamaGenerateGpuOptions,
): Promise<LlamaGenerated> {
  const { lora, ...rest } = options;
  const resolved = checkGenerateInput(weights.spec, prompts, rest);
  if (lora && lora.layers.length !== weights.spec.layers) {
    throw new OpInputError(
      'llamaGenerateGpu',
      'lora',
      `has adapters for ${lora.layers.length} layers, the model has ${weights.spec.layers}`,
    );
  }
  const out: LlamaGenerated = {
    tokens: prompts.map(() => new Int32Array(0)),
    logprobs: prompts.map(() => new Float32Array(0)),
    finish: prompts.map(() => 'length' as const),
  };
  for (const members of promptBuckets(prompts.map((p) => p.length))) {
    await generateBatch(gpu, weights, prompts, members, options, resolved, out);
  }
  return out;
}
