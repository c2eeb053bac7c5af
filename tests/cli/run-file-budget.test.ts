/**
 * `--updates` with `--out` and the lab's run-file import limit agree (issue 42, finding 7): a run
 * whose file the lab would refuse is refused before training, naming the limit; the budget holds
 * for the worst-case file it allows; and every algorithm reports no more metrics per update than
 * the budget assumes.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FlagError } from '../../src/cli/args';
import { maxRunFileUpdates, metricsBound, RUN_FILE_METRICS } from '../../src/cli/run-file-budget';
import { main as train } from '../../src/cli/train';
import { MAX_UPDATES, readTrainFlags } from '../../src/cli/train-flags';
import {
  CLI_RUN_FORMAT,
  CLI_RUN_VERSION,
  IMPORT_LIMITS,
  parseRunFile,
  writeCliRunFile,
} from '../../src/compare/run-file';
import { runCatalog } from '../../src/worker/run-spec';

const temp = () => mkdtempSync(join(tmpdir(), 'budget-'));

afterEach(() => {
  vi.restoreAllMocks();
});

describe('--updates with --out fits the lab import limit', () => {
  it('refuses a GRPO run of 38,000 updates with --out before training, naming the limit', () => {
    // The file: 38,000 GRPO updates were 23.6 MB, over the 20 MB the lab imports.
    const argv = [
      '--algo=grpo',
      '--task=copy',
      '--updates=38000',
      `--out=${join(temp(), 'r.json')}`,
    ];
    let error: unknown;
    try {
      readTrainFlags(argv);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(FlagError);
    expect((error as FlagError).flag).toBe('updates');
    expect((error as Error).message).toBe(
      `--updates must be at most ${maxRunFileUpdates('grpo').toLocaleString('en')} for grpo with ` +
        '--out (up to 48 metrics per update; the lab imports run files of at most 20,000,000 ' +
        'characters and 1,000,000 metric values), got 38000',
    );
    // Without a run file only MAX_UPDATES applies.
    expect(readTrainFlags(['--algo=grpo', '--task=copy', '--updates=38000']).updates).toBe(38000);
    expect(maxRunFileUpdates('grpo')).toBeLessThan(32_000);
    expect(maxRunFileUpdates('q-learning')).toBeLessThan(MAX_UPDATES);
  });

  it('the largest file the budget allows is imported: worst-case values, every metric', () => {
    const algorithm = 'grpo';
    const updates = maxRunFileUpdates(algorithm);
    // The longest number JSON writes (24 characters) in every value of the bound's metrics.
    const series = Array.from({ length: updates }, () => -2.2250738585072014e-308);
    const metrics = Object.fromEntries(
      Array.from({ length: metricsBound(algorithm) }, (_, i) => [`metric/${i}`, series]),
    );
    const text = writeCliRunFile({
      format: CLI_RUN_FORMAT,
      version: CLI_RUN_VERSION,
      algorithm,
      task: 'grpo on copy',
      seed: 1,
      backend: 'CPU',
      createdAt: '2026-12-06T00:00:00.000Z',
      config: runCatalog().algorithms.find((a) => a.name === algorithm)!.defaults,
      sftSteps: 300,
      metrics,
      events: [],
      summary: { updates },
    });
    expect(text.length).toBeLessThanOrEqual(IMPORT_LIMITS.maxChars);
    expect(parseRunFile(text, runCatalog()).metrics['metric/0']).toHaveLength(updates);
  }, 60_000);

  it.each(Object.keys(RUN_FILE_METRICS).filter((a) => !['grpo', 'ppo', 'dpo'].includes(a)))(
    '%s reports no more metrics per update than the budget assumes',
    async (algorithm) => {
      vi.spyOn(console, 'log').mockImplementation(() => {});
      const out = join(temp(), 'run.json');
      expect(await train([`--algo=${algorithm}`, '--updates=3', `--out=${out}`])).toBe(0);
      const run = JSON.parse(readFileSync(out, 'utf8'));
      expect(Object.keys(run.metrics).length).toBeLessThanOrEqual(RUN_FILE_METRICS[algorithm]!);
    },
  );

  it.each(['grpo', 'ppo', 'dpo'])(
    '%s (with a KL term where it has one) reports no more metrics than the budget assumes',
    async (algorithm) => {
      vi.spyOn(console, 'log').mockImplementation(() => {});
      const out = join(temp(), 'run.json');
      const tiny = ['--task=copy', '--backend=cpu', '--sft-steps=2', '--width=16', '--layers=1'];
      const kl = algorithm === 'dpo' ? [] : ['--kl-coef=0.05'];
      const argv = [`--algo=${algorithm}`, ...tiny, '--heads=2', '--updates=2', ...kl];
      expect(await train([...argv, `--out=${out}`])).toBe(0);
      const run = JSON.parse(readFileSync(out, 'utf8'));
      expect(Object.keys(run.metrics).length).toBeLessThanOrEqual(RUN_FILE_METRICS[algorithm]!);
    },
    60_000,
  );
});
