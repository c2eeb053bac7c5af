import { describe, expect, it } from 'vitest';
import { packTranscripts } from '../../src/agents/transcripts';
import { CharTokenizer } from '../../src/models/tokenizer';

const tok = CharTokenizer.createDefault();

describe('packTranscripts', () => {
  it('trains the calls and the answer, never the prompt or the tool result', () => {
    // <bos> "1*2=" <call> "calc(1*2)" </call> <result> "2" </result> <answer> "2" </answer>
    //  0    1..4    5      6..14       15      16      17    18        19     20    21
    const batch = packTranscripts(
      tok,
      [
        {
          prompt: '1*2=',
          transcript: '<call>calc(1*2)</call><result>2</result><answer>2</answer>',
        },
      ],
      24,
    );
    // Position t predicts token t+1. Trained targets: 5…15 (call), 19…21 (answer) → t = 4…14, 18…20.
    const trained = [...batch.mask].flatMap((m, t) => (m === 1 ? [t] : []));
    expect(trained).toEqual([4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 18, 19, 20]);
    expect(tok.decode([batch.targets[14]!])).toBe('</call>');
    expect(tok.decode([batch.targets[18]!])).toBe('<answer>');
    // The last target is </answer>; no <eos> follows it (the episode ends there).
    expect(tok.decode([batch.targets[20]!])).toBe('</answer>');
    expect([batch.tokens[21], batch.targets[21], batch.mask[21]]).toEqual([tok.pad, tok.pad, 0]);
    expect([...batch.targets]).not.toContain(tok.eos);
  });

  it('names the item that does not fit', () => {
    expect(() =>
      packTranscripts(
        tok,
        [
          { prompt: 'a', transcript: '<answer>a</answer>' },
          { prompt: 'abc', transcript: '<answer>abcdef</answer>' },
        ],
        8,
      ),
    ).toThrow(/items\[1\].*needs 11 positions.*seq is 8/);
  });
});
