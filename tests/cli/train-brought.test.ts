/**
 * `npm run train -- --model=DIR`: LoRA-GRPO on the shipped tiny chat model from the command line.
 * The adapters are written in PEFT's layout and read back by `npm run lm -- score --adapter`,
 * which scores with them exactly as the trained model does; the lab's own model's flags are
 * refused beside --model, each naming itself.
 */
import { cpSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main as lm } from '../../src/cli/lm';
import { loadLmAdapter, loadLmModel } from '../../src/cli/lm-model';
import { readTrainingState } from '../../src/cli/lora-training-state';
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

  it("refuses a task the model's context cannot hold, with both numbers", async () => {
    // A tool task's prompt lists the tools and teaches the call format: far past 64 positions.
    const argv = [`--model=${MODEL}`, '--task=multiply', '--lora-r=4', '--updates=1'];
    await expect(train(argv)).rejects.toMatchObject({ name: 'FlagError', flag: 'task' });
    await expect(train(argv)).rejects.toThrow(
      /'multiply\(2–3 digits, calc\)' needs a context of \d{3,} tokens in .*tiny-chat's chat template .*the model's is 64$/,
    );
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

  it('goes on from a saved run with --resume exactly as the unbroken run', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const root = mkdtempSync(join(tmpdir(), 'resume-'));
    const [unbroken, half, resumed] = ['unbroken', 'half', 'resumed'].map((d) => join(root, d)) as [
      string,
      string,
      string,
    ];
    const base = RUN.filter((a) => !a.startsWith('--updates='));
    expect(await train([...base, '--seed=5', '--updates=4', `--adapter-out=${unbroken}`])).toBe(0);
    expect(await train([...base, '--seed=5', '--updates=2', `--adapter-out=${half}`])).toBe(0);
    log.mockClear();
    // No --seed: the saved run's seed 5 wins over the default, and says so.
    expect(
      await train([
        ...base.filter((a) => !a.startsWith('--lora-r=')),
        '--updates=2',
        `--resume=${half}`,
        `--adapter-out=${resumed}`,
      ]),
    ).toBe(0);
    const printed = log.mock.calls.map((c) => String(c[0])).join('\n');
    expect(printed).toContain(
      `resume: from update 2 of ${half}; the saved run keeps its settings: seed 5 (flags: 1)`,
    );
    expect(
      readFileSync(join(resumed, 'adapter_model.safetensors')).equals(
        readFileSync(join(unbroken, 'adapter_model.safetensors')),
      ),
    ).toBe(true);
    const floats = (await loadLmAdapter(unbroken, (await loadLmModel(MODEL)).model.spec)).params
      .length;
    const [got, want] = await Promise.all(
      [resumed, unbroken].map((dir) => readTrainingState(dir, floats)),
    );
    expect(got!.optimizer).toEqual(want!.optimizer);
    expect(got!.trainer).toEqual(want!.trainer);
    expect(got!.seed).toBe(5);
    expect(got!.trainer.step).toBe(4);
    // The adapters moved between the half-way save and the end.
    expect(
      readFileSync(join(half, 'adapter_model.safetensors')).equals(
        readFileSync(join(unbroken, 'adapter_model.safetensors')),
      ),
    ).toBe(false);
  }, 180_000);

  it('refuses to resume on other weights, with LoRA flags, or without the state file', async () => {
    vi.spyOn(console, 'log').mockImplementation(() => {});
    const root = mkdtempSync(join(tmpdir(), 'resume-'));
    const saved = join(root, 'saved');
    expect(await train([...RUN, `--adapter-out=${saved}`])).toBe(0);
    const resumeArgs = RUN.filter((a) => !a.startsWith('--lora-r=')).concat(`--resume=${saved}`);

    // The same model with one weight's lowest mantissa bit flipped.
    const other = join(root, 'other-model');
    cpSync(MODEL, other, { recursive: true });
    const weights = readFileSync(join(other, 'model.safetensors'));
    weights[weights.length - 4] = weights[weights.length - 4]! ^ 1;
    writeFileSync(join(other, 'model.safetensors'), weights);
    await expect(
      train([...resumeArgs.filter((a) => !a.startsWith('--model=')), `--model=${other}`]),
    ).rejects.toMatchObject({
      flag: 'resume',
      message: expect.stringMatching(
        /trained on .*tiny-chat \(sha256:[0-9a-f]{12}\), but --model=.*other-model has other weights \(sha256:[0-9a-f]{12}\)/,
      ),
    });

    await expect(train([...resumeArgs, '--lora-r=8'])).rejects.toMatchObject({
      flag: 'lora-r',
      message: expect.stringContaining('is set by --resume'),
    });
    const adapterOnly = join(root, 'adapter-only');
    cpSync(saved, adapterOnly, {
      recursive: true,
      filter: (p) => !p.endsWith('lab_training_state.safetensors'),
    });
    await expect(
      train([...resumeArgs.filter((a) => !a.startsWith('--resume=')), `--resume=${adapterOnly}`]),
    ).rejects.toMatchObject({
      flag: 'resume',
      message: expect.stringContaining('lab_training_state.safetensors: missing'),
    });
  }, 180_000);
});
