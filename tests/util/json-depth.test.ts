import { describe, expect, it } from 'vitest';
import { jsonDepthProblem, MAX_JSON_DEPTH } from '../../src/util/json-depth';

describe('jsonDepthProblem', () => {
  it.each([
    ['{}', 1, undefined],
    ['[[1]]', 2, undefined],
    ['[[1]]', 1, 'nests deeper than 1 arrays and objects (at character 2)'],
    ['{"a":[{"b":[]}]}', 4, undefined],
    ['{"a":[{"b":[]}]}', 3, 'nests deeper than 3 arrays and objects (at character 12)'],
    // Brackets in strings, escaped quotes and escaped backslashes do not count.
    ['["[[[[", "\\"[[[", "\\\\"]', 1, undefined],
    ['["\\\\", [[]]]', 2, 'nests deeper than 2 arrays and objects (at character 9)'],
    ['"[[[["', 0, undefined],
  ])('%s at most %i deep → %s', (text, max, problem) => {
    expect(jsonDepthProblem(text, max)).toBe(problem);
  });

  it('refuses a 10 MB bomb of 5e6 brackets at the first bracket past the limit', () => {
    // The character it names is where the scan stopped: 65 characters read of 10 million. How
    // fast that is belongs to a benchmark, not to a timed assertion that a loaded machine fails.
    const bomb = '['.repeat(5_000_000) + ']'.repeat(5_000_000);
    expect(jsonDepthProblem(bomb)).toBe(
      `nests deeper than ${MAX_JSON_DEPTH} arrays and objects (at character ${MAX_JSON_DEPTH + 1})`,
    );
  });

  // Its cost beside the JSON.parse it guards (20 MB of shallow JSON) is a row of the bench's
  // input-guards suite: a timing, not a limit a loaded machine fails.
});
