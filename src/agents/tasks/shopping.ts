/**
 * Lookup, then arithmetic: "3 candle+2 bolt=" → the bill. Prices live only in the `price` tool's
 * table, so the policy must look each item up, then multiply and add — with the calculator or in
 * its head:
 *
 *   3 candle+2 bolt= <call>price(candle)</call><result>7</result>
 *                    <call>price(bolt)</call><result>2</result>
 *                    <call>calc(3*7+2*2)</call><result>25</result><answer>25</answer>
 *
 * The curriculum runs from one lookup (level 0: "candle=") to lookup-then-calculate over three
 * items. With useTools off the demonstration answers at once (the model must memorise prices).
 */
import { checkInt } from '../../ops/validate';
import { randomInt, withDefaults } from '../../envs/token-tasks/shared';
import type { TokenTaskSample } from '../../envs/token-tasks/types';
import { PRICE_ITEMS, PRICES } from '../data/prices';
import {
  answerText,
  callText,
  DEFAULT_AGENT_ENV_OPTIONS,
  type AgentEnvOptions,
  type AgentTask,
} from '../agent-task';

export interface ShoppingOptions extends AgentEnvOptions {
  /** Distinct items on a list, 1–3. Default 2. */
  items?: number;
  /** Largest quantity of an item, 1–9 (1: quantities are not written). Default 3. */
  maxQuantity?: number;
}

export const DEFAULT_SHOPPING_OPTIONS: Readonly<Required<ShoppingOptions>> = Object.freeze({
  ...DEFAULT_AGENT_ENV_OPTIONS,
  items: 2,
  maxQuantity: 3,
});

/** Curriculum rungs: one lookup; one lookup and a product; two and three items. */
export const shoppingDifficultyLevels: readonly Readonly<Required<ShoppingOptions>>[] = [
  { ...DEFAULT_SHOPPING_OPTIONS, items: 1, maxQuantity: 1 },
  { ...DEFAULT_SHOPPING_OPTIONS, items: 1, maxQuantity: 9 },
  { ...DEFAULT_SHOPPING_OPTIONS, items: 2, maxQuantity: 3 },
  { ...DEFAULT_SHOPPING_OPTIONS, items: 3, maxQuantity: 9 },
];

interface Line {
  item: string;
  quantity: number;
}

/** Reads "3 candle+2 bolt=" (or "candle=") back into lines; the prompt is ours, so it parses. */
function parseList(prompt: string): Line[] {
  return prompt
    .slice(0, -1)
    .split('+')
    .map((part) => {
      const [first, second] = part.split(' ');
      return second === undefined
        ? { item: first!, quantity: 1 }
        : { item: second, quantity: Number(first) };
    });
}

function price(item: string): number {
  const value = PRICES.get(item);
  if (value === undefined) throw new Error(`shopping: no price for '${item}'`);
  return value;
}

export function shoppingTask(options: ShoppingOptions = {}): AgentTask {
  const full = withDefaults(DEFAULT_SHOPPING_OPTIONS, options);
  checkInt('shoppingTask', 'items', full.items, 1, 3);
  checkInt('shoppingTask', 'maxQuantity', full.maxQuantity, 1, 9);
  const longestItem = Math.max(...PRICE_ITEMS.map((i) => i.length));
  return {
    kind: 'agent',
    name: `shopping(${full.items} item${full.items > 1 ? 's' : ''}, ≤ ${full.maxQuantity} each${full.useTools ? '' : ', no tools'})`,
    tools: full.useTools ? ['price', 'calc'] : [],
    env: full,
    // Per item: "9 " + name + "+" in the prompt, a price call with its result (≈ 34 + name),
    // "9*99+" in the calc call; plus the calc call's tags and the answer.
    maxChars: full.items * (2 * longestItem + 44) + 60,
    answerChars: '0123456789',
    sample(random: () => number): TokenTaskSample {
      const pool = [...PRICE_ITEMS];
      const lines: Line[] = [];
      for (let i = 0; i < full.items; i++) {
        const [item] = pool.splice(randomInt(random, 0, pool.length - 1), 1);
        lines.push({ item: item!, quantity: randomInt(random, 1, full.maxQuantity) });
      }
      const written = lines.map((l) =>
        full.maxQuantity === 1 ? l.item : `${l.quantity} ${l.item}`,
      );
      const total = lines.reduce((sum, l) => sum + l.quantity * price(l.item), 0);
      return { prompt: `${written.join('+')}=`, answer: String(total) };
    },
    demonstration(sample: TokenTaskSample): string {
      if (!full.useTools) return answerText(sample.answer);
      const lines = parseList(sample.prompt);
      let text = lines.map((l) => callText('price', l.item, String(price(l.item)))).join('');
      // A single item bought once needs no arithmetic.
      if (lines.length > 1 || lines[0]!.quantity > 1) {
        const terms = lines.map((l) => (l.quantity === 1 ? '' : `${l.quantity}*`) + price(l.item));
        text += callText('calc', terms.join('+'), sample.answer);
      }
      return text + answerText(sample.answer);
    },
    verify(sample: TokenTaskSample, answer: string): number {
      return answer === sample.answer ? 1 : 0;
    },
    chatQuestion(sample: TokenTaskSample): string {
      const lines = parseList(sample.prompt).map((l) => `${l.quantity} x ${l.item}`);
      return `What do these cost in total: ${lines.join(', ')}?`;
    },
  };
}
