/**
 * Where the CLIs write. The output path is checked before any work (a folder, a device, a link,
 * an input file, or a parent that cannot be created or written, fails in the first second rather
 * than after an hour of training), and every write is atomic: the bytes go to a new temporary
 * file beside the target, then a rename replaces the target, so a crash or Ctrl-C mid-write leaves
 * the previous file whole.
 *
 * Only a regular file is ever replaced. A device (`/dev/null`, or a copy of it made with mknod), a
 * FIFO, a socket or a folder is refused; so is a symbolic link: a rename would replace the link
 * itself and leave its target as it was, which is never what the user meant, and following it
 * would write somewhere the command line does not name. The message gives the link's target, to
 * pass instead. An output that is the same file as an input (same real path, or the same device
 * and inode: a hard link) is refused, since writing it would destroy the input.
 */
import {
  closeSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readlinkSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  writeSync,
  type Stats,
} from 'node:fs';
import { basename, dirname, join, resolve, sep } from 'node:path';
import { shownText } from '../util/shown-text';
import { FlagError } from './args';
import { errorText } from '../util/error-text';

/** An input file of the same command, which the output must not be (`--init`, `--in`). */
export interface InputFile {
  flag: string;
  path: string;
}

/**
 * Most missing folders created above an output. The walk goes up one folder per step to the
 * first that exists, so it ends at the root; this bounds it for paths of absurd depth as well.
 */
export const MAX_NEW_FOLDERS = 32;

/** Characters of a path quoted in a message (an accidental paste may be megabytes long). */
const SHOWN_PATH = 200;

let temporaries = 0;

/**
 * A new temporary name beside `target`. The target's own name is cut so that the temporary one
 * stays within the 255 bytes most file systems allow a name even when the target's is near it.
 */
function temporaryPath(target: string): string {
  temporaries += 1;
  const stem = basename(target).slice(0, 100);
  return join(dirname(target), `.${stem}.${process.pid}-${temporaries}.tmp`);
}

/** What a non-regular file is, for messages. */
function kindOf(stats: Stats): string {
  if (stats.isFile()) return 'a file';
  if (stats.isDirectory()) return 'a folder';
  if (stats.isSymbolicLink()) return 'a symbolic link';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isSocket()) return 'a socket';
  return 'not a regular file';
}

function lstatOrUndefined(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch (error) {
    if (codeOf(error) === 'ENOENT' || codeOf(error) === 'ENOTDIR') return undefined;
    throw error;
  }
}

/**
 * Refuses an existing `target` that is not a regular file: a folder, a device, a FIFO, a socket
 * or a symbolic link (named with its target). `shown` is the flag as given (`--out=run.json`).
 */
function checkTarget(target: string, flag: string, shown: string): Stats | undefined {
  const stats = lstatOrUndefined(target);
  if (!stats || stats.isFile()) return stats;
  if (stats.isDirectory()) {
    throw new FlagError(flag, `${shown} is a folder; give a file path inside it`);
  }
  if (stats.isSymbolicLink()) {
    let to = '';
    try {
      to = ` to ${shownText(readlinkSync(target), SHOWN_PATH)}`;
    } catch {
      // Unreadable link: refused all the same, without its target.
    }
    throw new FlagError(
      flag,
      `${shown} is a symbolic link${to}; --${flag} replaces only regular files: give the path ` +
        'of the file itself',
    );
  }
  throw new FlagError(
    flag,
    `${shown} is ${kindOf(stats)}, not a regular file; --${flag} takes a file path`,
  );
}

/**
 * Creates the missing folders above `folder`, from the top down, one mkdir each (never the
 * recursive mkdir, which loops forever on paths under /proc). Refuses a path whose first existing
 * ancestor is not a folder, or with more than MAX_NEW_FOLDERS missing levels.
 */
function createFolders(folder: string, flag: string, shown: string): void {
  const missing: string[] = [];
  let at = folder;
  for (;;) {
    const stats = lstatOrUndefined(at);
    if (stats) {
      // A link to a folder is a folder here: only the output file itself must not be a link.
      const isFolder = stats.isDirectory() || (stats.isSymbolicLink() && isDirectory(at));
      if (!isFolder) {
        throw new FlagError(
          flag,
          `${shown}: ${shownText(at, SHOWN_PATH)} is ${kindOf(stats)}, not a folder`,
        );
      }
      break;
    }
    missing.push(at);
    if (missing.length > MAX_NEW_FOLDERS) {
      throw new FlagError(
        flag,
        `${shown}: more than ${MAX_NEW_FOLDERS} folders of it are missing; create them first`,
      );
    }
    const parent = dirname(at);
    if (parent === at) break; // the root, missing: mkdir below says why
    at = parent;
  }
  for (const path of missing.reverse()) {
    try {
      mkdirSync(path);
    } catch (error) {
      if (codeOf(error) === 'EEXIST' && isDirectory(path)) continue; // made meanwhile
      throw new FlagError(
        flag,
        `${shown}: cannot create the folder ${shownText(path, SHOWN_PATH)} (${reason(error)})`,
      );
    }
  }
}

function isDirectory(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** The real path `target` would have: its own when it exists, else its folder's plus its name. */
function realTarget(target: string): string {
  try {
    return realpathSync(target);
  } catch {
    try {
      return join(realpathSync(dirname(target)), basename(target));
    } catch {
      return target;
    }
  }
}

/** Refuses `target` when it is one of `inputs`: the same real path, or the same dev + inode. */
function checkNotAnInput(
  target: string,
  flag: string,
  shown: string,
  inputs: readonly InputFile[],
): void {
  const real = realTarget(target);
  const stats = (() => {
    try {
      return statSync(target);
    } catch {
      return undefined;
    }
  })();
  for (const input of inputs) {
    let same = realTarget(resolve(input.path)) === real;
    if (!same && stats) {
      try {
        const other = statSync(input.path);
        same = other.dev === stats.dev && other.ino === stats.ino;
      } catch {
        // An unreadable input is refused by its own reader, with its own flag.
      }
    }
    if (same) {
      throw new FlagError(
        flag,
        `${shown} is the same file as --${input.flag}=${shownText(input.path, SHOWN_PATH)}; ` +
          `writing it would destroy the input: give --${flag} another path`,
      );
    }
  }
}

/**
 * Checks that `path` (the value of `--<flag>`) can be written: a regular file or nothing yet, not
 * one of `inputs`, its missing folders created, and its folder writable (a temporary file is
 * created and removed there). Returns the path.
 */
export function prepareOutput(
  path: string,
  flag = 'out',
  inputs: readonly InputFile[] = [],
): string {
  const shown = `--${flag}=${shownText(path, SHOWN_PATH)}`;
  if (path.endsWith('/') || path.endsWith(sep)) {
    throw new FlagError(flag, `${shown} names a folder; give a file path (e.g. ${shown}run.json)`);
  }
  const target = resolve(path);
  checkTarget(target, flag, shown);
  const folder = dirname(target);
  createFolders(folder, flag, shown);
  checkNotAnInput(target, flag, shown, inputs);
  const probe = temporaryPath(target);
  try {
    closeSync(openSync(probe, 'wx'));
    rmSync(probe);
  } catch (error) {
    throw new FlagError(
      flag,
      `${shown}: cannot write in ${shownText(folder, SHOWN_PATH)} (${reason(error)})`,
    );
  }
  return path;
}

/**
 * Writes `data` to `path` through a new temporary file and a rename: readers never see half a
 * file. The checks of prepareOutput are made again (the target or its folder may have been
 * replaced while the command ran), each failure a FlagError naming `--<flag>`.
 */
export function writeAtomically(path: string, data: string | Uint8Array, flag = 'out'): void {
  const shown = `--${flag}=${shownText(path, SHOWN_PATH)}`;
  const target = resolve(path);
  createFolders(dirname(target), flag, shown);
  checkTarget(target, flag, shown);
  const temporary = temporaryPath(target);
  let fd: number | undefined;
  try {
    // 'wx': a new file only, so a link or a file planted at the temporary name is never written.
    fd = openSync(temporary, 'wx', 0o644);
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    for (let done = 0; done < bytes.length;) {
      done += writeSync(fd, bytes, done, bytes.length - done);
    }
    fsyncSync(fd);
    closeSync(fd);
    fd = undefined;
    // The target may have become something else since the check above: refuse rather than
    // replace it (a rename over a folder fails anyway; over a link or a device it would not).
    checkTarget(target, flag, shown);
    renameSync(temporary, target);
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    rmSync(temporary, { force: true });
    if (error instanceof FlagError) throw error;
    throw new FlagError(flag, `${shown}: cannot write the file (${reason(error)})`);
  }
}

function codeOf(error: unknown): string | undefined {
  return error && typeof error === 'object' && 'code' in error ? String(error.code) : undefined;
}

function reason(error: unknown): string {
  const code = codeOf(error);
  if (code) return code;
  return errorText(error);
}
