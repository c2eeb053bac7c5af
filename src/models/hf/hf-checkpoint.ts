/**
 * Loading a Hugging Face checkpoint's weights into the flat arrays of the model's 'base' group:
 * model.safetensors, or the shards that model.safetensors.index.json's weight_map names. Every
 * tensor the family expects must be present with its shape; a missing, unexpected or misshapen
 * tensor is named. A tied checkpoint that also carries lm_head.weight is accepted (the copy is
 * not read), as are the rotary inv_freq buffers some older exports hold.
 *
 * Values go into f32 (exact from F32, F16 and BF16) and/or f16 halves for GPU storage (rounded to
 * nearest even, overflow to ±inf counted), a tensor at a time, so no file is read whole; with
 * onTensorData the values stream out a tensor at a time and no whole-model array is kept.
 */
import type { ModelSpec } from '../model-spec';
import { ParamLayout, type ParamEntry } from '../param-layout';
import { hfParamSpecs } from './hf-weights';
import type { RandomAccessSource } from './random-access-source';
import {
  readSafetensorsHeader,
  readTensorF16,
  readTensorF32,
  type SafetensorsDtype,
  type SafetensorsHeader,
  type TensorInfo,
} from './safetensors';

export const SINGLE_FILE = 'model.safetensors';
export const INDEX_FILE = 'model.safetensors.index.json';

/** A checkpoint folder: the file named `name`, or undefined when there is none. */
export interface CheckpointFiles {
  open(name: string): Promise<RandomAccessSource | undefined>;
}

/** A checkpoint's files held in memory or as Blobs (picked files, tests), by file name. */
export function filesFrom(map: ReadonlyMap<string, RandomAccessSource>): CheckpointFiles {
  return { open: (name) => Promise.resolve(map.get(name)) };
}

export interface LoadOptions {
  /** Fill an f32 array (the CPU path; default true). */
  f32?: boolean;
  /** Fill f16 halves (GPU f16 storage; default false). */
  f16?: boolean;
  /** After each tensor: how many are done of how many. */
  onTensor?: (done: number, total: number, name: string) => void;
  /**
   * Streams each tensor's values instead of keeping the whole model: called once per tensor with
   * its layout entry and its values (views valid only during the call, e.g. for writeBuffer at
   * entry.offset), and no whole-model arrays are allocated or returned.
   */
  onTensorData?: (
    entry: ParamEntry,
    values: { f32?: Float32Array; f16?: Uint16Array },
  ) => void | Promise<void>;
}

export interface LoadedWeights {
  layout: ParamLayout;
  /** layout.total floats, padding zero (not when streamed). */
  f32?: Float32Array;
  /** layout.total f16 bit patterns, padding zero (not when streamed). */
  f16?: Uint16Array;
  /** Finite values that became ±inf in f16 (0 when f16 was not asked for). */
  overflowed: number;
  /** The dtypes the file stores, e.g. ['BF16']. */
  dtypes: SafetensorsDtype[];
  /** Tensors present and not read (a tied checkpoint's lm_head, inv_freq buffers). */
  ignored: string[];
}

/** A checkpoint that does not match the model: what is wrong, naming the tensors. */
export class CheckpointError extends Error {
  override readonly name = 'CheckpointError';
}

interface Located {
  /** The file name in the checkpoint folder. */
  file: string;
  header: SafetensorsHeader;
  info: TensorInfo;
}

const MAX_SHARDS = 1024;

/** Opens the checkpoint's safetensors files and maps every tensor name to where it is. */
export async function locateTensors(files: CheckpointFiles): Promise<Map<string, Located>> {
  const index = await files.open(INDEX_FILE);
  const shardNames: string[] = [];
  let weightMap: Record<string, string> | undefined;
  if (index) {
    weightMap = await readIndex(index);
    shardNames.push(...new Set(Object.values(weightMap)));
  } else {
    shardNames.push(SINGLE_FILE);
  }
  const located = new Map<string, Located>();
  for (const shard of shardNames) {
    const source = await files.open(shard);
    if (!source) {
      throw new CheckpointError(
        index
          ? `${INDEX_FILE} names the shard "${shard}", which is not among the files`
          : `no ${SINGLE_FILE} or ${INDEX_FILE} among the files`,
      );
    }
    const header = await readSafetensorsHeader(source);
    for (const info of header.tensors) {
      const before = located.get(info.name);
      if (before) {
        throw new CheckpointError(`tensor "${info.name}" is in both ${before.file} and ${shard}`);
      }
      located.set(info.name, { file: shard, header, info });
    }
  }
  if (weightMap) {
    for (const [name, shard] of Object.entries(weightMap)) {
      const found = located.get(name);
      if (!found)
        throw new CheckpointError(
          `${INDEX_FILE} puts "${name}" in ${shard}, which does not hold it`,
        );
      if (found.file !== shard) {
        throw new CheckpointError(
          `${INDEX_FILE} puts "${name}" in ${shard}, but it is in ${found.file}`,
        );
      }
    }
  }
  return located;
}

async function readIndex(source: RandomAccessSource): Promise<Record<string, string>> {
  if (source.size > 50_000_000)
    throw new CheckpointError(`${INDEX_FILE} is ${source.size} bytes (at most 50 MB)`);
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder().decode(await source.read(0, source.size)));
  } catch (error) {
    throw new CheckpointError(`${INDEX_FILE} is not valid JSON (${(error as Error).message})`);
  }
  const map = (json as { weight_map?: unknown } | null)?.weight_map;
  if (typeof map !== 'object' || map === null || Array.isArray(map)) {
    throw new CheckpointError(
      `${INDEX_FILE}: weight_map must be an object of tensor name → shard file`,
    );
  }
  const shards = new Set<string>();
  for (const [name, shard] of Object.entries(map)) {
    // A shard is a file beside the index: no folders, no way out of the checkpoint's folder.
    if (
      typeof shard !== 'string' ||
      !/^[\w.-]+\.safetensors$/.test(shard) ||
      shard.startsWith('.')
    ) {
      throw new CheckpointError(
        `${INDEX_FILE}: weight_map["${name.slice(0, 100)}"] must name a .safetensors file beside it`,
      );
    }
    shards.add(shard);
  }
  if (shards.size > MAX_SHARDS)
    throw new CheckpointError(`${INDEX_FILE} names ${shards.size} shards (at most ${MAX_SHARDS})`);
  return map as Record<string, string>;
}

/** Lists up to 8 names, then how many more. */
function list(names: string[]): string {
  const shown = names.slice(0, 8).join(', ');
  return names.length > 8 ? `${shown} and ${names.length - 8} more` : shown;
}

/** Loads `spec`'s weights from `files`; throws CheckpointError naming what does not match. */
export async function loadHfWeights(
  spec: ModelSpec,
  files: CheckpointFiles,
  options: LoadOptions = {},
): Promise<LoadedWeights> {
  const layout = new ParamLayout(hfParamSpecs(spec));
  const located = await locateTensors(files);
  const missing = layout.entries.filter((e) => !located.has(e.name)).map((e) => e.name);
  const ignored: string[] = [];
  const extra: string[] = [];
  for (const name of located.keys()) {
    if (layout.has(name)) continue;
    if ((name === 'lm_head.weight' && spec.tiedEmbeddings) || name.endsWith('.rotary_emb.inv_freq'))
      ignored.push(name);
    else extra.push(name);
  }
  const problems: string[] = [];
  if (missing.length > 0) problems.push(`missing ${missing.length} tensor(s): ${list(missing)}`);
  if (extra.length > 0)
    problems.push(
      `${extra.length} tensor(s) the ${spec.family} config does not have: ${list(extra)}`,
    );
  for (const entry of layout.entries) {
    const found = located.get(entry.name);
    if (found && found.info.shape.join(',') !== entry.shape.join(',')) {
      problems.push(
        `"${entry.name}" has shape [${found.info.shape.join(', ')}], the config gives [${entry.shape.join(', ')}]`,
      );
    }
  }
  if (problems.length > 0)
    throw new CheckpointError(`the checkpoint does not match config.json: ${problems.join('; ')}`);

  const wantF32 = options.f32 !== false;
  const wantF16 = options.f16 === true;
  const stream = options.onTensorData;
  // Streaming: one scratch array the size of the largest tensor, reused; else the whole model.
  const largest = Math.max(...layout.entries.map((e) => e.size));
  const f32 = wantF32 ? new Float32Array(stream ? largest : layout.total) : undefined;
  const f16 = wantF16 ? new Uint16Array(stream ? largest : layout.total) : undefined;
  let overflowed = 0;
  const dtypes = new Set<SafetensorsDtype>();
  let done = 0;
  for (const entry of layout.entries) {
    const { header, info } = located.get(entry.name)!;
    dtypes.add(info.dtype);
    const start = stream ? 0 : entry.offset;
    const f32Values = f32?.subarray(start, start + entry.size);
    const f16Values = f16?.subarray(start, start + entry.size);
    if (f32Values) await readTensorF32(header, info, f32Values);
    if (f16Values) overflowed += (await readTensorF16(header, info, f16Values)).overflowed;
    if (stream) await stream(entry, { f32: f32Values, f16: f16Values });
    options.onTensor?.(++done, layout.entries.length, entry.name);
  }
  if (stream) return { layout, overflowed, dtypes: [...dtypes].sort(), ignored };
  return { layout, f32, f16, overflowed, dtypes: [...dtypes].sort(), ignored };
}
