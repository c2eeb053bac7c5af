/**
 * search(query): BM25 retrieval over the shipped document collection (src/agents/data/documents.ts),
 * the offline stand-in for a web search. Returns the text of the best-scoring document, e.g.
 * search(depth of lake miro) → "lake miro is 37 m deep".
 *
 * Tokens: maximal runs of [a-z0-9] (capital ASCII letters read as lowercase); every other
 * character, unicode letters included, separates tokens. No stemming, no stop words: common words
 * ("the", "is") get a low idf and barely count.
 *
 * Score of document d for query q (classic Okapi BM25, k1 = 1.2, b = 0.75):
 *
 *   score(d, q) = Σ_{t ∈ distinct terms of q} idf(t) · tf(t,d)·(k1 + 1) / (tf(t,d) + k1·(1 − b + b·|d|/avgdl))
 *   idf(t)      = ln(1 + (N − df(t) + 0.5) / (df(t) + 0.5))
 *
 * idf is the Robertson–Spärck Jones weight with +1 inside the log, as Lucene's BM25Similarity
 * writes it, so it is never negative (a term in every document still scores ≥ 0). A query term
 * repeated counts once. Lucene ≥ 8 leaves out the (k1 + 1) factor; it scales every score alike and
 * does not change the ranking. The best score wins, ties going to the lower document index; when
 * every score is 0 (no query term in any document) the call fails 'not-found'.
 */
import { DOCUMENTS } from '../data/documents';
import { MAX_TOOL_ARGS_CHARS, ToolError, type Tool } from './tool';

export const BM25_K1 = 1.2;
export const BM25_B = 0.75;

/** Lowercase [a-z0-9] runs of `text`, in order (a hand scanner: linear, no regex). */
export function searchTokens(text: string): string[] {
  const tokens: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    let c = '';
    if ((code >= 0x61 && code <= 0x7a) || (code >= 0x30 && code <= 0x39)) c = text[i]!;
    else if (code >= 0x41 && code <= 0x5a) c = String.fromCharCode(code + 0x20);
    if (c !== '') {
      current += c;
    } else if (current !== '') {
      tokens.push(current);
      current = '';
    }
  }
  if (current !== '') tokens.push(current);
  return tokens;
}

interface Index {
  /** Per document: term → count. */
  termCounts: Map<string, number>[];
  lengths: number[];
  averageLength: number;
  /** Term → number of documents holding it. */
  documentFrequency: Map<string, number>;
}

/** Built once at load: the collection is fixed. */
const INDEX: Index = (() => {
  const termCounts = DOCUMENTS.map((d) => {
    const counts = new Map<string, number>();
    for (const t of searchTokens(d.text)) counts.set(t, (counts.get(t) ?? 0) + 1);
    return counts;
  });
  const lengths = DOCUMENTS.map((d) => searchTokens(d.text).length);
  const documentFrequency = new Map<string, number>();
  for (const counts of termCounts) {
    for (const t of counts.keys()) documentFrequency.set(t, (documentFrequency.get(t) ?? 0) + 1);
  }
  const averageLength = lengths.reduce((a, b) => a + b, 0) / lengths.length;
  return { termCounts, lengths, averageLength, documentFrequency };
})();

/** BM25 idf of `term` over the collection (0 documents hold it → the largest idf). */
export function bm25Idf(term: string): number {
  const n = DOCUMENTS.length;
  const df = INDEX.documentFrequency.get(term) ?? 0;
  return Math.log(1 + (n - df + 0.5) / (df + 0.5));
}

/** (DOCUMENTS.length) the BM25 score of every document for `query`, in collection order. */
export function bm25Scores(query: string): number[] {
  const terms = [...new Set(searchTokens(query))];
  const { termCounts, lengths, averageLength } = INDEX;
  return DOCUMENTS.map((_, d) => {
    const norm = BM25_K1 * (1 - BM25_B + (BM25_B * lengths[d]!) / averageLength);
    let score = 0;
    for (const t of terms) {
      const tf = termCounts[d]!.get(t) ?? 0;
      if (tf > 0) score += (bm25Idf(t) * tf * (BM25_K1 + 1)) / (tf + norm);
    }
    return score;
  });
}

/** Index of the best document for `query` (ties → lower index), or −1 when every score is 0. */
export function bestDocument(query: string): number {
  const scores = bm25Scores(query);
  let best = -1;
  let bestScore = 0;
  scores.forEach((s, d) => {
    if (s > bestScore) {
      best = d;
      bestScore = s;
    }
  });
  return best;
}

export function search(args: string): string {
  if (typeof args !== 'string') {
    throw new ToolError('bad-arguments', 'search', 'arguments must be text');
  }
  if (args.length > MAX_TOOL_ARGS_CHARS) {
    throw new ToolError(
      'too-long',
      'search',
      `query longer than ${MAX_TOOL_ARGS_CHARS} characters`,
      MAX_TOOL_ARGS_CHARS,
    );
  }
  if (searchTokens(args).length === 0) {
    throw new ToolError('bad-arguments', 'search', 'expected search words', 0);
  }
  const best = bestDocument(args);
  if (best < 0) throw new ToolError('not-found', 'search', 'no matching document');
  return DOCUMENTS[best]!.text;
}

export const searchTool: Tool = {
  name: 'search',
  doc: 'search(words): the best-matching fact from a small offline collection',
  run: search,
};
