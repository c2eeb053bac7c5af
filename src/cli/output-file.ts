/**
 * Where the CLIs write: the output path is checked before any work (a folder, or a parent that
 * cannot be created or written, fails in the first second rather than after an hour of training),
 * and every write is atomic — the text goes to a temporary file beside the target, then a rename
 * replaces the target — so a crash or Ctrl-C mid-write leaves the previous file whole.
 */
import { existsSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, resolve, sep } from 'node:path';
import { FlagError } from './args';

/** The temporary file beside `target` that a write goes through (one per process). */
function temporaryPath(target: string): string {
  return `${target}.${process.pid}.tmp`;
}

/**
 * Checks that `path` (the value of `--<flag>`) can be written: not a folder, its parent folder
 * created if missing, and writable (a probe file created and removed there). Returns the path.
 */
export function prepareOutput(path: string, flag = 'out'): string {
  const shown = `--${flag}=${path}`;
  if (path.endsWith('/') || path.endsWith(sep)) {
    throw new FlagError(flag, `${shown} names a folder; give a file path (e.g. ${path}run.json)`);
  }
  const target = resolve(path);
  if (existsSync(target) && statSync(target).isDirectory()) {
    throw new FlagError(flag, `${shown} is a folder; give a file path inside it`);
  }
  const folder = dirname(target);
  try {
    mkdirSync(folder, { recursive: true });
  } catch (error) {
    throw new FlagError(flag, `${shown}: cannot create the folder ${folder} (${reason(error)})`);
  }
  const probe = temporaryPath(target);
  try {
    writeFileSync(probe, '');
    rmSync(probe);
  } catch (error) {
    throw new FlagError(flag, `${shown}: cannot write in ${folder} (${reason(error)})`);
  }
  return path;
}

/** Writes `data` to `path` through a temporary file and a rename: readers never see half a file. */
export function writeAtomically(path: string, data: string | Uint8Array): void {
  const target = resolve(path);
  mkdirSync(dirname(target), { recursive: true });
  const temporary = temporaryPath(target);
  try {
    writeFileSync(temporary, data);
    renameSync(temporary, target);
  } catch (error) {
    rmSync(temporary, { force: true });
    throw error;
  }
}

function reason(error: unknown): string {
  if (error && typeof error === 'object' && 'code' in error) return String(error.code);
  return error instanceof Error ? error.message : String(error);
}
