/** A model file's kind from its first bytes, and the refusals `--init` / `--in` give before decoding. */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { modelFileKind, readModelFile } from '../../src/cli/model-file';
import { main } from '../../src/cli/train';
import { CHECKSUM_KEY } from '../../src/onnx/integrity';
import { decodeModel, encodeModel } from '../../src/onnx/onnx-proto';

const bytes = (text: string) => new TextEncoder().encode(text);

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
});
