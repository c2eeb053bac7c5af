/**
 * Reads a model file named by a flag (`--init`, `--in`) and tells its kind from its first bytes
 * before any decoder sees it: a checkpoint starts with its magic (isCheckpointFile), a JSON file
 * (a run file given by mistake) with `{` or `[`. A JSON file fed to the ONNX reader fails with a
 * protobuf message that names neither the file nor the mistake; this names both.
 *
 * The file is looked at with stat before a byte is read: anything but a regular file (a device
 * such as /dev/zero, a FIFO, a folder) and a file larger than the largest model the lab can load
 * (MAX_MODEL_FILE_BYTES: a sparse 300 MB file is refused by its size, not read) fail at once. The
 * read itself is bounded by the size found, so a file that grows meanwhile cannot grow memory.
 */
import { closeSync, constants, fstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';
import { CheckpointError, isCheckpointFile } from '../models/checkpoint';
import { TokenizerError } from '../models/tokenizer';
import { TRANSFORMER_LIMITS } from '../models/transformer-config';
import { transformerLayout } from '../models/transformer-params';
import { OnnxError } from '../onnx/onnx-error';
import { OpInputError } from '../util/input-error';
import { shownText } from '../util/shown-text';
import { FlagError } from './args';
import { errorText } from '../util/error-text';

export type ModelFileKind = 'checkpoint' | 'json' | 'empty' | 'other';

/**
 * Floats of the largest transformer TRANSFORMER_LIMITS allows (every limit at its maximum,
 * untied embeddings, learned positions and a value head): about 5.2 million.
 */
const LARGEST_MODEL_FLOATS = transformerLayout({
  vocab: TRANSFORMER_LIMITS.vocab[1],
  context: TRANSFORMER_LIMITS.context[1],
  width: TRANSFORMER_LIMITS.width[1],
  layers: TRANSFORMER_LIMITS.layers[1],
  heads: TRANSFORMER_LIMITS.heads[1],
  tiedEmbeddings: false,
  valueHead: true,
}).parameterCount;

/**
 * Bytes of the largest model file any CLI reads: the largest transformer's weights and its AdamW
 * moments (three float32 tensors each, as a checkpoint holds them; an ONNX export holds the
 * weights once), plus 4 MiB for the header, tokenizer and metadata. About 67 MB; the MLP
 * actor-critic checkpoints are far smaller.
 */
export const MAX_MODEL_FILE_BYTES = LARGEST_MODEL_FLOATS * 4 * 3 + 4 * 1024 * 1024;

export function modelFileKind(bytes: Uint8Array): ModelFileKind {
  if (bytes.length === 0) return 'empty';
  if (isCheckpointFile(bytes)) return 'checkpoint';
  const first = String.fromCharCode(...bytes.subarray(0, 64)).trimStart()[0];
  return first === '{' || first === '[' ? 'json' : 'other';
}

/** What a non-regular file is, for messages. */
function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return 'a folder';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isFIFO()) return 'a FIFO (named pipe)';
  if (stats.isSocket()) return 'a socket';
  return 'not a regular file';
}

/**
 * The bytes of the regular file `path`, at most `maxBytes` of them (`why` says where the bound
 * comes from), or a FlagError naming `--<flag>` and the bound. stat first (a FIFO would block an open for reading until a writer
 * came), then open without blocking and check the opened file again with fstat (it may have been
 * swapped meanwhile), then read exactly the size found.
 */
export function readBoundedFile(
  path: string,
  flag: string,
  maxBytes: number,
  why = 'the largest model the lab loads',
): Uint8Array {
  const shown = `--${flag}=${shownText(path, 200)}`;
  const refuse = (stats: Stats): void => {
    if (!stats.isFile()) {
      throw new FlagError(flag, `${shown} is ${kindOf(stats)}, not a regular file`);
    }
    if (stats.size > maxBytes) {
      throw new FlagError(
        flag,
        `${shown} is ${stats.size.toLocaleString('en')} bytes; --${flag} reads at most ` +
          `${maxBytes.toLocaleString('en')} bytes (${why})`,
      );
    }
  };
  let fd: number;
  try {
    refuse(statSync(path));
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    if (error instanceof FlagError) throw error;
    throw new FlagError(flag, `${shown}: cannot read the file (${reason(error)})`);
  }
  try {
    const stats = fstatSync(fd);
    refuse(stats);
    const bytes = new Uint8Array(stats.size);
    let done = 0;
    while (done < bytes.length) {
      const got = readSync(fd, bytes, done, bytes.length - done, done);
      if (got === 0) break; // shrank meanwhile: the decoder reports the cut file
      done += got;
    }
    return done === bytes.length ? bytes : bytes.subarray(0, done);
  } catch (error) {
    if (error instanceof FlagError) throw error;
    throw new FlagError(flag, `${shown}: cannot read the file (${reason(error)})`);
  } finally {
    closeSync(fd);
  }
}

/**
 * The bytes of `path`, refused with a message naming `--<flag>` when not a regular file, larger
 * than MAX_MODEL_FILE_BYTES, unreadable, empty or JSON. `takes` says what the flag accepts, e.g.
 * "a checkpoint (.ckpt) or an ONNX export (.onnx)".
 */
export function readModelFile(path: string, flag: string, takes: string): Uint8Array {
  const shown = `--${flag}=${shownText(path, 200)}`;
  const bytes = readBoundedFile(path, flag, MAX_MODEL_FILE_BYTES);
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

/**
 * A decoder's refusal of the file given to `--<flag>` (a truncated checkpoint, a damaged ONNX
 * export, a config outside the limits) as the one-line FlagError the CLIs print without a stack;
 * anything else (a bug) is returned as it is.
 */
export function modelFileError(error: unknown, flag: string, path: string): unknown {
  const fromFile =
    error instanceof CheckpointError ||
    error instanceof OnnxError ||
    error instanceof TokenizerError ||
    error instanceof OpInputError;
  if (!fromFile) return error;
  const message = error.message.replace(/\s*\n\s*/g, ' ');
  return new FlagError(flag, `--${flag}=${shownText(path, 200)}: ${shownText(message, 1000)}`);
}

function reason(error: unknown): string {
  if (error && typeof error === 'object' && 'code' in error) return String(error.code);
  return errorText(error);
}
