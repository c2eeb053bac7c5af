/**
 * Where downloaded model files are kept so a model downloads once: Cache Storage in the browser
 * (it holds large Blobs on disk and survives reloads), a Map in tests. Entries are whole, verified
 * files only: the downloader writes an entry after the file's size (and hash, when known) checked
 * out, so a failed or cut download never leaves one behind.
 */

export interface ModelCache {
  get(key: string): Promise<Blob | undefined>;
  put(key: string, blob: Blob): Promise<void>;
  delete(key: string): Promise<boolean>;
  keys(): Promise<string[]>;
}

/** A cache in memory (tests; a session that may not write to disk). */
export class MemoryModelCache implements ModelCache {
  private readonly entries = new Map<string, Blob>();
  get(key: string) {
    return Promise.resolve(this.entries.get(key));
  }
  put(key: string, blob: Blob) {
    this.entries.set(key, blob);
    return Promise.resolve();
  }
  delete(key: string) {
    return Promise.resolve(this.entries.delete(key));
  }
  keys() {
    return Promise.resolve([...this.entries.keys()]);
  }
}

/** The Cache Storage cache the lab keeps models in. */
export const MODEL_CACHE_NAME = 'agent-rl-lab-models';

/**
 * A ModelCache over the browser's Cache Storage (keys are the files' URLs). Undefined where there
 * is none (an insecure origin, Node): the caller then downloads without caching, and says so.
 */
export async function openCacheStorage(name = MODEL_CACHE_NAME): Promise<ModelCache | undefined> {
  const storage = (globalThis as { caches?: CacheStorage }).caches;
  if (!storage) return undefined;
  const cache = await storage.open(name);
  return {
    async get(key) {
      const response = await cache.match(key);
      return response ? await response.blob() : undefined;
    },
    async put(key, blob) {
      const headers = {
        'content-type': 'application/octet-stream',
        'content-length': String(blob.size),
      };
      await cache.put(key, new Response(blob, { status: 200, headers }));
    },
    delete: (key) => cache.delete(key),
    async keys() {
      return (await cache.keys()).map((request) => request.url);
    },
  };
}
