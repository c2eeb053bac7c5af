/**
 * The CLI's ModelCache (src/models/hf/model-cache.ts) on disk, so that a model named by its Hub id
 * downloads once: each cached URL is a file at `root/<host>/<the URL's path>`, so a model's files
 * lie together in `root/<host>/<id>/resolve/<revision>/` — an ordinary Hugging Face folder that
 * `--model` can also be given directly. An entry is written to a temporary name and renamed into
 * place only when whole: a download cut or killed half way never leaves a file that looks cached.
 */
import { createWriteStream, existsSync, openAsBlob } from 'node:fs';
import { mkdir, readdir, rename, rm } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import type { ModelCache } from '../models/hf/model-cache';

/** What a temporary entry's name ends with (never a cached file's). */
const PARTIAL = '.partial';

export class DiskModelCache implements ModelCache {
  constructor(readonly root: string) {}

  /** Where `key` (an http(s) URL) is kept; refuses a URL whose path would leave the root. */
  pathOf(key: string): string {
    const url = new URL(key);
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new Error(`the model cache keeps http(s) URLs only, got ${url.protocol}`);
    }
    const segments = url.pathname.split('/').slice(1).map(decodeURIComponent);
    for (const segment of segments) {
      if (segment === '' || segment === '.' || segment === '..' || /[\\/\0]/.test(segment)) {
        throw new Error(`the model cache cannot keep the URL path ${JSON.stringify(url.pathname)}`);
      }
      if (segment.endsWith(PARTIAL)) throw new Error(`a cached file cannot end with ${PARTIAL}`);
    }
    return join(this.root, hostFolder(url), ...segments);
  }

  async get(key: string): Promise<Blob | undefined> {
    const path = this.pathOf(key);
    return existsSync(path) ? await openAsBlob(path) : undefined;
  }

  async put(key: string, blob: Blob): Promise<void> {
    const path = this.pathOf(key);
    await mkdir(dirname(path), { recursive: true });
    const partial = `${path}.${process.pid}${PARTIAL}`;
    try {
      const body = Readable.fromWeb(blob.stream() as unknown as NodeReadableStream<Uint8Array>);
      await pipeline(body, createWriteStream(partial));
      await rename(partial, path);
    } catch (error) {
      await rm(partial, { force: true });
      throw error;
    }
  }

  async delete(key: string): Promise<boolean> {
    const path = this.pathOf(key);
    if (!existsSync(path)) return false;
    await rm(path);
    return true;
  }

  /** The URLs of the whole entries. */
  async keys(): Promise<string[]> {
    if (!existsSync(this.root)) return [];
    const entries = await readdir(this.root, { recursive: true, withFileTypes: true });
    return entries
      .filter((entry) => entry.isFile() && !entry.name.endsWith(PARTIAL))
      .map((entry) => {
        const [host, ...segments] = relative(this.root, join(entry.parentPath, entry.name)).split(
          sep,
        );
        return `${hostUrl(host!)}/${segments.map(encodeURIComponent).join('/')}`;
      });
  }
}

/**
 * The folder of a URL's origin: its host for https (`huggingface.co`), `http_` and the host for
 * plain http (a local server); the port joins with '_', as ':' is not a file-name character
 * everywhere (host names hold no '_').
 */
function hostFolder(url: URL): string {
  const host = url.host.replace(':', '_');
  return url.protocol === 'https:' ? host : `http_${host}`;
}

/** hostFolder's inverse: the origin, as a URL's start. */
function hostUrl(folder: string): string {
  const http = folder.startsWith('http_');
  const host = (http ? folder.slice('http_'.length) : folder).replace(/_(\d+)$/, ':$1');
  return `${http ? 'http' : 'https'}://${host}`;
}
