/**
 * The byte-level alphabet of GPT-2-style BPE tokenizers (Llama 3, Qwen2, SmolLM2, …): every byte
 * 0–255 is written as one printable character, so that a vocabulary of strings can hold any byte
 * sequence. Bytes that are printable in Latin-1 ('!'…'~', '¡'…'¬', '®'…'ÿ') stand for themselves;
 * the other 68 (controls, space, DEL, NBSP, soft hyphen) take U+0100, U+0101, … in byte order — so
 * a space is 'Ġ' (U+0120) and a newline 'Ċ' (U+010A).
 */

/** byte → its character in the byte-level alphabet. */
export const BYTE_TO_CHAR: readonly string[] = (() => {
  const chars: string[] = [];
  let next = 0x100;
  for (let byte = 0; byte < 256; byte++) {
    const printable =
      (byte >= 0x21 && byte <= 0x7e) || (byte >= 0xa1 && byte <= 0xac) || byte >= 0xae;
    chars.push(String.fromCharCode(printable ? byte : next++));
  }
  return chars;
})();

/** character of the byte-level alphabet → its byte. */
export const CHAR_TO_BYTE: ReadonlyMap<string, number> = new Map(
  BYTE_TO_CHAR.map((char, byte) => [char, byte]),
);

/** The bytes a byte-level token stands for; undefined if a character is outside the alphabet. */
export function byteLevelBytes(token: string): Uint8Array | undefined {
  const bytes = new Uint8Array(token.length); // every alphabet character is one UTF-16 unit
  for (let i = 0; i < token.length; i++) {
    const byte = CHAR_TO_BYTE.get(token[i]!);
    if (byte === undefined) return undefined;
    bytes[i] = byte;
  }
  return bytes;
}

// fatal: an incomplete or invalid sequence throws instead of becoming U+FFFD; ignoreBOM keeps a
// leading U+FEFF (a token may be exactly that character).
const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/**
 * Bytes as readable text: every complete, valid UTF-8 sequence as its character, every other byte
 * (a piece of a character split across tokens, or an invalid byte) as `<0xHH>` — the form
 * SentencePiece's byte tokens use — so that a token holding half of "€" (E2 82 AC) shows as
 * "<0xE2><0x82>" rather than a replacement character that hides which bytes it holds.
 */
export function readableBytes(bytes: Uint8Array): string {
  let text = '';
  let i = 0;
  while (i < bytes.length) {
    const length = sequenceLength(bytes[i]!);
    if (length > 0 && i + length <= bytes.length) {
      try {
        text += strictUtf8.decode(bytes.subarray(i, i + length));
        i += length;
        continue;
      } catch {
        // not a valid sequence (a continuation byte missing, overlong, a surrogate): show bytes
      }
    }
    text += `<0x${bytes[i]!.toString(16).toUpperCase().padStart(2, '0')}>`;
    i++;
  }
  return text;
}

/** How many bytes a UTF-8 sequence with this lead byte has; 0 for a byte that cannot lead one. */
function sequenceLength(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0;
}
