/**
 * `npm run build:models` checks every file it will write before the first model trains, and
 * reads its manifest with a size bound (the CLIs' output and input rules, cli/output-file.ts and
 * cli/model-file.ts).
 */
import { execFileSync } from 'node:child_process';
import { closeSync, lstatSync, mkdirSync, mkdtempSync, openSync, truncateSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { main, MAX_MANIFEST_BYTES, readManifest } from '../../scripts/build-models';

describe('build:models files', () => {
  it('refuses an output that is a FIFO before building, and leaves it one', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'build-models-'));
    const fifo = join(dir, 'copy.onnx');
    execFileSync('mkfifo', [fifo]);
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    await expect(
      main(['--only=copy', `--out=${dir}`, `--manifest=${join(dir, 'manifest.json')}`]),
    ).rejects.toThrow(`--out=${fifo} is a FIFO (named pipe), not a regular file`);
    expect(log).not.toHaveBeenCalled();
    expect(lstatSync(fifo).isFIFO()).toBe(true);
    log.mockRestore();
  });

  it("checks the tiny chat model's files too before building, and knows its name", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'build-models-'));
    const folder = join(dir, 'hf', 'tiny-chat');
    mkdirSync(folder, { recursive: true });
    const fifo = join(folder, 'model.safetensors');
    execFileSync('mkfifo', [fifo]);
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const manifest = `--manifest=${join(dir, 'manifest.json')}`;
    await expect(main(['--only=tiny-chat', `--out=${dir}`, manifest])).rejects.toThrow(
      `--out=${fifo} is a FIFO (named pipe), not a regular file`,
    );
    await expect(main(['--only=tiny-chats', `--out=${dir}`, manifest])).rejects.toThrow(
      /--only: unknown model\(s\) tiny-chats; known: .*multiply-recall, tiny-chat$/,
    );
    expect(log).not.toHaveBeenCalled();
    log.mockRestore();
  });

  it('reads a manifest only when it is a regular file within the bound', () => {
    const dir = mkdtempSync(join(tmpdir(), 'build-models-'));
    const big = join(dir, 'manifest.json');
    closeSync(openSync(big, 'w'));
    truncateSync(big, MAX_MANIFEST_BYTES + 1);
    expect(() => readManifest('/dev/zero', 'manifest')).toThrow(
      '--manifest=/dev/zero is a character device, not a regular file',
    );
    expect(() => readManifest(big, 'manifest')).toThrow(
      `--manifest=${big} is 1,048,577 bytes; --manifest reads at most 1,048,576 bytes ` +
        '(a manifest is a few kilobytes)',
    );
  });
});
