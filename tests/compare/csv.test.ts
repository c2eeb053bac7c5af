import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { csvField, metricsToCsv } from '../../src/compare/csv';

/** A small RFC 4180 reader for the tests: quoted fields, doubled quotes, CRLF records. */
function readCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let i = 0;
  let quoted = false;
  while (i < text.length) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
      } else if (c === '"') {
        quoted = false;
        i += 1;
      } else {
        field += c;
        i += 1;
      }
    } else if (c === '"') {
      quoted = true;
      i += 1;
    } else if (c === ',') {
      row.push(field);
      field = '';
      i += 1;
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
      i += 2;
    } else {
      field += c;
      i += 1;
    }
  }
  if (field !== '' || row.length > 0) throw new Error('the last record has no CRLF');
  return rows;
}

const parseNumber = (text: string) => (text === '' ? NaN : Number(text));

describe('metricsToCsv', () => {
  it('writes the header, one row per update, NaN as empty (hand-written)', () => {
    const csv = metricsToCsv({ 'reward/mean': [0.5, NaN, 1], 'a,b': [1, 2, Infinity] });
    expect(csv).toBe('update,reward/mean,"a,b"\r\n1,0.5,1\r\n2,,2\r\n3,1,Infinity\r\n');
  });

  it('quotes fields with quotes, CR or LF, doubling inner quotes', () => {
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField('plain')).toBe('plain');
  });

  it('picks and orders columns; a metric the run lacks is an empty column', () => {
    const csv = metricsToCsv({ a: [1, 2], b: [3] }, ['b', 'missing', 'a']);
    expect(csv).toBe('update,b,missing,a\r\n1,3,,1\r\n2,,,2\r\n');
  });

  it('reads back to the same names and values', () => {
    const value = fc.oneof(
      fc.double({ noNaN: false }).map((v) => v + 0), // -0 is written "0"
      fc.constant(NaN),
    );
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ unit: 'grapheme', maxLength: 12 }), { maxLength: 5 }),
        fc.integer({ min: 0, max: 8 }),
        fc.infiniteStream(value),
        (names, rows, stream) => {
          const metrics = Object.fromEntries(
            names.map((name) => [name, Array.from({ length: rows }, () => stream.next().value)]),
          );
          const table = readCsv(metricsToCsv(metrics, names));
          expect(table[0]).toEqual(['update', ...names]);
          const height = names.length === 0 ? 0 : rows;
          expect(table.length).toBe(1 + height);
          for (let r = 0; r < height; r++) {
            expect(table[r + 1]![0]).toBe(String(r + 1));
            names.forEach((name, c) => {
              expect(parseNumber(table[r + 1]![c + 1]!)).toEqual(metrics[name]![r]);
            });
          }
        },
      ),
    );
  });
});
