import fc from 'fast-check';
import { Buffer } from 'node:buffer';
import { describe, expect, it } from 'vitest';
import { base64ToBytes, bytesToBase64 } from '../../src/util/base64';

describe('base64', () => {
  it('matches RFC 4648 test vectors', () => {
    // RFC 4648 §10: "f" → "Zg==", "fo" → "Zm8=", "foo" → "Zm9v", "foobar" → "Zm9vYmFy".
    const bytes = (s: string) => new TextEncoder().encode(s);
    expect(bytesToBase64(bytes('f'))).toBe('Zg==');
    expect(bytesToBase64(bytes('fo'))).toBe('Zm8=');
    expect(bytesToBase64(bytes('foobar'))).toBe('Zm9vYmFy');
    expect(bytesToBase64(bytes('fo'), 'url')).toBe('Zm8');
    expect(bytesToBase64(new Uint8Array([0xfb, 0xff]), 'url')).toBe('-_8');
  });

  it("agrees with Node's Buffer both ways, in both variants", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        const standard = Buffer.from(bytes).toString('base64');
        const url = Buffer.from(bytes).toString('base64url');
        expect(bytesToBase64(bytes)).toBe(standard);
        expect(bytesToBase64(bytes, 'url')).toBe(url);
        expect(base64ToBytes(standard)).toEqual(bytes);
        expect(base64ToBytes(url, 'url')).toEqual(bytes);
      }),
    );
  });

  it.each([
    ['Zm9', 'standard', 'length must be a multiple of 4, got 3'],
    ['Zm9$', 'standard', 'character "$" at index 3 is not base64'],
    ['Z===', 'standard', 'character "=" at index 1 is not base64'],
    ['AB==', 'standard', 'not canonical'],
    ['Zm9v+', 'url', 'length 5 is not a possible base64url length'],
    ['Zm8/', 'url', 'character "/" at index 3 is not base64'],
  ] as const)('refuses %s (%s): %s', (text, variant, message) => {
    expect(() => base64ToBytes(text, variant)).toThrow(message);
  });
});
