import { createHash } from 'node:crypto';
import { describe, expect, it, vi } from 'vitest';
import {
  FINGERPRINT_CHUNK_BYTES,
  shortFingerprint,
  weightsFingerprint,
} from '../../src/models/weights-fingerprint';

const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest();
const bytesOf = (w: Float32Array) => new Uint8Array(w.buffer, w.byteOffset, w.byteLength);

describe('weightsFingerprint', () => {
  it('is the sha256 of the chunk digests (one chunk: the digest of one digest)', async () => {
    const weights = Float32Array.from({ length: 1000 }, (_, i) => Math.sin(i));
    const expected = sha(sha(bytesOf(weights))).toString('hex');
    expect(await weightsFingerprint(weights)).toBe(`sha256:${expected}`);
  });

  it('hashes 64 MiB chunks in order, the last one shorter', async () => {
    const floats = FINGERPRINT_CHUNK_BYTES / 4 + 3;
    const weights = new Float32Array(floats);
    for (let i = 0; i < floats; i += 997) weights[i] = i;
    const bytes = bytesOf(weights);
    const first = sha(bytes.subarray(0, FINGERPRINT_CHUNK_BYTES));
    const rest = sha(bytes.subarray(FINGERPRINT_CHUNK_BYTES));
    const expected = sha(Buffer.concat([first, rest])).toString('hex');
    expect(await weightsFingerprint(weights)).toBe(`sha256:${expected}`);
  });

  it('names the values of a view, not its whole buffer, and tells one weight apart', async () => {
    const buffer = new Float32Array(20).map((_, i) => i);
    const view = buffer.subarray(5, 15);
    expect(await weightsFingerprint(view)).toBe(await weightsFingerprint(view.slice()));
    const changed = view.slice();
    changed[9] = Math.fround(changed[9]! + 1e-6 * changed[9]!) || 1e-30;
    expect(await weightsFingerprint(changed)).not.toBe(await weightsFingerprint(view));
  });

  it('falls back to CRC-32 where WebCrypto is missing', async () => {
    const weights = Float32Array.from([1, 2, 3]);
    vi.stubGlobal('crypto', undefined);
    try {
      expect(await weightsFingerprint(weights)).toMatch(/^crc32:[0-9a-f]{8}$/);
    } finally {
      vi.unstubAllGlobals();
    }
  });

  it('shortens for people', () => {
    expect(shortFingerprint(`sha256:${'ab'.repeat(32)}`)).toBe('sha256:abababababab');
  });
});
