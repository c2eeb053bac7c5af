/**
 * What makes an ONNX file "ours": opset, producer and the metadata_props keys that carry the
 * model's config and tokenizer, shared by the exporters and the importer.
 *
 *   'agent-rl-lab/format'  'transformer' | 'mlp-actor-critic' (the checkpoint kinds)
 *   'config'               the model config as JSON (TransformerConfig, or { actor, critic })
 *   'tokenizer'            the TokenizerSpec as JSON (transformer only)
 *   'agent-rl-lab/crc32'   the checksum of the rest of the file (integrity.ts), the first field
 * Any other key is free-form metadata (the exporter's `meta`), returned by the importer as-is.
 */
import { ACTOR_CRITIC_KIND } from '../models/mlp-checkpoint';
import { TRANSFORMER_KIND } from '../models/lm-checkpoint';
import { CHECKSUM_KEY, PRODUCER, PRODUCER_VERSION, withChecksum } from './integrity';
import { OnnxError } from './onnx-error';
import { encodeModel, IR_VERSION, type GraphProto } from './onnx-proto';

export const FORMAT_KEY = 'agent-rl-lab/format';
export const CONFIG_KEY = 'config';
export const TOKENIZER_KEY = 'tokenizer';
const RESERVED_KEYS: readonly string[] = [FORMAT_KEY, CONFIG_KEY, TOKENIZER_KEY, CHECKSUM_KEY];

export const ONNX_FORMATS = [TRANSFORMER_KIND, ACTOR_CRITIC_KIND] as const;
export type OnnxFormat = (typeof ONNX_FORMATS)[number];

/** ai.onnx opset 17: LayerNormalization exists (17+); Gelu does not yet (20+), so it is composed. */
export const OPSET = 17;

/** Optional extras of an export. */
export interface ExportExtra {
  /** Free-form metadata_props (task, step, success rate …); keys must not be the reserved ones. */
  meta?: Record<string, string | number | boolean>;
  /** ModelProto.doc_string: a line for people opening the file in a viewer. */
  docString?: string;
}

/** The graph + our metadata → the bytes of a ModelProto, its checksum in front (integrity.ts). */
export function buildModel(
  graph: GraphProto,
  format: OnnxFormat,
  entries: Record<string, string>,
  extra: ExportExtra = {},
): Uint8Array {
  const metadataProps: { key: string; value: string }[] = [{ key: FORMAT_KEY, value: format }];
  for (const [key, value] of Object.entries(entries)) metadataProps.push({ key, value });
  for (const [key, value] of Object.entries(extra.meta ?? {})) {
    if (RESERVED_KEYS.includes(key)) {
      throw new OnnxError('input', `meta.${key}`, 'is reserved for the model description');
    }
    metadataProps.push({ key, value: String(value) });
  }
  const body = encodeModel({
    irVersion: IR_VERSION,
    opsetImports: [{ domain: '', version: OPSET }],
    producerName: PRODUCER,
    producerVersion: PRODUCER_VERSION,
    ...(extra.docString !== undefined ? { docString: extra.docString } : {}),
    graph,
    metadataProps,
  });
  return withChecksum(body);
}

/** Metadata the importer gives back: every key that is not one of the reserved ones. */
export function freeMetadata(props: { key: string; value: string }[]): Record<string, string> {
  // fromEntries defines own properties: a key "__proto__" stays a key, not the object's prototype.
  return Object.fromEntries(
    props.filter(({ key }) => !RESERVED_KEYS.includes(key)).map(({ key, value }) => [key, value]),
  );
}
