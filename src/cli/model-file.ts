/**
 * Reads a model file named by a flag (`--init`, `--in`) and tells its kind from its first bytes
 * before any decoder sees it: a checkpoint starts with its magic (isCheckpointFile), a JSON file
 * (a run file given by mistake) with `{` or `[`. A JSON file fed to the ONNX reader fails with a
 * protobuf message that names neither the file nor the mistake; this names both.
 */
import { readFileSync } from 'node:fs';
import { isCheckpointFile } from '../models/checkpoint';
import { FlagError } from './args';

export type ModelFileKind = 'checkpoint' | 'json' | 'empty' | 'other';

export function modelFileKind(bytes: Uint8Array): ModelFileKind {
  if (bytes.length === 0) return 'empty';
  if (isCheckpointFile(bytes)) return 'checkpoint';
  const first = String.fromCharCode(...bytes.subarray(0, 64)).trimStart()[0];
  return first === '{' || first === '[' ? 'json' : 'other';
}

/**
 * The bytes of `path`, refused with a message naming `--<flag>` when unreadable, empty or JSON.
 * `takes` says what the flag accepts, e.g. "a checkpoint (.ckpt) or an ONNX export (.onnx)".
 */
export function readModelFile(path: string, flag: string, takes: string): Uint8Array {
  const shown = `--${flag}=${path}`;
  let bytes: Uint8Array;
  try {
    bytes = new Uint8Array(readFileSync(path));
  } catch (error) {
    const code = error && typeof error === 'object' && 'code' in error ? String(error.code) : '';
    throw new FlagError(flag, `${shown}: cannot read the file${code ? ` (${code})` : ''}`);
  }
  const kind = modelFileKind(bytes);
  if (kind === 'empty') throw new FlagError(flag, `${shown} is empty; ${flag} takes ${takes}`);
  if (kind === 'json') {
    const text = new TextDecoder().decode(bytes.subarray(0, 4096));
    const what = /"format"\s*:\s*"agent-rl-lab\/(lab-)?run"/.test(text) ? 'a run file' : 'JSON';
    throw new FlagError(
      flag,
      `${shown} is ${what}, not a model; --${flag} takes ${takes}` +
        (what === 'a run file' ? ' (the lab imports run files on its compare page)' : ''),
    );
  }
  return bytes;
}
