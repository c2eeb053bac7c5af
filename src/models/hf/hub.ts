/**
 * A model's files from the Hugging Face Hub by its id, in the user's browser with plain fetch:
 * the listing (`/api/models/{id}/tree/{revision}`: each file's size, and the sha256 of LFS files),
 * then config.json, generation_config.json, the tokenizer files and the safetensors weights
 * (model.safetensors, or the index and the shards it names), each through downloadFile (resumed
 * after a cut, cached once verified). The listing is cached last, after every file, so a model
 * downloaded before is served from the cache with no request at all.
 */
import { OpInputError } from '../../ops/errors';
import { downloadFile, DownloadError, type DownloadProgress } from './hub-download';
import { INDEX_FILE, SINGLE_FILE } from './hf-checkpoint';
import type { ModelCache } from './model-cache';

export const HUB_URL = 'https://huggingface.co';

export interface HubOptions {
  /** The Hub's address (tests: a local server). */
  baseUrl?: string;
  /** A branch, tag or commit (default 'main'). */
  revision?: string;
  cache?: ModelCache;
  onProgress?: (progress: DownloadProgress) => void;
  maxAttempts?: number;
  retryDelayMs?: number;
  signal?: AbortSignal;
  fetch?: typeof fetch;
}

export interface HubFile {
  path: string;
  size: number;
  /** Hex sha256 of an LFS file's content. */
  sha256?: string;
}

/** Files a model needs besides its weights; config.json is required, the rest when listed. */
const CONFIG_FILES = [
  'config.json',
  'generation_config.json',
  'tokenizer.json',
  'tokenizer_config.json',
  'special_tokens_map.json',
  'chat_template.jinja',
];

/** "org/name" or "name": letters, digits, '-', '_', '.', no '..' (it becomes part of a URL path). */
export function checkModelId(id: string): void {
  if (!/^[\w.-]{1,96}(\/[\w.-]{1,96})?$/.test(id) || id.includes('..')) {
    throw new OpInputError(
      'hub',
      'model id',
      `must look like "org/name" (letters, digits, - _ .), got ${JSON.stringify(id.slice(0, 100))}`,
    );
  }
}

function checkRevision(revision: string): void {
  if (!/^[\w.-]{1,100}$/.test(revision) || revision.includes('..')) {
    throw new OpInputError(
      'hub',
      'revision',
      `must be a branch, tag or commit name, got ${JSON.stringify(revision.slice(0, 100))}`,
    );
  }
}

const base = (options: HubOptions) => (options.baseUrl ?? HUB_URL).replace(/\/+$/, '');

/** The download URL of one file of a model. */
export function resolveUrl(id: string, file: string, options: HubOptions = {}): string {
  checkModelId(id);
  const revision = options.revision ?? 'main';
  checkRevision(revision);
  const path = file.split('/').map(encodeURIComponent).join('/');
  return `${base(options)}/${id}/resolve/${encodeURIComponent(revision)}/${path}`;
}

function listingUrl(id: string, options: HubOptions): string {
  checkModelId(id);
  const revision = options.revision ?? 'main';
  checkRevision(revision);
  return `${base(options)}/api/models/${id}/tree/${encodeURIComponent(revision)}`;
}

/** The model's top-level files with their sizes (and sha256 for LFS files). */
export async function listModelFiles(id: string, options: HubOptions = {}): Promise<HubFile[]> {
  const url = listingUrl(id, options);
  const cached = await options.cache?.get(url);
  let text: string;
  if (cached) text = await cached.text();
  else {
    let response: Response;
    try {
      response = await (options.fetch ?? fetch)(url, { signal: options.signal });
    } catch (error) {
      throw new DownloadError(`${id}: cannot reach ${base(options)} (${(error as Error).message})`);
    }
    if (!response.ok) {
      void response.body?.cancel();
      const what =
        response.status === 404
          ? 'no such model (or revision)'
          : response.status === 401 || response.status === 403
            ? 'not allowed (gated or private)'
            : 'the listing failed';
      throw new DownloadError(`${id}: ${what} (HTTP ${response.status})`, response.status);
    }
    text = await response.text();
  }
  return parseListing(id, text);
}

function parseListing(id: string, text: string): HubFile[] {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new DownloadError(`${id}: the file listing is not JSON`);
  }
  if (!Array.isArray(json)) throw new DownloadError(`${id}: the file listing is not a list`);
  const files: HubFile[] = [];
  for (const entry of json as Record<string, unknown>[]) {
    if (entry?.type !== 'file' || typeof entry.path !== 'string' || typeof entry.size !== 'number')
      continue;
    const lfs = entry.lfs as { oid?: unknown; size?: unknown } | undefined;
    const sha256 =
      typeof lfs?.oid === 'string' && /^[0-9a-f]{64}$/i.test(lfs.oid) ? lfs.oid : undefined;
    const size = typeof lfs?.size === 'number' ? lfs.size : entry.size;
    files.push(sha256 ? { path: entry.path, size, sha256 } : { path: entry.path, size });
  }
  return files;
}

/**
 * Downloads (or takes from the cache) every file the lab needs of model `id`; the files by name.
 * Refuses a model without config.json or safetensors weights, naming what the listing holds.
 */
export async function downloadModel(
  id: string,
  options: HubOptions = {},
): Promise<Map<string, Blob>> {
  const listing = await listModelFiles(id, options);
  const byPath = new Map(listing.map((f) => [f.path, f]));
  const out = new Map<string, Blob>();
  const get = async (path: string) => {
    const info = byPath.get(path);
    const blob = await downloadFile(resolveUrl(id, path, options), {
      file: path,
      cache: options.cache,
      expectedSize: info?.size,
      sha256: info?.sha256,
      onProgress: options.onProgress,
      maxAttempts: options.maxAttempts,
      retryDelayMs: options.retryDelayMs,
      signal: options.signal,
      fetch: options.fetch,
    });
    out.set(path, blob);
    return blob;
  };
  if (!byPath.has('config.json')) throw new DownloadError(`${id}: the model has no config.json`);
  for (const path of CONFIG_FILES) if (byPath.has(path)) await get(path);
  if (byPath.has(INDEX_FILE)) {
    const index = JSON.parse(await (await get(INDEX_FILE)).text()) as {
      weight_map?: Record<string, unknown>;
    };
    const shards = [...new Set(Object.values(index.weight_map ?? {}))];
    for (const shard of shards) {
      if (typeof shard !== 'string' || !byPath.has(shard)) {
        throw new DownloadError(
          `${id}: ${INDEX_FILE} names ${JSON.stringify(shard)}, which the model does not list`,
        );
      }
      await get(shard);
    }
  } else if (byPath.has(SINGLE_FILE)) {
    await get(SINGLE_FILE);
  } else {
    const names = listing
      .map((f) => f.path)
      .slice(0, 12)
      .join(', ');
    throw new DownloadError(`${id}: no ${SINGLE_FILE} or ${INDEX_FILE} (the model lists ${names})`);
  }
  // The listing last: a later call finds it only if every file above is cached.
  await options.cache?.put(
    listingUrl(id, options),
    new Blob([
      JSON.stringify(
        listing.map((f) => ({
          type: 'file',
          path: f.path,
          size: f.size,
          ...(f.sha256 ? { lfs: { oid: f.sha256, size: f.size } } : {}),
        })),
      ),
    ]),
  );
  return out;
}
