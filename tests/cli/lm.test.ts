/**
 * `npm run lm` on the Hugging Face fixtures: score prints the golden log-probs (the independent
 * float64 reference's, tests/fixtures/hf/), generate writes the golden greedy completion up to the
 * first stop id, --chat applies the chat template, and every bad flag is refused naming it.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/lm';
import { loadLmTokenizer } from '../../src/cli/lm-model';

const dir = (name: string) => `tests/fixtures/hf/${name}`;

interface Golden {
  sequences: { ids: number[]; logprobs: number[] }[];
  greedy: { ids: number[] };
}
const golden = (name: string) =>
  JSON.parse(readFileSync(`${dir(name)}/golden.json`, 'utf8')) as Golden;

/** Runs main and returns what it printed with console.log. */
async function run(argv: string[]): Promise<string> {
  const log = vi.spyOn(console, 'log').mockImplementation(() => {});
  try {
    expect(await main(argv)).toBe(0);
    return log.mock.calls.map((c) => String(c[0])).join('\n');
  } finally {
    log.mockRestore();
  }
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('npm run lm -- score', () => {
  it.each(['llama-tiny', 'qwen2-tiny', 'qwen3-tiny'])(
    '%s: prints the golden log-probs of each id after its prefix (within 1e-5)',
    async (name) => {
      const { ids, logprobs } = golden(name).sequences[2]!;
      const out = JSON.parse(
        await run(['score', `--model=${dir(name)}`, `--ids=${ids.join(',')}`]),
      );
      expect(out.model).toBe(dir(name));
      expect(out.family).toBe(name.replace('-tiny', ''));
      expect(out.ids).toEqual(ids);
      expect(out.logprobs).toHaveLength(ids.length - 1);
      out.logprobs.forEach((lp: number, i: number) => {
        expect(Math.abs(lp - logprobs[i]!)).toBeLessThan(1e-5);
      });
    },
  );
});

describe('npm run lm -- score --adapter', () => {
  const adapter = dir('llama-tiny-lora');
  const loraGolden = JSON.parse(readFileSync(`${adapter}/golden.json`, 'utf8')) as {
    score: { ids: number[]; logprobs: number[] }[];
  };

  it('applies the PEFT adapter: the reference log-probs with it (within 1e-5)', async () => {
    const { ids, logprobs } = loraGolden.score[1]!;
    const argv = ['score', `--model=${dir('llama-tiny')}`, `--adapter=${adapter}`];
    const out = JSON.parse(await run([...argv, `--ids=${ids.join(',')}`]));
    expect(Object.keys(out)).toEqual(['model', 'adapter', 'family', 'ids', 'logprobs']);
    expect(out.adapter).toBe(adapter);
    expect(out.logprobs).toHaveLength(ids.length - 1);
    out.logprobs.forEach((lp: number, i: number) => {
      expect(Math.abs(lp - logprobs[i]!)).toBeLessThan(1e-5);
    });
  });

  it('without --adapter the JSON keeps its fields', async () => {
    const out = JSON.parse(await run(['score', `--model=${dir('llama-tiny')}`, '--ids=1,2,3']));
    expect(Object.keys(out)).toEqual(['model', 'family', 'ids', 'logprobs']);
  });

  it('refuses a folder without the files, a bad config, an adapter of other shapes', async () => {
    const base = ['score', `--model=${dir('llama-tiny')}`, '--ids=1,2,3'];
    const refused = async (argv: string[], message: string | RegExp) => {
      await expect(main(argv)).rejects.toThrow(message);
      await expect(main(argv)).rejects.toMatchObject({ name: 'FlagError', flag: 'adapter' });
    };
    await refused(
      [...base, `--adapter=${dir('llama-tiny')}`],
      `--adapter=${dir('llama-tiny')}: no adapter_config.json in this folder`,
    );
    // qwen3-tiny's q_proj is [128, 64]: the adapter's B [64, 4] does not fit it.
    await refused(
      ['score', `--model=${dir('qwen3-tiny')}`, `--adapter=${adapter}`, '--ids=1,2,3'],
      `--adapter=${adapter}: ${adapter}/adapter_model.safetensors: 'base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight' has shape [64, 4], expected [128, 4]`,
    );
    const folder = mkdtempSync(join(tmpdir(), 'lm-adapter-'));
    try {
      copyFileSync(
        `${adapter}/adapter_model.safetensors`,
        join(folder, 'adapter_model.safetensors'),
      );
      const config = JSON.parse(readFileSync(`${adapter}/adapter_config.json`, 'utf8'));
      writeFileSync(
        join(folder, 'adapter_config.json'),
        JSON.stringify({ ...config, use_dora: true }),
      );
      await refused(
        [...base, `--adapter=${folder}`],
        /adapter_config.json: use_dora must be false: the lab implements plain LoRA/,
      );
      writeFileSync(join(folder, 'adapter_config.json'), JSON.stringify({ ...config, r: 8 }));
      await refused([...base, `--adapter=${folder}`], /has shape \[4, 64\], expected \[8, 64\]/);
    } finally {
      rmSync(folder, { recursive: true });
    }
  });

  it('generate takes --adapter too (it changes the greedy text), refusing a mismatched one', async () => {
    const argv = ['generate', `--model=${dir('qwen3-tiny')}`, `--adapter=${adapter}`, '--prompt=a'];
    await expect(main(argv)).rejects.toMatchObject({ name: 'FlagError', flag: 'adapter' });
    const greedy = ['generate', `--model=${dir('llama-tiny')}`, '--prompt=What is 3 + 4?'];
    const plain = await run([...greedy, '--max-new-tokens=4']);
    const adapted = await run([...greedy, `--adapter=${adapter}`, '--max-new-tokens=4']);
    expect(adapted).not.toBe(plain);
  });
});

describe('npm run lm -- generate', () => {
  // The golden greedy run: the chat prompt below (16 ids, no system turn) and 8 argmax steps with
  // no stop applied; generation stops at the model's stop ids (qwen3-tiny's third token is 381).
  const chatText = '<|im_start|>user\nWhat is 3 + 4?<|im_end|>\n<|im_start|>assistant\n';

  it.each(['llama-tiny', 'qwen2-tiny', 'qwen3-tiny'])(
    '%s, greedy: the golden completion up to the first stop id',
    async (name) => {
      const tokenizer = await loadLmTokenizer(dir(name));
      const ids = golden(name).greedy.ids;
      const stop = ids.findIndex((id) => tokenizer.stopIds.includes(id));
      const expected = tokenizer.decode(stop < 0 ? ids : ids.slice(0, stop + 1), {
        skipSpecial: true,
      });
      const printed = await run([
        'generate',
        `--model=${dir(name)}`,
        `--prompt=${chatText}`,
        `--max-new-tokens=${ids.length}`,
      ]);
      expect(printed).toBe(expected);
    },
  );

  it('--chat wraps the prompt in the chat template (its default system turn included)', async () => {
    const tokenizer = await loadLmTokenizer(dir('qwen2-tiny'));
    const templated = tokenizer.applyChatTemplate!([{ role: 'user', content: 'What is 3 + 4?' }], {
      addGenerationPrompt: true,
    });
    expect(templated).toContain(chatText.slice(0, -1)); // the user turn, then the assistant's
    const model = `--model=${dir('qwen2-tiny')}`;
    const chat = await run(['generate', model, '--prompt=What is 3 + 4?', '--chat']);
    const plain = await run(['generate', model, `--prompt=${templated}`]);
    expect(chat).toBe(plain);
    expect(await run(['generate', model, '--prompt=What is 3 + 4?'])).not.toBe(chat);
  });

  it('is seeded when sampling: the same seed prints the same text', async () => {
    const argv = ['generate', `--model=${dir('qwen2-tiny')}`, '--prompt=hi', '--temperature=1'];
    const a = await run([...argv, '--seed=3', '--max-new-tokens=12']);
    const b = await run([...argv, '--seed=3', '--max-new-tokens=12']);
    const c = await run([...argv, '--seed=4', '--max-new-tokens=12']);
    expect(a).toBe(b);
    expect(c).not.toBe(a);
  });
});

describe('npm run lm flag errors', () => {
  it.each([
    [['rank'], /the first argument must be one of score, generate, got 'rank'/],
    [['score', '--ids=1,2'], /--model=DIR_OR_HUB_ID is required/],
    [['score', `--model=${dir('qwen2-tiny')}`], /--ids=I0,I1,... is required/],
    [
      ['score', `--model=${dir('qwen2-tiny')}`, '--ids=1,x'],
      /--ids must be comma-separated token ids in \[0, 399\], but entry 1 is 'x'/,
    ],
    [
      ['score', `--model=${dir('qwen2-tiny')}`, '--ids=1,400'],
      /--ids must be comma-separated token ids in \[0, 399\], but entry 1 is '400'/,
    ],
    [['score', `--model=${dir('qwen2-tiny')}`, '--ids=5'], /--ids must list 2 to 256 ids/],
    [['score', '--model=tests/fixtures', '--ids=1,2'], /--model=tests\/fixtures: no config.json/],
    [
      ['score', `--model=${dir('qwen2-tiny')}`, '--ids=1,2', '--idz=3'],
      /unknown option\(s\): --idz/,
    ],
    [
      ['generate', `--model=${dir('qwen2-tiny')}`, '--prompt=a', '--max-new-tokens=0'],
      /--max-new-tokens must be an integer in \[1, 4096\], got '0'/,
    ],
    [
      ['generate', `--model=${dir('qwen2-tiny')}`, '--prompt=a', '--max-new-tokens=300'],
      /--max-new-tokens must be at most 255 \(the model's context 256 minus the prompt's 1 tokens\), got 300/,
    ],
    [
      ['generate', `--model=${dir('qwen2-tiny')}`, '--prompt=a', '--top-p=0'],
      /--top-p must be a number in \(0, 1\], got '0'/,
    ],
    [['generate', `--model=${dir('qwen2-tiny')}`], /--prompt=TEXT is required/],
  ])('%j is refused naming the flag', async (argv, message) => {
    await expect(main(argv)).rejects.toThrow(message);
    await expect(main(argv)).rejects.toMatchObject({ name: 'FlagError' });
  });
});
