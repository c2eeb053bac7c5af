/**
 * `npm run lm -- score|generate --backend=webgpu` on the Hugging Face fixtures: the GPU path
 * prints the independent reference's golden log-probs and greedy completion, as the CPU path does
 * (tests/cli/lm.test.ts), with f16 and f32 storage. Node only (Dawn): the CLI reads files.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it, vi } from 'vitest';
import { main } from '../../../src/cli/lm';
import { loadLmTokenizer } from '../../../src/cli/lm-model';
import { testGpu } from '../../support/gpu';

const gpu = await testGpu();
const dir = (name: string) => `tests/fixtures/hf/${name}`;

interface Golden {
  sequences: { ids: number[]; logprobs: number[] }[];
  f16_storage?: { sequences: { ids: number[]; logprobs: number[] }[] };
  greedy: { prompt_ids: number[]; ids: number[] };
}
const golden = (name: string) =>
  JSON.parse(readFileSync(`${dir(name)}/golden.json`, 'utf8')) as Golden;

async function run(argv: string[]): Promise<string> {
  const log = vi.spyOn(console, 'log').mockImplementation(() => {});
  try {
    expect(await main(argv)).toBe(0);
    return log.mock.calls.map((c) => String(c[0])).join('\n');
  } finally {
    log.mockRestore();
  }
}

describe.skipIf(!gpu)('npm run lm --backend=webgpu', () => {
  it.each([
    ['llama-tiny', 'f32'],
    ['qwen2-tiny', 'f16'],
  ] as const)(
    '%s score (%s storage) prints the golden log-probs within 1e-4',
    async (name, storage) => {
      const g = golden(name);
      const sequences = storage === 'f16' && g.f16_storage ? g.f16_storage.sequences : g.sequences;
      const { ids, logprobs } = sequences.find((s) => s.ids.length >= 4)!;
      const out = JSON.parse(
        await run([
          'score',
          `--model=${dir(name)}`,
          `--ids=${ids.join(',')}`,
          '--backend=webgpu',
          `--storage=${storage}`,
        ]),
      ) as { logprobs: number[]; backend: string; storage: string };
      expect(out.backend).toBe('webgpu');
      expect(out.storage).toBe(storage);
      expect(out.logprobs).toHaveLength(ids.length - 1);
      out.logprobs.forEach((lp, i) => expect(Math.abs(lp - logprobs[i]!)).toBeLessThan(1e-4));
    },
  );

  it('generate prints the golden greedy completion, as the CPU path does', async () => {
    const name = 'llama-tiny';
    const tokenizer = await loadLmTokenizer(dir(name));
    const { prompt_ids: promptIds } = golden(name).greedy;
    const prompt = tokenizer.decode(promptIds, { skipSpecial: false });
    const argv = ['generate', `--model=${dir(name)}`, `--prompt=${prompt}`, '--max-new-tokens=8'];
    const onGpu = await run([...argv, '--backend=webgpu', '--storage=f32']);
    const onCpu = await run(argv);
    expect(onGpu).toBe(onCpu);
    expect(onGpu.length).toBeGreaterThan(0);
  });

  it('scores with a PEFT adapter on the GPU as the CPU does', async () => {
    const ids = golden('llama-tiny').sequences.find((s) => s.ids.length >= 4)!.ids;
    const argv = [
      'score',
      `--model=${dir('llama-tiny')}`,
      `--adapter=${dir('llama-tiny-lora')}`,
      `--ids=${ids.join(',')}`,
    ];
    const onCpu = JSON.parse(await run(argv)) as { logprobs: number[] };
    const onGpu = JSON.parse(await run([...argv, '--backend=webgpu', '--storage=f32'])) as {
      logprobs: number[];
      adapter: string;
    };
    expect(onGpu.adapter).toBe(dir('llama-tiny-lora'));
    onGpu.logprobs.forEach((lp, i) => expect(Math.abs(lp - onCpu.logprobs[i]!)).toBeLessThan(5e-5));
  });

  it('refuses --storage on the CPU and an unknown storage, naming the flag', async () => {
    const score = ['score', `--model=${dir('llama-tiny')}`, '--ids=1,2,3'];
    await expect(main([...score, '--storage=f16'])).rejects.toMatchObject({ flag: 'storage' });
    await expect(main([...score, '--backend=webgpu', '--storage=f8'])).rejects.toMatchObject({
      flag: 'storage',
    });
  });
});
