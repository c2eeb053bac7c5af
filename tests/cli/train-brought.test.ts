/**
 * `npm run train -- --model=DIR`: LoRA-GRPO on the shipped tiny chat model from the command line.
 * The adapters are written in PEFT's layout and read back by `npm run lm -- score --adapter`,
 * which scores with them exactly as the trained model does; the lab's own model's flags are
 * refused beside --model, each naming itself.
 */
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main as lm } from '../../src/cli/lm';
import { loadLmAdapter, loadLmModel } from '../../src/cli/lm-model';
import { main as train } from '../../src/cli/train';
import { llamaScore } from '../../src/models/hf/llama-cpu';

const MODEL = 'public/models/hf/tiny-chat';
const RUN = [
  `--model=${MODEL}`,
  '--task=addition',
  '--max-digits=2',
  '--reverse-answer',
  '--lora-r=4',
  '--updates=2',
  '--prompts-per-update=2',
  '--group-size=4',
];

afterEach(() => {
  vi.restoreAllMocks();
});

describe('npm run train -- --model', () => {
  it('trains LoRA adapters, writes them as PEFT does, and lm score reads them back', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const out = join(mkdtempSync(join(tmpdir(), 'adapter-')), 'addition-r4');
    expect(await train([...RUN, '--lora-alpha=8', `--adapter-out=${out}`])).toBe(0);
    const printed = log.mock.calls.map((c) => String(c[0])).join('\n');
    expect(printed).toMatch(/LoRA r = 4, alpha = 8 on q_proj, k_proj, .*down_proj \(\d+ trainable/);
    expect(printed).toContain(`wrote the adapter to ${out}`);

    const { model } = await loadLmModel(MODEL);
    const adapter = await loadLmAdapter(out, model.spec);
    expect(adapter.settings).toMatchObject({ rank: 4, alpha: 8 });
    expect(adapter.settings.targets).toHaveLength(7);
    // Trained: B is no longer zero (PEFT initialises it to zero).
    const b = adapter.group.layout.view(
      adapter.params,
      'base_model.model.model.layers.0.self_attn.q_proj.lora_B.weight',
    );
    expect(b.some((x) => x !== 0)).toBe(true);

    const ids = [416, 10, 20, 30, 40];
    log.mockClear();
    expect(await lm(['score', `--model=${MODEL}`, `--adapter=${out}`, `--ids=${ids}`])).toBe(0);
    const scored = JSON.parse(String(log.mock.calls[0]![0])) as { logprobs: number[] };
    const direct = llamaScore(model, Int32Array.from(ids), 1, ids.length, { lora: adapter });
    const base = llamaScore(model, Int32Array.from(ids), 1, ids.length);
    scored.logprobs.forEach((lp, i) => expect(lp).toBeCloseTo(direct.logprobs[i]!, 5));
    expect(scored.logprobs.some((lp, i) => Math.abs(lp - base.logprobs[i]!) > 1e-4)).toBe(true);
  }, 120_000);

  it.each([
    ['--init=x.ckpt', 'init'],
    ['--sft-steps=10', 'sft-steps'],
    ['--width=32', 'width'],
    ['--out=run.json', 'out'],
    ['--reference=ort', 'reference'],
    ['--storage=f8', 'storage'],
    ['--backend=cpu --storage=f32', 'storage'],
    ['--backend=cpu --micro-batch=2', 'micro-batch'],
    ['--micro-batch=0', 'micro-batch'],
    ['--algo=ppo', 'algo'],
    ['--lora-targets=q_proj,lm_head', 'lora-targets'],
    ['--lora-r=0', 'lora-r'],
  ])('refuses %s beside --model, naming the flag', async (flag, name) => {
    // PPO has no --group-size; every other flag of RUN is one its algorithm takes.
    const kept = RUN.filter(
      (a) => !a.startsWith(`--${name}=`) && !(name === 'algo' && a.startsWith('--group-size')),
    );
    const argv = [...kept, ...flag.split(' ')];
    await expect(train(argv)).rejects.toMatchObject({ name: 'FlagError', flag: name });
  });

  it('refuses LoRA flags without --model, and a file as --adapter-out', async () => {
    await expect(train(['--task=copy', '--lora-r=8'])).rejects.toMatchObject({
      flag: 'lora-r',
      message: '--lora-r needs --model=DIR_OR_HUB_ID',
    });
    const file = join(mkdtempSync(join(tmpdir(), 'adapter-')), 'plain');
    writeFileSync(file, 'x');
    await expect(train([...RUN, `--adapter-out=${file}`])).rejects.toMatchObject({
      flag: 'adapter-out',
    });
    expect(existsSync(join(file, 'adapter_config.json'))).toBe(false);
  });
});
