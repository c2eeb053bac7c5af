/**
 * `--out` never destroys what it names: a device, a FIFO, a folder or a symbolic link is refused
 * and left as it was, an output that is an input is refused before any work, a path under /proc
 * fails at once instead of looping, and a run whose folder is replaced mid-run keeps its updates.
 */
import { execFileSync } from 'node:child_process';
import {
  copyFileSync,
  existsSync,
  linkSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as fs from 'node:fs';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { FlagError } from '../../src/cli/args';
import { main as exportOnnx } from '../../src/cli/export-onnx';
import { MAX_NEW_FOLDERS, prepareOutput, writeAtomically } from '../../src/cli/output-file';
import { main as train } from '../../src/cli/train';
import { saveActorCritic } from '../../src/models/mlp-checkpoint';
import { CpuActorCritic, initAgent, ppoAgentLayout } from '../../src/models/mlp-policy';

// mkdirSync passes through a spy: a bounded walk is then a count of its calls.
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  return { ...real, mkdirSync: vi.fn(real.mkdirSync) };
});

const ENV_RUN = ['--algo=q-learning', '--env=cliffwalking', '--updates=3'];
const isRoot = process.getuid?.() === 0;
const hasProc = existsSync('/proc/self');

const temp = () => mkdtempSync(join(tmpdir(), 'output-file-'));

afterEach(() => {
  vi.restoreAllMocks();
});

async function actorCriticCheckpoint(path: string): Promise<void> {
  const agent = ppoAgentLayout(4, 2);
  writeFileSync(
    path,
    await saveActorCritic(new CpuActorCritic(agent, initAgent(agent, 2)), { seed: 2 }),
  );
}

describe('--out: only a regular file is replaced (finding 1)', () => {
  it('refuses a FIFO and leaves it a FIFO', async () => {
    const fifo = join(temp(), 'pipe');
    execFileSync('mkfifo', [fifo]);
    await expect(train([...ENV_RUN, `--out=${fifo}`])).rejects.toThrow(
      `--out=${fifo} is a FIFO (named pipe), not a regular file; --out takes a file path`,
    );
    expect(lstatSync(fifo).isFIFO()).toBe(true);
  });

  it.skipIf(!isRoot)(
    'refuses a copy of /dev/null (a character device) and leaves it one',
    async () => {
      const device = join(temp(), 'null');
      execFileSync('mknod', [device, 'c', '1', '3']);
      await expect(train([...ENV_RUN, `--out=${device}`])).rejects.toThrow(
        `--out=${device} is a character device, not a regular file`,
      );
      expect(lstatSync(device).isCharacterDevice()).toBe(true);
    },
  );

  it('refuses a symbolic link, naming its target, and leaves link and target as they were', async () => {
    const dir = temp();
    const target = join(dir, 'kept.json');
    const link = join(dir, 'link.json');
    writeFileSync(target, 'keep');
    symlinkSync(target, link);
    const run = train([...ENV_RUN, `--out=${link}`]);
    await expect(run).rejects.toThrow(FlagError);
    await expect(train([...ENV_RUN, `--out=${link}`])).rejects.toThrow(
      `--out=${link} is a symbolic link to ${target}; --out replaces only regular files`,
    );
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(readFileSync(target, 'utf8')).toBe('keep');
  });

  it('replaces a regular file atomically and leaves no temporary file behind', () => {
    const dir = temp();
    const out = join(dir, 'run.json');
    writeFileSync(out, 'old');
    prepareOutput(out);
    writeAtomically(out, 'new');
    expect(readFileSync(out, 'utf8')).toBe('new');
    expect(readdirSync(dir)).toEqual(['run.json']);
  });
});

describe('--out is never an input (finding 2)', () => {
  it('export:onnx --in=X --out=X refuses and leaves X as it was', async () => {
    const ckpt = join(temp(), 'mine.ckpt');
    await actorCriticCheckpoint(ckpt);
    const before = readFileSync(ckpt);
    await expect(exportOnnx([`--in=${ckpt}`, `--out=${ckpt}`, '--verify=false'])).rejects.toThrow(
      `--out=${ckpt} is the same file as --in=${ckpt}; writing it would destroy the input`,
    );
    expect(readFileSync(ckpt)).toEqual(before);
  });

  it('refuses the same file by another name: a hard link, a path through a folder link', async () => {
    const dir = temp();
    const ckpt = join(dir, 'mine.ckpt');
    await actorCriticCheckpoint(ckpt);
    const hard = join(dir, 'hard.onnx');
    linkSync(ckpt, hard);
    symlinkSync(dir, join(dir, 'via'));
    for (const out of [hard, join(dir, 'via', 'mine.ckpt'), join(dir, '.', 'mine.ckpt')]) {
      expect(() => prepareOutput(out, 'out', [{ flag: 'in', path: ckpt }])).toThrow(
        'is the same file as --in=',
      );
    }
  });

  it('train --init=X --out=X refuses before any training and leaves X as it was', async () => {
    const dir = temp();
    const ckpt = join(dir, 'X.ckpt');
    copyFileSync('public/models/copy.ckpt', ckpt);
    const before = readFileSync(ckpt);
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    await expect(
      train([
        '--algo=grpo',
        '--task=copy',
        '--backend=cpu',
        '--updates=1',
        `--init=${ckpt}`,
        `--out=${ckpt}`,
      ]),
    ).rejects.toThrow(`--out=${ckpt} is the same file as --init=${ckpt}`);
    expect(log).not.toHaveBeenCalled();
    expect(readFileSync(ckpt)).toEqual(before);
  });
});

describe('--out folders are created with a bounded walk (finding 3)', () => {
  it.skipIf(!hasProc)('refuses a path under /proc at once, naming the flag', async () => {
    const mkdir = vi.mocked(fs.mkdirSync);
    mkdir.mockClear();
    await expect(
      train(['--algo=q-learning', '--updates=1', '--out=/proc/nope/x.json']),
    ).rejects.toThrow('--out=/proc/nope/x.json: cannot create the folder /proc/nope (ENOENT)');
    // One mkdir of the one missing folder, not the recursive one that loops under /proc.
    expect(mkdir.mock.calls).toEqual([['/proc/nope']]);
  });

  it('creates a few missing folders, and refuses more than MAX_NEW_FOLDERS', () => {
    const dir = temp();
    prepareOutput(join(dir, 'a', 'b', 'c', 'run.json'));
    expect(lstatSync(join(dir, 'a', 'b', 'c')).isDirectory()).toBe(true);
    const deep = join(dir, ...Array.from({ length: MAX_NEW_FOLDERS + 1 }, () => 'd'), 'run.json');
    expect(() => prepareOutput(deep)).toThrow(`folders of it are missing; create them first`);
    expect(existsSync(join(dir, 'd'))).toBe(false);
  });

  it('refuses a path through a file, naming it', () => {
    const dir = temp();
    writeFileSync(join(dir, 'file'), '');
    expect(() => prepareOutput(join(dir, 'file', 'run.json'), 'out')).toThrow(
      `${join(dir, 'file')} is a file, not a folder`,
    );
  });
});

describe('a run whose --out folder is replaced mid-run (finding 5)', () => {
  it('ends with one FlagError naming --out and keeps the updates in a copy', async () => {
    const dir = temp();
    const folder = join(dir, 'runs');
    mkdirSync(folder);
    let replaced = false;
    vi.spyOn(console, 'log').mockImplementation((line: unknown) => {
      // After the first update's progress line: the folder becomes a file.
      if (!replaced && String(line).includes(' 1/')) {
        replaced = true;
        rmSync(folder, { recursive: true });
        writeFileSync(folder, 'not a folder');
      }
    });
    const run = train([
      '--algo=q-learning',
      '--env=cliffwalking',
      '--updates=5',
      '--log-every=1',
      `--out=${join(folder, 'run.json')}`,
    ]);
    const error = await run.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(replaced).toBe(true);
    expect(error).toBeInstanceOf(FlagError);
    const message = (error as FlagError).message;
    expect((error as FlagError).flag).toBe('out');
    expect(message).not.toContain('\n');
    expect(message).toContain(`${folder} is a file, not a folder`);
    const copy = /the run was saved to (\S+) instead/.exec(message)?.[1];
    expect(copy).toBeDefined();
    const saved = JSON.parse(readFileSync(copy!, 'utf8'));
    expect(saved.summary.updates).toBe(5);
    rmSync(copy!);
  });
});
