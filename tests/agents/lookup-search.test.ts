import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DOCUMENTS } from '../../src/agents/data/documents';
import { PRICE_ITEMS, PRICES } from '../../src/agents/data/prices';
import { lookupPrice, priceTool } from '../../src/agents/tools/lookup';
import {
  bestDocument,
  bm25Idf,
  bm25Scores,
  search,
  searchTokens,
  searchTool,
} from '../../src/agents/tools/search';
import {
  MAX_TOOL_RESULT_CHARS,
  runTool,
  ToolError,
  type ToolErrorReason,
} from '../../src/agents/tools/tool';

const failure = (run: () => unknown): { reason: ToolErrorReason; detail: string } => {
  try {
    run();
  } catch (error) {
    if (error instanceof ToolError) return { reason: error.reason, detail: error.detail };
    throw error;
  }
  throw new Error('expected a ToolError');
};
const inAlphabet = (text: string): boolean => /^[\n\x20-\x40\x5b-\x7e]*$/.test(text);

describe('price table', () => {
  it('holds about 40 lowercase single-word items with whole prices 2…99', () => {
    expect(PRICES.size).toBe(40);
    expect(PRICE_ITEMS).toHaveLength(40); // no duplicate names
    for (const [item, price] of PRICES) {
      expect(item).toMatch(/^[a-z]+$/);
      expect(Number.isInteger(price) && price >= 2 && price <= 99).toBe(true);
    }
  });

  it('is read-only', () => {
    expect(Object.isFrozen(PRICE_ITEMS)).toBe(true);
    // ReadonlyMap in the types; the shipped values are the literal ones.
    expect(PRICES.get('apple')).toBe(3);
  });
});

describe('price tool', () => {
  it.each([
    ['apple', '3'], // literal table values
    ['violin', '99'],
    ['spoon', '2'],
    ['  candle \n', '7'], // trimmed
  ])('price(%j) → %s', (args, expected) => {
    expect(lookupPrice(args)).toBe(expected);
    expect(priceTool.run(args)).toBe(expected);
  });

  it.each<[string, ToolErrorReason]>([
    ['unicorn', 'not-found'],
    ['Apple', 'not-found'], // exact keys only
    ['apples', 'not-found'],
    ['apple pie', 'not-found'],
    ['constructor', 'not-found'], // no prototype lookups
    ['__proto__', 'not-found'],
    ['toString', 'not-found'],
    ['', 'bad-arguments'],
    ['   ', 'bad-arguments'],
    ['a'.repeat(65), 'too-long'],
  ])('price(%j) fails %s', (args, reason) => {
    const error = failure(() => lookupPrice(args));
    expect(error.reason).toBe(reason);
    if (reason === 'not-found') expect(error.detail).toBe('unknown item'); // lists nothing
  });
});

describe('documents', () => {
  it('40 short lowercase facts, unique ids, one number each (the answer)', () => {
    expect(DOCUMENTS).toHaveLength(40);
    expect(new Set(DOCUMENTS.map((d) => d.id)).size).toBe(40);
    for (const d of DOCUMENTS) {
      expect(d.id).toMatch(/^[a-z]+(-[a-z]+)*$/);
      expect(d.text.length).toBeLessThanOrEqual(MAX_TOOL_RESULT_CHARS); // never clipped
      expect(d.text).toMatch(/^[a-z0-9 ]+$/);
      expect(d.question).toMatch(/^[a-z0-9 ?]+$/);
      expect(d.text.match(/\d+/g)).toEqual([d.answer]);
      expect(d.question).not.toMatch(/\d/); // the question does not give the answer away
    }
  });
});

describe('search: BM25', () => {
  it('tokenizes on anything but [a-z0-9], reading capitals as lowercase', () => {
    expect(searchTokens('Depth of lake-miro?')).toEqual(['depth', 'of', 'lake', 'miro']);
    expect(searchTokens('  ')).toEqual([]);
    expect(searchTokens('a1b2éc')).toEqual(['a1b2', 'c']);
  });

  it('idf: ln(1 + (N − df + 0.5)/(df + 0.5)), worked by hand', () => {
    // "miro" is in 1 of 40 documents: ln(1 + 39.5/1.5) = ln(27.333…)
    expect(bm25Idf('miro')).toBeCloseTo(Math.log(1 + 39.5 / 1.5), 12);
    // a word in no document: ln(1 + 40.5/0.5) = ln(82)
    expect(bm25Idf('zzz')).toBeCloseTo(Math.log(82), 12);
    // "the" is in 27 of the 40 documents (counted in documents.ts): ln(1 + 13.5/27.5)
    const withThe = DOCUMENTS.filter((d) => d.text.split(' ').includes('the')).length;
    expect(withThe).toBe(27);
    expect(bm25Idf('the')).toBeCloseTo(Math.log(1 + 13.5 / 27.5), 12);
  });

  it('scores one document by the formula (k1 = 1.2, b = 0.75), worked by hand', () => {
    // Query "miro": only lake-miro (index 0) holds it, tf = 1, |d| = 6 ("lake miro is 37 m deep").
    const lengths = DOCUMENTS.map((d) => d.text.split(' ').length);
    const avgdl = lengths.reduce((a, b) => a + b, 0) / lengths.length;
    const idf = Math.log(1 + 39.5 / 1.5);
    const expected = (idf * 1 * 2.2) / (1 + 1.2 * (1 - 0.75 + (0.75 * 6) / avgdl));
    const scores = bm25Scores('miro');
    expect(scores).toHaveLength(DOCUMENTS.length);
    expect(scores[0]).toBeCloseTo(expected, 12);
    expect(scores.slice(1).every((s) => s === 0)).toBe(true);
    // A repeated query term counts once.
    expect(bm25Scores('miro miro')).toEqual(scores);
  });

  it.each([
    ['depth of lake miro', 'lake miro is 37 m deep'],
    ['lake miro', 'lake miro is 37 m deep'],
    ['Mount Kelu height', 'mount kelu is 2841 m high'],
    ['when was the tamsa bridge built', 'the tamsa bridge was built in 1874'],
    ['sorrel finch eggs', 'the sorrel finch lays 5 eggs at a time'],
  ])('search(%j) → %j', (query, expected) => {
    expect(search(query)).toBe(expected);
    expect(searchTool.run(query)).toBe(expected);
  });

  it('ties go to the lower index', () => {
    // "deep" alone: lake-miro (0), mine-gorsk (12) and well-fenn (17) hold it once each; the
    // shorter documents score higher, and lake miro and fenn well are both 6 words long.
    const scores = bm25Scores('deep');
    expect(scores[0]).toBe(scores[17]);
    expect(scores[0]).toBeGreaterThan(scores[12]!);
    expect(bestDocument('deep')).toBe(0);
  });

  it('finds every document from its natural question (top-1)', () => {
    DOCUMENTS.forEach((d, i) => {
      const scores = bm25Scores(d.question);
      const best = bestDocument(d.question);
      expect({ question: d.question, best: DOCUMENTS[best]?.id }).toEqual({
        question: d.question,
        best: d.id,
      });
      // strictly better than every other document: no tie decides it
      scores.forEach((s, j) => {
        if (j !== i) expect(s).toBeLessThan(scores[i]!);
      });
      expect(search(d.question)).toBe(d.text);
    });
  });

  it.each<[string, ToolErrorReason]>([
    ['zzz qqq', 'not-found'], // no term in any document
    ['how', 'not-found'], // "how" is only in the questions
    ['', 'bad-arguments'],
    ['?!', 'bad-arguments'], // no search words
    ['éé', 'bad-arguments'],
    ['lake '.repeat(13), 'too-long'], // 65 characters
  ])('search(%j) fails %s', (query, reason) => {
    expect(failure(() => search(query)).reason).toBe(reason);
  });
});

describe('price and search: fuzz via runTool', () => {
  const tools = new Map([
    ['price', priceTool],
    ['search', searchTool],
  ]);
  const words = [...PRICE_ITEMS, ...DOCUMENTS.flatMap((d) => d.text.split(' '))];
  const args = fc.oneof(
    fc.array(fc.constantFrom(...words, ' ', '?', 'é'), { maxLength: 12 }).map((w) => w.join(' ')),
    fc.string({ unit: 'binary', maxLength: 80 }),
    fc.string({ unit: 'grapheme', maxLength: 40 }),
  );

  it('only ToolErrors, outcomes in the alphabet and short', () => {
    const seen = { ok: 0, failed: 0 };
    fc.assert(
      fc.property(fc.constantFrom('price', 'search'), args, (name, text) => {
        const outcome = runTool(tools, name, text);
        seen[outcome.ok ? 'ok' : 'failed']++;
        expect(outcome.text.length).toBeLessThanOrEqual(MAX_TOOL_RESULT_CHARS);
        expect(inAlphabet(outcome.text)).toBe(true);
        if (outcome.ok) {
          expect(outcome.reason).toBeUndefined();
          if (name === 'search') expect(DOCUMENTS.map((d) => d.text)).toContain(outcome.text);
          else expect(outcome.text).toMatch(/^\d+$/);
        } else {
          expect(outcome.text.startsWith('error: ')).toBe(true);
          expect(outcome.reason).toBeDefined();
        }
      }),
      { numRuns: 5000 },
    );
    expect(seen.ok).toBeGreaterThan(500);
    expect(seen.failed).toBeGreaterThan(500);
  });
});
