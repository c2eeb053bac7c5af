/**
 * `npm run sft`: numbers refused with their flag and range before training (a wild --lr among
 * them), and a run whose loss turns non-finite ends with exit code 1 and leaves an existing
 * checkpoint as it was. The divergence is injected into the progress reports (a real one at a
 * bounded lr is not reproducible in a few steps); the CLI's response is what is tested.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main } from '../../src/cli/sft';
import { loadLanguageModel } from '../../src/models/lm-checkpoint';

const inject = vi.hoisted(() => ({ nanLoss: false }));

vi.mock('../../src/rl/sft', async (importOriginal) => {
  const real = await importOriginal<typeof import('../../src/rl/sft')>();
  return {
    ...real,
    runSft: ((model, tokenizer, task, config, onProgress) =>
      real.runSft(model, tokenizer, task, config, (progress) =>
        onProgress?.(
          inject.nanLoss
            ? { ...progress, metrics: progress.metrics.map((m) => ({ ...m, loss: NaN })) }
            : progress,
        ),
      )) as typeof real.runSft,
  };
});

const tiny = [
  '--backend=cpu',
  '--steps=2',
  '--width=16',
  '--layers=1',
  '--heads=2',
  '--eval-every=1',
  '--eval-samples=2',
];

afterEach(() => {
  inject.nanLoss = false;
  vi.restoreAllMocks();
});

describe('npm run sft', () => {
  it.each<[string, string, string]>([
    ['a wild learning rate', '--lr=1e30', "--lr must be a number in (0, 1], got '1e30'"],
    ['a learning rate of 0', '--lr=0', "--lr must be a number in (0, 1], got '0'"],
    ['negative steps', '--steps=-1', "--steps must be an integer in [1, 10000000], got '-1'"],
    ['fractional steps', '--steps=1.5', "--steps must be an integer in [1, 10000000], got '1.5'"],
    ['a negative seed', '--seed=-2', "--seed must be an integer in [0, 2147483647], got '-2'"],
    [
      'an unknown backend',
      '--backend=gpu',
      "--backend must be one of auto, webgpu, cpu, got 'gpu'",
    ],
    ['an unknown task', '--task=constructor', "--task must be one of reverse, got 'constructor'"],
    ['--out with no value', '--out', '--out needs a value'],
  ])('refuses %s before training', async (_what, bad, message) => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    await expect(main([...tiny, bad])).rejects.toThrow(message);
    expect(log).not.toHaveBeenCalled();
  });

  it('writes a checkpoint whose weights are finite', async () => {
    vi.spyOn(console, 'log').mockImplementation(() => {});
    const out = join(mkdtempSync(join(tmpdir(), 'sft-')), 'models', 'r.ckpt');
    expect(await main([...tiny, `--out=${out}`])).toBe(0);
    const loaded = loadLanguageModel(new Uint8Array(readFileSync(out)));
    expect(loaded.config.width).toBe(16);
    expect(loaded.params.every(Number.isFinite)).toBe(true);
  });

  it('stops with exit code 1 on a non-finite loss and leaves the checkpoint there untouched', async () => {
    vi.spyOn(console, 'log').mockImplementation(() => {});
    const error = vi.spyOn(console, 'error').mockImplementation(() => {});
    const out = join(mkdtempSync(join(tmpdir(), 'sft-')), 'good.ckpt');
    writeFileSync(out, 'a good checkpoint');
    inject.nanLoss = true;
    expect(await main([...tiny, '--lr=1', `--out=${out}`])).toBe(1);
    expect(readFileSync(out, 'utf8')).toBe('a good checkpoint');
    expect(error.mock.calls.flat().join('\n')).toContain(
      `sft: training diverged (the loss is NaN at step 1) at --lr=1; try a smaller --lr. ${out} was not written.`,
    );
  });
});
