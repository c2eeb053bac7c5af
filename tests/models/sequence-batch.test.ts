import { describe, expect, it } from 'vitest';
import { CharTokenizer } from '../../src/models/tokenizer';
import { OpInputError } from '../../src/ops/errors';
import { packSequences } from '../../src/models/sequence-batch';

const tok = CharTokenizer.createDefault();

describe('packSequences', () => {
  it('shifts targets by one and trains only the completion and <eos>', () => {
    const { tokens, targets, mask } = packSequences(tok, [{ prompt: 'ab=', completion: 'ba' }], 8);
    const [a, b, eq] = tok.encode('ab=');
    // sequence: <bos> a b = b a <eos> <pad>
    expect([...tokens]).toEqual([tok.bos, a, b, eq, b, a, tok.pad, tok.pad]);
    expect([...targets]).toEqual([a, b, eq, b, a, tok.eos, tok.pad, tok.pad]);
    expect([...mask]).toEqual([0, 0, 0, 1, 1, 1, 0, 0]);
  });

  it('names the pair that does not fit', () => {
    expect(() =>
      packSequences(
        tok,
        [
          { prompt: 'a=', completion: 'a' },
          { prompt: 'abcdef=', completion: 'fedcba' },
        ],
        8,
      ),
    ).toThrow(OpInputError);
    expect(() => packSequences(tok, [{ prompt: 'abcdef=', completion: 'fedcba' }], 8)).toThrow(
      /pairs\[0\].*14 positions/,
    );
  });
});
