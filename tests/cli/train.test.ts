/** The training CLI end to end (CPU): run files, generated flags, refusals. */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/train';

const quiet = () => vi.spyOn(console, 'log').mockImplementation(() => {});

describe('npm run train', () => {
  it('trains an environment algorithm and writes a run file', async () => {
    quiet();
    const out = join(mkdtempSync(join(tmpdir(), 'train-')), 'run.json');
    const code = await main([
      '--algo=q-learning',
      '--env=cliffwalking',
      '--updates=40',
      '--alpha=0.4',
      `--out=${out}`,
    ]);
    expect(code).toBe(0);
    const run = JSON.parse(readFileSync(out, 'utf8'));
    expect(run.format).toBe('agent-rl-lab/run');
    expect(run.config.alpha).toBe(0.4);
    expect(run.metrics['charts/episodic_return']).toHaveLength(40);
    expect(run.summary.updates).toBe(40);
  });

  it('trains a language-model algorithm on the CPU backend', async () => {
    quiet();
    const out = join(mkdtempSync(join(tmpdir(), 'train-')), 'run.json');
    const code = await main([
      '--algo=grpo',
      '--task=copy',
      '--backend=cpu',
      '--sft-steps=2',
      '--updates=2',
      '--group-size=2',
      '--prompts-per-update=2',
      '--width=16',
      '--layers=1',
      '--heads=2',
      `--out=${out}`,
    ]);
    expect(code).toBe(0);
    const run = JSON.parse(readFileSync(out, 'utf8'));
    expect(run.algorithm).toBe('grpo');
    expect(run.backend).toMatch(/CPU/);
    expect(run.metrics['reward/mean']).toHaveLength(2);
    expect(run.summary.successRate).toBeGreaterThanOrEqual(0);
  }, 60_000);

  it('scores the frozen reference on onnxruntime-web with --reference=ort', async () => {
    quiet();
    const dir = mkdtempSync(join(tmpdir(), 'train-'));
    const flags = [
      '--algo=grpo',
      '--task=copy',
      '--backend=cpu',
      '--sft-steps=2',
      '--updates=3',
      '--group-size=2',
      '--prompts-per-update=2',
      '--width=16',
      '--layers=1',
      '--heads=2',
      '--kl-coef=0.1',
      '--lr=0.01',
    ];
    const read = (name: string) => JSON.parse(readFileSync(join(dir, name), 'utf8'));
    expect(await main([...flags, '--reference=ort', `--out=${join(dir, 'ort.json')}`])).toBe(0);
    expect(await main([...flags, `--out=${join(dir, 'ours.json')}`])).toBe(0);
    const [ort, ours] = [read('ort.json'), read('ours.json')];
    expect(ort.backend).toBe('CPU (requested), reference on onnxruntime-web (wasm)');
    expect(ours.backend).toBe('CPU (requested)');
    const kl = (run: { metrics: Record<string, number[]> }) => run.metrics['actor/kl_loss']!;
    expect(kl(ours)[2]).toBeGreaterThan(1e-6);
    kl(ours).forEach((k, i) =>
      expect(Math.abs(kl(ort)[i]! - k)).toBeLessThanOrEqual(1e-5 + 1e-3 * k),
    );
    await expect(main([...flags, '--reference=trt'])).rejects.toThrow(/reference.*engine or ort/);
  }, 60_000);

  it('starts from a shipped ONNX export with --init (value head dropped for GRPO)', async () => {
    const log = quiet();
    log.mockClear(); // the spy is shared with the tests before
    const out = join(mkdtempSync(join(tmpdir(), 'train-')), 'run.json');
    const init = fileURLToPath(new URL('../../public/models/reverse.onnx', import.meta.url));
    const flags = ['--task=reverse', '--backend=cpu', '--updates=1', `--init=${init}`];
    const common = ['--group-size=2', '--prompts-per-update=2', `--out=${out}`];
    expect(await main(['--algo=grpo', ...flags, ...common])).toBe(0);
    expect(JSON.parse(readFileSync(out, 'utf8')).metrics['reward/mean']).toHaveLength(1);
    // No warm-up line: the run starts from the file's weights.
    expect(log.mock.calls.flat().join('\n')).not.toMatch(/warm-up/);
    // A task longer than the model's context is refused with both lengths.
    await expect(main(['--algo=grpo', ...flags, '--max-length=12'])).rejects.toThrow(
      /context is 23 tokens, but the task needs up to 27/,
    );
  }, 60_000);

  it("trains through the task's curriculum with --curriculum", async () => {
    quiet();
    const out = join(mkdtempSync(join(tmpdir(), 'train-')), 'run.json');
    const common = ['--task=copy', '--backend=cpu', '--width=16', '--layers=1', '--heads=2'];
    const code = await main([
      '--algo=grpo',
      ...common,
      '--sft-steps=2',
      '--updates=2',
      '--group-size=2',
      '--prompts-per-update=2',
      '--curriculum',
      '--curriculum-threshold=0.5',
      '--curriculum-patience=3',
      `--out=${out}`,
    ]);
    expect(code).toBe(0);
    const run = JSON.parse(readFileSync(out, 'utf8'));
    // Two updates on the first rung (a patience of 3 cannot move up yet).
    expect(run.metrics['curriculum/level']).toEqual([0, 0]);
    await expect(
      main(['--algo=grpo', ...common, '--updates=1', '--curriculum', '--max-length=4']),
    ).rejects.toThrow("curriculum sets the task's options rung by rung; leave out --max-length");
    await expect(main(['--algo=dpo', ...common, '--updates=1', '--curriculum'])).rejects.toThrow(
      'curriculum is only for grpo and ppo',
    );
    await expect(
      main(['--algo=grpo', ...common, '--updates=1', '--curriculum-patience=0']),
    ).rejects.toThrow(/patience must be an integer in \[1, 1000\], got 0/);
  }, 60_000);

  it('refuses unknown flags, bad values and unknown algorithms, naming them', async () => {
    quiet();
    await expect(main(['--algo=sarsa', '--updates=1', '--alpah=0.1'])).rejects.toThrow(/--alpah/);
    await expect(main(['--algo=sarsa', '--updates=1', '--gamma=2'])).rejects.toThrow(
      /gamma.*\[0, 1\]/,
    );
    await expect(main(['--algo=nope'])).rejects.toThrow(/algo.*grpo/);
    await expect(main(['--algo=ppo-mlp', '--env=cliffwalking'])).rejects.toThrow(/env.*cartpole/);
  });
});
