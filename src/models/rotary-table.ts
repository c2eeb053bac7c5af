/**
 * The cos/sin table of a model with rotary positions, (context, hs/2) in float64, built once per
 * (context, head size, base) and shared by every forward, backward and decode step on the CPU
 * (the GPU model uploads it once as f32).
 */
import { rotaryTable, type RotaryTable } from '../ops/nn/rotary';
import { rotaryBaseOf, type TransformerConfig } from './transformer-config';

const tables = new Map<string, RotaryTable>();

export function rotaryTableFor(config: TransformerConfig): RotaryTable {
  const headSize = config.width / config.heads;
  const base = rotaryBaseOf(config);
  const key = `${config.context}:${headSize}:${base}`;
  let table = tables.get(key);
  if (!table) {
    table = rotaryTable(config.context, headSize, base);
    tables.set(key, table);
  }
  return table;
}
