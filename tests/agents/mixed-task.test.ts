/** The mixed warm-up task (src/agents/mixed-task.ts): shares, dispatch by origin, refusals. */
import { describe, expect, it } from 'vitest';
import { mixedAgentTask } from '../../src/agents/mixed-task';
import { multiplyTask } from '../../src/agents/tasks/multiply';
import { shoppingTask } from '../../src/agents/tasks/shopping';
import { OpInputError } from '../../src/ops/errors';
import { seededRandom } from '../../src/util/random';

const multiply = multiplyTask({ minDigits: 1, maxDigits: 2, useTools: true });
const shopping = shoppingTask({ items: 1, maxQuantity: 1 });

describe('mixedAgentTask', () => {
  const mixed = mixedAgentTask('both', [
    { task: shopping, weight: 1 },
    { task: multiply, weight: 3 },
  ]);

  it('draws each part by its share, and answers with the part that drew the sample', () => {
    const random = seededRandom(5);
    let products = 0;
    for (let i = 0; i < 4000; i++) {
      const sample = mixed.sample(random);
      const isProduct = sample.prompt.includes('*');
      if (isProduct) products += 1;
      const part = isProduct ? multiply : shopping;
      expect(mixed.demonstration(sample)).toBe(part.demonstration(sample));
      expect(mixed.verify(sample, sample.answer)).toBe(1);
      expect(mixed.verify(sample, `${sample.answer}0`)).toBe(0);
    }
    // 3 of 4 samples are products: 3000 ± 4.5 standard deviations (σ ≈ 27).
    expect(Math.abs(products - 3000)).toBeLessThan(125);
  });

  it('offers both tools and holds the longer part', () => {
    expect(new Set(mixed.tools)).toEqual(new Set(['price', 'calc']));
    expect(mixed.maxChars).toBe(Math.max(multiply.maxChars, shopping.maxChars));
    expect(mixed.kind).toBe('agent');
  });

  it('refuses a sample it did not draw, and bad weights by index', () => {
    expect(() => mixed.demonstration({ prompt: '3*4=', answer: '12' })).toThrow(
      "both: the sample '3*4=' was not drawn by this task",
    );
    expect(() => mixedAgentTask('x', [])).toThrow(OpInputError);
    expect(() =>
      mixedAgentTask('x', [
        { task: shopping, weight: 1 },
        { task: multiply, weight: 0 },
      ]),
    ).toThrow('mixedAgentTask: parts[1].weight must be a finite number > 0, got 0');
  });
});
