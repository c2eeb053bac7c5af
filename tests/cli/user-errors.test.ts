/**
 * Every kind of user error of the CLIs is one FlagError that names the flag and what it takes
 * (scripts/run-ts.mjs prints a FlagError as one line, exit code 1, no stack): a damaged
 * checkpoint or ONNX file (CheckpointError, OnnxError inside), a flag outside what an internal
 * function accepts (sft --context), a number not written in decimal, a value too long to quote
 * whole. One end-to-end run through run-ts.mjs checks the printing itself.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FlagError } from '../../src/cli/args';
import { main as exportOnnx } from '../../src/cli/export-onnx';
import { main as sft } from '../../src/cli/sft';
import { main as train } from '../../src/cli/train';
import { readTrainFlags } from '../../src/cli/train-flags';
import { SHOWN_TEXT_MAX } from '../../src/util/shown-text';

const LM_RUN = ['--algo=grpo', '--task=copy', '--backend=cpu', '--updates=1'];
const temp = () => mkdtempSync(join(tmpdir(), 'user-errors-'));

afterEach(() => {
  vi.restoreAllMocks();
});

/** The FlagError `run` rejects with (fails the test on anything else). */
async function flagError(run: Promise<unknown>): Promise<FlagError> {
  const error = await run.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, String(error)).toBeInstanceOf(FlagError);
  expect((error as FlagError).message).not.toContain('\n');
  return error as FlagError;
}

/** The first `bytes` bytes of a shipped file, in a temporary folder. */
function cut(source: string, bytes: number, name: string): string {
  const path = join(temp(), name);
  writeFileSync(path, readFileSync(source).subarray(0, bytes));
  return path;
}

describe('CLI user errors are one line naming the flag (finding 5)', () => {
  it('train --init with a truncated checkpoint (a CheckpointError inside)', async () => {
    const ckpt = cut('public/models/copy.ckpt', 500, 'cut.ckpt');
    const error = await flagError(train([...LM_RUN, `--init=${ckpt}`]));
    expect(error.flag).toBe('init');
    expect(error.message).toMatch(
      new RegExp(`^--init=${ckpt}: checkpoint header: truncated: the preamble declares`),
    );
  });

  it('train --init with a damaged ONNX file (an OnnxError inside)', async () => {
    const onnx = cut('public/models/copy.onnx', 300, 'cut.onnx');
    const error = await flagError(train([...LM_RUN, `--init=${onnx}`]));
    expect(error.flag).toBe('init');
    expect(error.message).toMatch(new RegExp(`^--init=${onnx}: onnx: `));
  });

  it('export:onnx --in with an ONNX file or a cut checkpoint (CheckpointError inside)', async () => {
    const dir = temp();
    const onnx = join(dir, 'model.onnx');
    copyFileSync('public/models/copy.onnx', onnx);
    const out = join(dir, 'out.onnx');
    const notCkpt = await flagError(exportOnnx([`--in=${onnx}`, `--out=${out}`]));
    expect(notCkpt.flag).toBe('in');
    expect(notCkpt.message).toMatch(
      new RegExp(`^--in=${onnx}: checkpoint magic: not a checkpoint`),
    );
    const ckpt = cut('public/models/copy.ckpt', 2000, 'cut.ckpt');
    const truncated = await flagError(exportOnnx([`--in=${ckpt}`, `--out=${out}`]));
    expect(truncated.message).toMatch(new RegExp(`^--in=${ckpt}: checkpoint `));
  });

  it('sft --context too short for the task names --context and its range, not runSft', async () => {
    const error = await flagError(sft(['--context=4', '--steps=1', '--backend=cpu']));
    expect(error.flag).toBe('context');
    expect(error.message).toBe(
      '--context must be at least 15 for reverse(3–6) (its longest prompt and answer with ' +
        '<bos> and <eos>), at most 256, got 4',
    );
  });

  it('a number flag in hex, or a spec-generated one, is refused naming decimal notation', () => {
    expect(() => readTrainFlags(['--algo=q-learning', '--updates=0x10'])).toThrow(
      '--updates must be an integer in [1, 100000] in decimal notation (digits, an optional . ' +
        "and e-exponent: 3, 0.001, 1e-3), got '0x10'",
    );
    expect(() => readTrainFlags(['--algo=grpo', '--lr=0x1'])).toThrow(
      'grpo: lr must be a number in (0, 1] in decimal notation',
    );
    // Exponents are decimal notation (learning rates are written so): 1e3 is 1000.
    expect(readTrainFlags(['--algo=q-learning', '--updates=1e3']).updates).toBe(1000);
  });

  it('a setting refused by its own check (an OpInputError inside) names its flag first', () => {
    const refusal = (argv: string[]) => {
      try {
        readTrainFlags(argv);
      } catch (error) {
        expect(error).toBeInstanceOf(FlagError);
        return [(error as FlagError).flag, (error as Error).message];
      }
      return [];
    };
    expect(refusal(['--algo=grpo', '--task=copy', '--kl-coef=-1'])).toEqual([
      'kl-coef',
      '--kl-coef: grpo: klCoef must be a number in [0, 10], got -1',
    ]);
    expect(refusal(['--algo=grpo', '--reward-model', '--reward-model-steps=0'])[0]).toBe(
      'reward-model-steps',
    );
    expect(refusal(['--algo=sarsa', '--env=moon'])).toEqual([
      'env',
      "--env: train: env must be one of gridworld, gridworld-4x3, frozenlake-4x4, frozenlake-8x8, cliffwalking for sarsa, got 'moon'",
    ]);
  });

  it('a bad value is quoted cut to a bounded length, however long', () => {
    const long = 'x'.repeat(1_000_000);
    for (const argv of [
      [`--updates=${long}`],
      [`--backend=${long}`],
      ['--algo=grpo', `--lr=${long}`],
      [`--${long}=1`],
    ]) {
      let message = '';
      try {
        readTrainFlags(argv);
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toContain('…');
      expect(message.length).toBeLessThan(SHOWN_TEXT_MAX + 300);
    }
  });

  it('run-ts.mjs prints a FlagError as one line and exits 1, with no stack', () => {
    const ckpt = cut('public/models/copy.ckpt', 500, 'cut.ckpt');
    const result = spawnSync(
      process.execPath,
      ['scripts/run-ts.mjs', 'src/cli/train.ts', ...LM_RUN, `--init=${ckpt}`],
      { encoding: 'utf8', timeout: 60_000 },
    );
    expect(result.status).toBe(1);
    const lines = `${result.stdout}${result.stderr}`
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('vulkan:'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^error: --init=${ckpt}: checkpoint header: truncated`));
  }, 90_000);
});
