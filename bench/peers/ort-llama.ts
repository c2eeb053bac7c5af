/**
 * onnxruntime-web's WebGPU EP running the Llama-family graph (bench/onnx/llama-graph.ts) as
 * transformers.js drives such a model: the k/v cache stays on the GPU between steps (outputs in
 * 'gpu-buffer', the past fed back as GPU tensors), and so do the logits — the peer's best case,
 * since sampling (which would read them back) is not timed. A run is over when ORT's device has
 * finished the work it was given (queue.onSubmittedWorkDone), not when run() returns.
 *
 * Shapes: B = batch, T = new tokens per row, P = past length, NKV = kvHeads, hs = headDim.
 */
import type { ModelSpec } from '../../src/models/model-spec';
import { f16ToF32, f32ToF16 } from '../../src/util/half-float';
import { LLAMA_IO, type LlamaGraphDtype } from '../onnx/llama-graph';
import { llamaModelBytes, type WeightSource } from '../onnx/llama-model-bytes';
import type { OrtModule } from './ort';

type Session = Awaited<ReturnType<OrtModule['InferenceSession']['create']>>;
type OrtTensor = InstanceType<OrtModule['Tensor']>;

export interface OrtLlamaSession {
  session: Session;
  /** Writing the ONNX file (weights made and converted on the way), ms. */
  writeMs: number;
  /** InferenceSession.create: parse, optimize, upload the weights, ms. */
  createMs: number;
  /** Size of the ONNX file. */
  fileBytes: number;
}

export async function createOrtLlamaSession(
  ort: OrtModule,
  spec: ModelSpec,
  dtype: LlamaGraphDtype,
  withPast: boolean,
  weights: WeightSource,
): Promise<OrtLlamaSession> {
  const start = performance.now();
  const bytes = llamaModelBytes(spec, { dtype, withPast }, weights);
  const written = performance.now();
  const session = await ort.InferenceSession.create(bytes, {
    executionProviders: ['webgpu'],
    preferredOutputLocation: 'gpu-buffer',
  });
  return {
    session,
    writeMs: written - start,
    createMs: performance.now() - written,
    fileBytes: bytes.length,
  };
}

/** input_ids (B, T) and position_ids (B, T) = P … P + T − 1 in every row. */
export function idFeeds(
  ort: OrtModule,
  ids: Int32Array,
  batch: number,
  seq: number,
  past: number,
): Record<string, OrtTensor> {
  const positions = BigInt64Array.from({ length: batch * seq }, (_, i) => BigInt(past + (i % seq)));
  return {
    [LLAMA_IO.inputIds]: new ort.Tensor('int64', BigInt64Array.from(ids, BigInt), [batch, seq]),
    [LLAMA_IO.positionIds]: new ort.Tensor('int64', positions, [batch, seq]),
  };
}

/**
 * The past k/v of every layer as GPU tensors on ORT's device, filled with small random values
 * (attention over them is then not degenerate), made once and reused by every timed step.
 */
export async function gpuPast(
  ort: OrtModule,
  spec: ModelSpec,
  dtype: LlamaGraphDtype,
  batch: number,
  past: number,
  random: () => number,
): Promise<{ feeds: Record<string, OrtTensor>; destroy(): void }> {
  const device = (await ort.env.webgpu.device) as GPUDevice;
  const dims = [batch, spec.kvHeads, past, spec.headDim];
  const count = dims.reduce((a, b) => a * b, 1);
  const bytesPer = dtype === 'f16' ? 2 : 4;
  const buffers: GPUBuffer[] = [];
  const feeds: Record<string, OrtTensor> = {};
  for (let n = 0; n < spec.layers; n++) {
    for (const name of [LLAMA_IO.pastKey(n), LLAMA_IO.pastValue(n)]) {
      const buffer = device.createBuffer({
        size: Math.ceil((count * bytesPer) / 4) * 4,
        usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST,
      });
      const values = Float32Array.from({ length: count }, () => random() - 0.5);
      device.queue.writeBuffer(buffer, 0, dtype === 'f16' ? toF16(values) : values);
      buffers.push(buffer);
      feeds[name] = ort.Tensor.fromGpuBuffer(buffer, {
        dataType: dtype === 'f16' ? 'float16' : 'float32',
        dims,
      });
    }
  }
  return {
    feeds,
    destroy: () => {
      for (const t of Object.values(feeds)) t.dispose();
      for (const b of buffers) b.destroy();
    },
  };
}

function toF16(values: Float32Array): Uint16Array<ArrayBuffer> {
  // Padded to whole 4-byte words, as writeBuffer wants.
  const out = new Uint16Array(Math.ceil(values.length / 2) * 2);
  for (let i = 0; i < values.length; i++) out[i] = f32ToF16(values[i]!);
  return out;
}

/**
 * One session.run until ORT's device is idle; outputs are disposed unless `keepLogits`, which
 * returns the logits read back to the CPU as f32 (the validation run).
 */
export async function runOrtStep(
  ort: OrtModule,
  session: Session,
  feeds: Record<string, OrtTensor>,
  keepLogits = false,
): Promise<Float32Array | undefined> {
  const out = await session.run(feeds);
  const device = (await ort.env.webgpu.device) as GPUDevice;
  await device.queue.onSubmittedWorkDone();
  let logits: Float32Array | undefined;
  if (keepLogits) {
    const data = await out[LLAMA_IO.logits]!.getData();
    // float16 comes back as Uint16Array bits, or as Float16Array where the runtime has one.
    logits =
      data instanceof Uint16Array
        ? Float32Array.from(data, (h) => f16ToF32(h))
        : Float32Array.from(data as ArrayLike<number>);
  }
  for (const tensor of Object.values(out)) tensor.dispose();
  return logits;
}
