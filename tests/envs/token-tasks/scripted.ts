import fc from 'fast-check';

/**
 * A "random" source that returns the given values in order, so a test can work a sample out by
 * hand; it throws when the task draws more values than the test planned.
 */
export function scripted(values: readonly number[]): () => number {
  let i = 0;
  return () => {
    if (i >= values.length) throw new Error(`scripted: drew value ${i + 1} of ${values.length}`);
    return values[i++]!;
  };
}

/** Every value a scripted source was given has been drawn. */
export function drawsAll(values: readonly number[], use: (random: () => number) => void): void {
  let drawn = 0;
  const random = scripted(values);
  use(() => {
    drawn++;
    return random();
  });
  if (drawn !== values.length) throw new Error(`scripted: drew ${drawn} of ${values.length}`);
}

/** Ways to spoil an answer: change, delete or insert one character, or swap two neighbours. */
export type Mutation =
  | { kind: 'change'; at: number; char: string }
  | { kind: 'delete'; at: number }
  | { kind: 'insert'; at: number; char: string }
  | { kind: 'swap'; at: number };

/** `text` with `m` applied (positions taken modulo the length that applies). */
export function mutate(text: string, m: Mutation): string {
  const n = text.length;
  switch (m.kind) {
    case 'change': {
      if (n === 0) return m.char;
      const i = m.at % n;
      return text.slice(0, i) + m.char + text.slice(i + 1);
    }
    case 'delete': {
      if (n === 0) return text;
      const i = m.at % n;
      return text.slice(0, i) + text.slice(i + 1);
    }
    case 'insert': {
      const i = m.at % (n + 1);
      return text.slice(0, i) + m.char + text.slice(i);
    }
    case 'swap': {
      if (n < 2) return text;
      const i = m.at % (n - 1);
      return text.slice(0, i) + text[i + 1]! + text[i]! + text.slice(i + 2);
    }
  }
}

/** Random mutations whose inserted or changed characters come from `chars`. */
export function mutations(chars: string): fc.Arbitrary<Mutation> {
  return fc.oneof(
    fc.record({
      kind: fc.constant('change' as const),
      at: fc.nat(),
      char: fc.constantFrom(...chars),
    }),
    fc.record({ kind: fc.constant('delete' as const), at: fc.nat() }),
    fc.record({
      kind: fc.constant('insert' as const),
      at: fc.nat(),
      char: fc.constantFrom(...chars),
    }),
    fc.record({ kind: fc.constant('swap' as const), at: fc.nat() }),
  );
}
