/** Flag numbers in decimal notation only, and bad values quoted cut to a bounded length. */
import { describe, expect, it } from 'vitest';
import { parseDecimal } from '../../src/util/decimal';
import { SHOWN_TEXT_MAX, shownText, shownValue } from '../../src/util/shown-text';

describe('parseDecimal', () => {
  it.each<[string, number]>([
    ['16', 16],
    ['-3', -3],
    ['+2', 2],
    ['0.5', 0.5],
    ['.5', 0.5],
    ['5.', 5],
    ['1e3', 1000],
    ['1E-3', 0.001],
    ['1e400', Infinity], // decimal notation; the range check refuses it
  ])('reads %s', (text, value) => {
    expect(parseDecimal(text)).toBe(value);
  });

  it.each([
    '0x10',
    '0o7',
    '0b11',
    '',
    ' ',
    ' 1',
    '1 ',
    'Infinity',
    'NaN',
    '1_000',
    '1e',
    '.',
    '--1',
    '١٢',
  ])('refuses %j (Number() would read several of these)', (text) => {
    expect(parseDecimal(text)).toBeNaN();
  });
});

describe('shownText', () => {
  it('keeps short text and cuts long text to SHOWN_TEXT_MAX characters with …', () => {
    expect(shownText('abc')).toBe('abc');
    // The first SHOWN_TEXT_MAX − 3 characters, then '…' (as the run-file messages always cut).
    expect(shownText('x'.repeat(5_000_000))).toBe(`${'x'.repeat(SHOWN_TEXT_MAX - 3)}…`);
    expect(shownValue(new Array(1_000_000).fill(1))).toBe(`${'1,'.repeat(18)}1…`);
  });
});
