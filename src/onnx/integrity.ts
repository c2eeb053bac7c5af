/**
 * The checksum of an exported ONNX file, so that a damaged copy (a flipped bit, a cut download) is
 * refused instead of loading weights that silently differ from the ones exported.
 *
 *   file = [metadata_props entry { key: "agent-rl-lab/crc32", value: "0x…" }] ++ rest
 *
 * The entry is the file's first field (protobuf lets fields come in any order, and ONNX readers
 * see one more metadata entry); its value is the CRC-32 of every byte after it, so the whole file
 * but the checksum itself is covered, and reading needs no re-encoding. Exports with a checksum say
 * producer_version "2"; a file from this lab's producer with any version but "1" (written before
 * checksums) must carry one, so a flip that breaks the entry's own key is refused too.
 *
 * A file without one — an export from before, or one rewritten by another tool (which puts the
 * entry back among the other metadata, where it no longer covers what follows) — is accepted with
 * a note saying its weights could not be checked. No single flipped bit turns a checked file into
 * either. CRC-32 guards against accidents, not tampering.
 */
import { crc32, hex32 } from '../models/checksum';
import { OnnxError } from './onnx-error';
import type { ModelProto } from './onnx-proto';
import { ProtoWriter } from './protobuf';

export const CHECKSUM_KEY = 'agent-rl-lab/crc32';
export const PRODUCER = 'agent-rl-lab';
/** producer_version of exports that carry a checksum. */
export const PRODUCER_VERSION = '2';
/** producer_version of this lab's exports from before checksums (the shipped models, for now). */
const UNCHECKED_VERSION = '1';

/** What the importer knows of a file's integrity. */
export type Integrity = { checked: true } | { checked: false; note: string };

/** `body` (an encoded ModelProto) with its checksum entry in front. */
export function withChecksum(body: Uint8Array): Uint8Array {
  const entry = checksumEntry(hex32(crc32(body)));
  const out = new Uint8Array(entry.length + body.length);
  out.set(entry);
  out.set(body, entry.length);
  return out;
}

/** The metadata entry (ModelProto field 14) that carries `value`, as bytes. */
function checksumEntry(value: string): Uint8Array {
  return new ProtoWriter().message(14, (e) => e.string(1, CHECKSUM_KEY).string(2, value)).finish();
}

/**
 * Checks the checksum of `bytes`, already decoded as `model`: throws an OnnxError ('damaged') when
 * it does not match or is missing where this lab's producer always writes one; tells whether the
 * file could be checked at all.
 */
export function checkIntegrity(bytes: Uint8Array, model: ModelProto): Integrity {
  const field = `metadata_props["${CHECKSUM_KEY}"]`;
  const entries = model.metadataProps.filter((e) => e.key === CHECKSUM_KEY);
  const unchecked = (why: string): Integrity => ({
    checked: false,
    note: `This ONNX file ${why}, so damage to its weights could not be detected.`,
  });
  if (entries.length === 0) {
    if (model.producerName === PRODUCER && model.producerVersion !== UNCHECKED_VERSION) {
      throw new OnnxError(
        'damaged',
        field,
        `is missing, but this lab's exports of producer_version ` +
          `"${model.producerVersion ?? ''}" always carry one: the file is damaged`,
      );
    }
    return unchecked('has no checksum (exported before checksums, or rewritten by another tool)');
  }
  if (entries.length > 1) throw new OnnxError('damaged', field, 'appears more than once');
  const value = entries[0]!.value;
  if (!/^0x[0-9a-f]{8}$/.test(value)) {
    throw new OnnxError(
      'damaged',
      field,
      `must be "0x" and 8 hex digits, got "${value.slice(0, 20)}"`,
    );
  }
  const entry = checksumEntry(value);
  if (!startsWith(bytes, entry)) {
    return unchecked('was rewritten after export (its checksum is no longer its first field)');
  }
  const actual = hex32(crc32(bytes.subarray(entry.length)));
  if (actual !== value) {
    throw new OnnxError(
      'damaged',
      field,
      `is ${value}, but the file's bytes give ${actual}: the file is damaged (a cut or ` +
        'changed copy); export it again',
    );
  }
  return { checked: true };
}

function startsWith(bytes: Uint8Array, prefix: Uint8Array): boolean {
  if (bytes.length < prefix.length) return false;
  for (let i = 0; i < prefix.length; i++) if (bytes[i] !== prefix[i]) return false;
  return true;
}
