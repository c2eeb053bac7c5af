/**
 * The price table behind the `price` tool: a fixed literal table of 40 items (lowercase single
 * words) with whole prices from 2 to 99. It is written out, not drawn at load time, so a task,
 * its demonstrations and a saved run all see the same prices on every machine.
 */

const PRICE_LIST: readonly (readonly [string, number])[] = [
  ['apple', 3],
  ['bolt', 2],
  ['candle', 7],
  ['drum', 64],
  ['easel', 38],
  ['flute', 55],
  ['glove', 12],
  ['hammer', 19],
  ['inkpot', 6],
  ['jacket', 74],
  ['kettle', 27],
  ['ladder', 46],
  ['mirror', 33],
  ['needle', 4],
  ['oar', 41],
  ['pillow', 15],
  ['quilt', 58],
  ['rope', 9],
  ['saddle', 87],
  ['teapot', 24],
  ['umbrella', 17],
  ['violin', 99],
  ['wagon', 92],
  ['yarn', 5],
  ['zither', 81],
  ['basket', 13],
  ['compass', 36],
  ['lantern', 22],
  ['anvil', 68],
  ['barrel', 31],
  ['chisel', 11],
  ['bucket', 8],
  ['sieve', 14],
  ['shovel', 26],
  ['helmet', 49],
  ['cloak', 43],
  ['spoon', 2],
  ['bell', 16],
  ['map', 10],
  ['tent', 77],
];

/** Item → price; a Map, so a name like "constructor" or "__proto__" is just an unknown item. */
export const PRICES: ReadonlyMap<string, number> = new Map(PRICE_LIST);

/** The item names in table order. */
export const PRICE_ITEMS: readonly string[] = Object.freeze(PRICE_LIST.map(([item]) => item));
