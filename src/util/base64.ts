/**
 * Base64 (RFC 4648 §4, with '=' padding: checkpoints in run files) and base64url (§5, no padding:
 * URL state). Decoding is strict — a character outside the alphabet, a wrong length or non-zero
 * spare bits is an error — so a damaged string is refused instead of decoding to other bytes.
 */

const STANDARD = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
const URL_SAFE = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';

export type Base64Variant = 'standard' | 'url';

/** Bytes → base64 ('standard': padded with '='; 'url': '-' and '_', no padding). */
export function bytesToBase64(bytes: Uint8Array, variant: Base64Variant = 'standard'): string {
  const alphabet = variant === 'url' ? URL_SAFE : STANDARD;
  const parts: string[] = [];
  let i = 0;
  for (; i + 2 < bytes.length; i += 3) {
    const n = (bytes[i]! << 16) | (bytes[i + 1]! << 8) | bytes[i + 2]!;
    parts.push(
      alphabet[(n >> 18) & 63]! +
        alphabet[(n >> 12) & 63]! +
        alphabet[(n >> 6) & 63]! +
        alphabet[n & 63]!,
    );
  }
  const rest = bytes.length - i;
  if (rest > 0) {
    const n = (bytes[i]! << 16) | ((rest === 2 ? bytes[i + 1]! : 0) << 8);
    let tail = alphabet[(n >> 18) & 63]! + alphabet[(n >> 12) & 63]!;
    if (rest === 2) tail += alphabet[(n >> 6) & 63]!;
    if (variant === 'standard') tail += rest === 2 ? '=' : '==';
    parts.push(tail);
  }
  return parts.join('');
}

/**
 * Base64 → bytes; throws a RangeError saying what is wrong (the character and its index, or the
 * length) for anything that is not canonical base64 of the variant.
 */
export function base64ToBytes(text: string, variant: Base64Variant = 'standard'): Uint8Array {
  const alphabet = variant === 'url' ? URL_SAFE : STANDARD;
  let body = text;
  if (variant === 'standard') {
    if (text.length % 4 !== 0) {
      throw new RangeError(`length must be a multiple of 4, got ${text.length}`);
    }
    const pad = text.endsWith('==') ? 2 : text.endsWith('=') ? 1 : 0;
    body = text.slice(0, text.length - pad);
  } else if (text.length % 4 === 1) {
    throw new RangeError(`length ${text.length} is not a possible base64url length`);
  }
  const values = new Uint8Array(body.length);
  for (let i = 0; i < body.length; i++) {
    const v = alphabet.indexOf(body[i]!);
    if (v < 0) {
      throw new RangeError(`character ${JSON.stringify(body[i])} at index ${i} is not base64`);
    }
    values[i] = v;
  }
  const full = Math.floor(body.length / 4);
  const rest = body.length % 4; // 0, 2 or 3 (1 was refused or cannot follow the padding check)
  if (rest === 1) throw new RangeError(`length ${text.length} is not a possible base64 length`);
  const out = new Uint8Array(full * 3 + (rest === 0 ? 0 : rest - 1));
  let o = 0;
  for (let q = 0; q < full; q++) {
    const n =
      (values[4 * q]! << 18) |
      (values[4 * q + 1]! << 12) |
      (values[4 * q + 2]! << 6) |
      values[4 * q + 3]!;
    out[o++] = (n >> 16) & 255;
    out[o++] = (n >> 8) & 255;
    out[o++] = n & 255;
  }
  if (rest > 0) {
    const a = values[4 * full]!;
    const b = values[4 * full + 1]!;
    const c = rest === 3 ? values[4 * full + 2]! : 0;
    const n = (a << 18) | (b << 12) | (c << 6);
    // The bits after the last whole byte must be zero, or two strings would decode alike.
    if ((rest === 2 && (n & 0xffff) !== 0) || (rest === 3 && (n & 0xff) !== 0)) {
      throw new RangeError('the last character has bits set beyond the data (not canonical)');
    }
    out[o] = (n >> 16) & 255;
    if (rest === 3) out[o + 1] = (n >> 8) & 255;
  }
  return out;
}
