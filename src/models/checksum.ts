/**
 * CRC-32 (IEEE 802.3, the one zlib, PNG and gzip use): reflected polynomial 0xEDB88320, initial
 * value 0xFFFFFFFF, final XOR 0xFFFFFFFF. Check value: crc32(ASCII "123456789") = 0xCBF43926.
 *
 * Checkpoints use it to tell a damaged file from a good one before any weight is loaded; it is a
 * guard against accidents (truncated downloads, flipped bits), not against tampering.
 */

/** TABLE[n] = CRC of the single byte n, one bit at a time (the classic byte-wise table). */
const TABLE: Uint32Array = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/**
 * CRC-32 of `bytes`. To checksum data that arrives in pieces, pass the previous result as
 * `previous`: crc32(b, crc32(a)) === crc32(a ++ b).
 */
export function crc32(bytes: Uint8Array, previous = 0): number {
  let crc = (previous ^ 0xffffffff) >>> 0;
  for (let i = 0; i < bytes.length; i++) {
    crc = TABLE[(crc ^ bytes[i]!) & 0xff]! ^ (crc >>> 8);
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/** `value` as 8 hex digits, e.g. "0xcbf43926", for error messages. */
export function hex32(value: number): string {
  return `0x${(value >>> 0).toString(16).padStart(8, '0')}`;
}
