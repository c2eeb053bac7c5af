/**
 * Ctrl-C during `npm run train` keeps the updates made: a real process (scripts/run-ts.mjs, as
 * npm runs it) gets SIGINT mid-run, ends after the update in progress, writes its run file, and
 * exits 130 (the shell's code for an interrupt).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRunFile } from '../../src/compare/run-file';
import { runCatalog } from '../../src/worker/run-spec';

describe('npm run train: Ctrl-C and SIGTERM', () => {
  it.each<[NodeJS.Signals, number]>([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ])(
    'on %s writes the run file of the updates made and exits %i',
    async (signal, exitCode) => {
      const out = join(mkdtempSync(join(tmpdir(), 'train-int-')), 'run.json');
      const child = spawn(
        process.execPath,
        [
          'scripts/run-ts.mjs',
          'src/cli/train.ts',
          '--algo=ppo-mlp',
          '--env=cartpole',
          // Long enough never to end by itself, within what a run file may hold (run-file-budget).
          '--updates=20000',
          '--log-every=1',
          `--out=${out}`,
        ],
        { stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let stdout = '';
      let signalled = false;
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += chunk.toString();
        // Interrupt once a few updates have reported.
        if (!signalled && /\] 3\/20000/.test(stdout)) {
          signalled = true;
          child.kill(signal);
        }
      });
      const code = await new Promise<number | null>((resolve) => {
        child.on('close', resolve);
        // Never leave the process behind: past 50 s it is killed and the test fails on its code.
        setTimeout(() => child.kill('SIGKILL'), 50_000).unref();
      });
      expect(signalled).toBe(true);
      expect(code).toBe(exitCode);
      const text = readFileSync(out, 'utf8');
      const run = JSON.parse(text);
      expect(run.summary.status).toBe('interrupted');
      expect(run.summary.updates).toBeGreaterThanOrEqual(3);
      expect(run.summary.updates).toBeLessThan(20000);
      const imported = parseRunFile(text, runCatalog());
      expect(imported.metrics['charts/episodic_return']).toHaveLength(run.summary.updates);
      expect(stdout).toContain(
        `interrupted (${signal}): ending after this update and writing the run file`,
      );
    },
    60_000,
  );
});
