/** A model file's kind from its first bytes, and the refusals `--init` / `--in` give before decoding. */
import { execFileSync } from 'node:child_process';
import {
  closeSync,
  mkdtempSync,
  openSync,
  readFileSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import * as fs from 'node:fs';
import { FlagError } from '../../src/cli/args';
import { MAX_MODEL_FILE_BYTES, modelFileKind, readModelFile } from '../../src/cli/model-file';
import { TRANSFORMER_LIMITS } from '../../src/models/transformer-config';
import { main } from '../../src/cli/train';
import { CHECKSUM_KEY } from '../../src/onnx/integrity';
import { decodeModel, encodeModel } from '../../src/onnx/onnx-proto';

const bytes = (text: string) => new TextEncoder().encode(text);

// Spies on the calls that open or read a file, passing through: "refused by stat, before a byte
// is read" is then a count of calls rather than a time limit a loaded machine fails.
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  return {
    ...real,
    openSync: vi.fn(real.openSync),
    readSync: vi.fn(real.readSync),
    readFileSync: vi.fn(real.readFileSync),
  };
});

/** Runs `refuse` and counts the opens and reads it made. */
function opensAndReads(refuse: () => void): number {
  const spies = [fs.openSync, fs.readSync, fs.readFileSync].map((f) => vi.mocked(f));
  for (const spy of spies) spy.mockClear();
  refuse();
  return spies.reduce((n, spy) => n + spy.mock.calls.length, 0);
}

describe('model files', () => {
  it.each<[string, Uint8Array, string]>([
    ['a checkpoint', bytes('ARLCKPT1\u0001…'), 'checkpoint'],
    ['a run file', bytes('{"format":"agent-rl-lab/run"}'), 'json'],
    ['JSON after white space', bytes('\n  [1, 2]'), 'json'],
    ['an empty file', new Uint8Array(0), 'empty'],
    ['ONNX (a protobuf starting with ir_version)', new Uint8Array([0x08, 0x08, 0x12]), 'other'],
  ])('tells %s', (_what, data, kind) => {
    expect(modelFileKind(data)).toBe(kind);
  });

  it('refuses unreadable, empty and JSON files, naming the flag', () => {
    const dir = mkdtempSync(join(tmpdir(), 'model-file-'));
    const empty = join(dir, 'empty.ckpt');
    const json = join(dir, 'x.json');
    writeFileSync(empty, '');
    writeFileSync(json, '{"a": 1}');
    const takes = 'a checkpoint';
    expect(() => readModelFile(join(dir, 'none'), 'init', takes)).toThrow(
      `--init=${join(dir, 'none')}: cannot read the file (ENOENT)`,
    );
    expect(() => readModelFile(empty, 'init', takes)).toThrow(`--init=${empty} is empty`);
    expect(() => readModelFile(json, 'init', takes)).toThrow(
      `--init=${json} is JSON, not a model; --init takes a checkpoint`,
    );
  });

  it('train --init with a run file says so before the ONNX reader sees it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'model-file-'));
    const run = join(dir, 'run.json');
    writeFileSync(run, JSON.stringify({ format: 'agent-rl-lab/run', version: 1 }, null, 1));
    await expect(
      main(['--algo=grpo', '--task=copy', '--backend=cpu', '--updates=1', `--init=${run}`]),
    ).rejects.toThrow(
      `--init=${run} is a run file, not a model; --init takes a checkpoint (.ckpt) or an ONNX ` +
        'export (.onnx) (the lab imports run files on its compare page)',
    );
  });

  it('train --init with an ONNX file without a checksum trains and prints the note', async () => {
    // The shipped copy model written again without its checksum, as an export from before.
    const model = decodeModel(new Uint8Array(readFileSync('public/models/copy.onnx')));
    model.metadataProps = model.metadataProps.filter((e) => e.key !== CHECKSUM_KEY);
    model.producerVersion = '1';
    const dir = mkdtempSync(join(tmpdir(), 'model-file-'));
    const onnx = join(dir, 'unchecked.onnx');
    writeFileSync(onnx, encodeModel(model));
    vi.spyOn(console, 'log').mockImplementation(() => {});
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    const flags = ['--algo=grpo', '--task=copy', '--backend=cpu', '--updates=1'];
    expect(await main([...flags, `--init=${onnx}`, `--out=${join(dir, 'run.json')}`])).toBe(0);
    expect(warn.mock.calls.map((c) => String(c[0])).join('\n')).toContain(
      `note (--init=${onnx}): This ONNX file has no checksum`,
    );
    warn.mockRestore();
  }, 60_000);

  it('refuses /dev/zero, a FIFO and a folder at once, by stat, before a byte is read', () => {
    const dir = mkdtempSync(join(tmpdir(), 'model-file-'));
    const fifo = join(dir, 'pipe');
    execFileSync('mkfifo', [fifo]);
    const takes = 'a checkpoint';
    // Reading either whole would never end (/dev/zero) or block until a writer came (a FIFO).
    const touched = opensAndReads(() => {
      expect(() => readModelFile('/dev/zero', 'init', takes)).toThrow(
        '--init=/dev/zero is a character device, not a regular file',
      );
      expect(() => readModelFile(fifo, 'in', takes)).toThrow(
        `--in=${fifo} is a FIFO (named pipe), not a regular file`,
      );
      expect(() => readModelFile(dir, 'init', takes)).toThrow(`--init=${dir} is a folder`);
    });
    expect(touched, 'opens and reads').toBe(0);
  });

  it('refuses a sparse file past the largest model the lab loads by its size, naming the bound', () => {
    const dir = mkdtempSync(join(tmpdir(), 'model-file-'));
    const sparse = join(dir, 'giant.ckpt');
    closeSync(openSync(sparse, 'w'));
    truncateSync(sparse, 300_000_000); // 300 MB of holes: no disk, and nothing to read quickly
    const touched = opensAndReads(() => {
      expect(() => readModelFile(sparse, 'init', 'a checkpoint')).toThrow(
        `--init=${sparse} is 300,000,000 bytes; --init reads at most ` +
          `${MAX_MODEL_FILE_BYTES.toLocaleString('en')} bytes (the largest model the lab loads)`,
      );
    });
    expect(touched, 'opens and reads').toBe(0);
    // The spies see the reads of a file that is taken: one open, then reads of what it holds.
    const small = join(dir, 'small.ckpt');
    writeFileSync(small, bytes('ARLCKPT1 and a little more'));
    expect(opensAndReads(() => readModelFile(small, 'init', 'a checkpoint'))).toBeGreaterThan(1);
  });

  it('bounds model files by the largest transformer the limits allow, with its AdamW moments', () => {
    // Counted by hand from TRANSFORMER_LIMITS (V = T = C = 256, 6 layers, untied, a value head):
    // wte + wpe + lm_head = 3·256·256; per layer 2 LayerNorms (4C), qkv (3C² + 3C), proj (C² + C),
    // fc (4C² + 4C), fc proj (4C² + C); the final LayerNorm 2C; the value head C + 1.
    const [V, T, C, L] = [256, 256, 256, TRANSFORMER_LIMITS.layers[1]];
    const perLayer =
      4 * C + (3 * C * C + 3 * C) + (C * C + C) + (4 * C * C + 4 * C) + (4 * C * C + C);
    const floats = V * C + T * C + V * C + L * perLayer + 2 * C + C + 1;
    expect(MAX_MODEL_FILE_BYTES).toBe(floats * 4 * 3 + 4 * 1024 * 1024);
  });

  it('train --init=/dev/zero is refused at once with one line naming --init (finding 4)', async () => {
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const error = await main([
      '--algo=grpo',
      '--task=copy',
      '--backend=cpu',
      '--updates=1',
      '--init=/dev/zero',
    ]).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FlagError);
    expect((error as FlagError).flag).toBe('init');
    expect((error as Error).message).toMatch(/^--init=\/dev\/zero is a character device/);
    log.mockRestore();
  });
});
