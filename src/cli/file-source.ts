/**
 * A file on disk as a RandomAccessSource (src/models/hf/random-access-source.ts): fs.open once,
 * then positioned reads, so the CLI loads multi-GB safetensors files a tensor at a time. Lives
 * with the CLI to keep node:fs out of the code the browser bundles.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { CheckpointFiles } from '../models/hf/hf-checkpoint';
import { checkReadRange, type RandomAccessSource } from '../models/hf/random-access-source';

export interface FileSource extends RandomAccessSource {
  close(): Promise<void>;
}

export async function openFileSource(path: string): Promise<FileSource> {
  const handle: FileHandle = await open(path, 'r');
  const { size } = await handle.stat();
  const source: FileSource = {
    name: path,
    size,
    async read(offset, length) {
      checkReadRange(source, offset, length);
      const out = new Uint8Array(length);
      let done = 0;
      while (done < length) {
        const { bytesRead } = await handle.read(out, done, length - done, offset + done);
        if (bytesRead === 0)
          throw new Error(`${path}: file ended at ${offset + done} while reading`);
        done += bytesRead;
      }
      return out;
    },
    close: () => handle.close(),
  };
  return source;
}

/**
 * A checkpoint folder on disk (config.json, model.safetensors or shards): files open on first
 * use and stay open until close(). Names are file names in the folder, never paths.
 */
export function directoryFiles(dir: string): CheckpointFiles & { close(): Promise<void> } {
  const opened = new Map<string, FileSource>();
  return {
    async open(name) {
      if (name.includes('/') || name.includes('\\') || name.startsWith('.')) return undefined;
      const known = opened.get(name);
      if (known) return known;
      try {
        const source = await openFileSource(join(dir, name));
        opened.set(name, source);
        return source;
      } catch (error) {
        if ((error as { code?: string }).code === 'ENOENT') return undefined;
        throw error;
      }
    },
    async close() {
      for (const source of opened.values()) await source.close();
      opened.clear();
    },
  };
}
