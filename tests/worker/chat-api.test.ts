/**
 * The CPU chat worker's API (src/worker/chat-api.ts; in the page a Web Worker exposes it): given
 * a fixture's weights in the 'base' layout, it answers the independent reference's greedy
 * continuation for each family; it refuses to answer before a model is open and refuses a base of
 * the wrong length, naming the field and both counts, leaving no model behind.
 */
import { describe, expect, it } from 'vitest';
import { hfBaseGroup } from '../../src/models/hf/hf-weights';
import { createChatWorkerApi } from '../../src/worker/chat-api';
import { loadFixture, readGolden } from '../models/hf/load-fixture';

/** The fixture's weights in the 'base' group's f32 layout, as the page moves them to the worker. */
async function fixtureBase(name: string) {
  const { spec, weights } = await loadFixture(name);
  const { layout } = hfBaseGroup(spec, 'f32');
  const base = new Float32Array(layout.total);
  for (const entry of layout.entries) layout.view(base, entry.name).set(weights.get(entry.name)!);
  return { spec, base };
}

describe('chat worker API', () => {
  it.each(['llama-tiny', 'qwen2-tiny', 'qwen3-tiny'])(
    '%s: the reference’s greedy continuation',
    async (name) => {
      const { spec, base } = await fixtureBase(name);
      const { prompt_ids: prompt, ids } = readGolden(name).greedy;
      const api = createChatWorkerApi();
      await api.open(spec, base);
      const out = await api.generate([Int32Array.from(prompt)], {
        maxNewTokens: ids.length,
        temperature: 0,
      });
      expect(Array.from(out.tokens[0]!)).toEqual(ids);
      expect(out.finish).toEqual(['length']);
    },
  );

  it('refuses to answer before open, and refuses a base of the wrong length', async () => {
    const { spec, base } = await fixtureBase('llama-tiny');
    const api = createChatWorkerApi();
    const prompt = [Int32Array.from([1, 2, 3])];
    await expect(api.generate(prompt, { maxNewTokens: 1 })).rejects.toThrow(/open\(\) a model/);
    await api.open(spec, base);
    await expect(api.open(spec, base.subarray(1))).rejects.toThrow(
      new RegExp(`base must hold the llama model's ${base.length} weights, got ${base.length - 1}`),
    );
    // The refused open replaced nothing half-way: no model answers until a good open.
    await expect(api.generate(prompt, { maxNewTokens: 1 })).rejects.toThrow(/open\(\) a model/);
  });
});
