/**
 * A fingerprint of a model's weights, so that saved adapters name the base they were trained on
 * and a resumed run refuses another model: "sha256:" and the hex of
 *
 *   sha256( sha256(chunk 0) ‖ sha256(chunk 1) ‖ … )
 *
 * over the weights' float32 little-endian bytes in chunks of 64 MiB (the last one shorter). The
 * chunks keep every digest call small (WebCrypto hashes one buffer at a time, and a 0.5B model's
 * f32 weights are 2 GB). It names the values, not the files: the same weights from bf16 shards or
 * one f32 file have one fingerprint. Where WebCrypto is missing (a page served over plain http
 * from another host) it is "crc32:" and the CRC-32 of the same bytes: weaker, still a guard
 * against loading the wrong model.
 */
import { crc32 } from './checksum';

export const FINGERPRINT_CHUNK_BYTES = 64 * 1024 * 1024;

/** The fingerprint of `weights` (see the file comment). */
export async function weightsFingerprint(weights: Float32Array): Promise<string> {
  const bytes = new Uint8Array(weights.buffer, weights.byteOffset, weights.byteLength);
  const subtle = globalThis.crypto?.subtle;
  if (!subtle) return `crc32:${crc32(bytes).toString(16).padStart(8, '0')}`;
  const chunks = Math.max(1, Math.ceil(bytes.length / FINGERPRINT_CHUNK_BYTES));
  const digests = new Uint8Array(32 * chunks);
  for (let c = 0; c < chunks; c++) {
    const start = c * FINGERPRINT_CHUNK_BYTES;
    // A copy per chunk: digest() takes a BufferSource it may read later, and the weights may be
    // transferred to a worker before it does.
    const chunk = bytes.slice(start, Math.min(bytes.length, start + FINGERPRINT_CHUNK_BYTES));
    digests.set(new Uint8Array(await subtle.digest('SHA-256', chunk)), 32 * c);
  }
  const whole = new Uint8Array(await subtle.digest('SHA-256', digests));
  return `sha256:${[...whole].map((b) => b.toString(16).padStart(2, '0')).join('')}`;
}

/** A fingerprint shortened for people: its kind and first 12 hex digits. */
export function shortFingerprint(fingerprint: string): string {
  const [kind, hex] = fingerprint.split(':');
  return hex ? `${kind}:${hex.slice(0, 12)}` : fingerprint;
}
