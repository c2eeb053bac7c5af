import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { downloadFile, type DownloadProgress } from '../../../src/models/hf/hub-download';
import { downloadModel, listModelFiles, resolveUrl } from '../../../src/models/hf/hub';
import { MemoryModelCache } from '../../../src/models/hf/model-cache';

/** Fixture files: a weights file large enough to arrive in several chunks. */
const WEIGHTS = Uint8Array.from({ length: 300_000 }, (_, i) => (i * 7919 + (i >> 8)) & 255);
const CONFIG = new TextEncoder().encode('{"model_type":"llama"}');
/** A sharded model: the index names two shards (and the listing holds a file the lab skips). */
const SHARDED: Record<string, Uint8Array> = {
  'config.json': CONFIG,
  'model.safetensors.index.json': new TextEncoder().encode(
    JSON.stringify({
      metadata: { total_size: 12 },
      weight_map: {
        a: 'model-00001-of-00002.safetensors',
        b: 'model-00002-of-00002.safetensors',
        c: 'model-00001-of-00002.safetensors',
      },
    }),
  ),
  'model-00001-of-00002.safetensors': Uint8Array.from([1, 2, 3, 4, 5]),
  'model-00002-of-00002.safetensors': Uint8Array.from([6, 7, 8]),
  'README.md': new TextEncoder().encode('# sharded'),
};
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

interface Behaviour {
  /** Cut the connection after this many body bytes, for the first `cuts` responses. */
  cutAfter?: number;
  cuts?: number;
  /** Answer Range requests (206) or ignore them (200 with the whole file). */
  honourRange: boolean;
  /** Leave Content-Range out of 206 answers (as a cross-origin response hides it). */
  hideContentRange?: boolean;
  /** Status to answer for a path, instead of the file. */
  status?: Record<string, number>;
  /** The listing's sha256 for the weights (default: the right one). */
  weightsSha?: string;
}

let server: Server;
let baseUrl: string;
let behaviour: Behaviour;
let requests: { url: string; range: string | undefined }[];

function serve(req: IncomingMessage, res: ServerResponse) {
  const url = req.url ?? '';
  requests.push({ url, range: req.headers.range });
  const status = behaviour.status?.[url];
  if (status) {
    res.writeHead(status, { 'content-type': 'text/plain' }).end('no');
    return;
  }
  if (url === '/api/models/org/tiny/tree/main') {
    const listing = [
      { type: 'file', path: 'config.json', size: CONFIG.length, oid: 'abc' },
      { type: 'directory', path: 'onnx', size: 0 },
      {
        type: 'file',
        path: 'model.safetensors',
        size: WEIGHTS.length,
        lfs: { oid: behaviour.weightsSha ?? sha(WEIGHTS), size: WEIGHTS.length, pointerSize: 134 },
      },
    ];
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(listing));
    return;
  }
  if (url === '/api/models/org/sharded/tree/main') {
    const listing = Object.entries(SHARDED).map(([path, bytes]) => ({
      type: 'file',
      path,
      size: bytes.length,
    }));
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(listing));
    return;
  }
  const files: Record<string, Uint8Array> = {
    '/org/tiny/resolve/main/config.json': CONFIG,
    '/org/tiny/resolve/main/model.safetensors': WEIGHTS,
    ...Object.fromEntries(
      Object.entries(SHARDED).map(([path, bytes]) => [`/org/sharded/resolve/main/${path}`, bytes]),
    ),
  };
  const body = files[url];
  if (!body) {
    res.writeHead(404).end('not found');
    return;
  }
  let start = 0;
  const range = /^bytes=(\d+)-$/.exec(req.headers.range ?? '');
  if (range && behaviour.honourRange) start = Number(range[1]);
  const part = body.subarray(start);
  const headers: Record<string, string> = {
    'content-length': String(part.length),
    'content-type': 'application/octet-stream',
  };
  if (start > 0 && !behaviour.hideContentRange)
    headers['content-range'] = `bytes ${start}-${body.length - 1}/${body.length}`;
  res.writeHead(start > 0 ? 206 : 200, headers);
  if (behaviour.cutAfter !== undefined && (behaviour.cuts ?? 0) > 0) {
    behaviour.cuts!--;
    // Send some bytes, let them leave, then destroy the socket mid-body.
    res.write(part.subarray(0, behaviour.cutAfter), () => setTimeout(() => res.destroy(), 20));
    return;
  }
  res.end(part);
}

beforeAll(async () => {
  server = createServer(serve);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  behaviour = { honourRange: true };
  requests = [];
});

const weightsUrl = () => resolveUrl('org/tiny', 'model.safetensors', { baseUrl });
const bytesOf = async (blob: Blob) => new Uint8Array(await blob.arrayBuffer());
/** Byte-for-byte equality (toEqual walks 300,000 elements slowly). */
const sameBytes = (a: Uint8Array, b: Uint8Array) =>
  a.length === b.length && Buffer.compare(a, b) === 0;

describe('downloading from the Hub (a local server)', () => {
  it('reports progress monotonically up to the total', async () => {
    const progress: DownloadProgress[] = [];
    const blob = await downloadFile(weightsUrl(), {
      file: 'model.safetensors',
      onProgress: (p) => progress.push(p),
    });
    expect(sameBytes(await bytesOf(blob), WEIGHTS)).toBe(true);
    expect(progress.length).toBeGreaterThan(1);
    for (let i = 1; i < progress.length; i++)
      expect(progress[i]!.loaded).toBeGreaterThan(progress[i - 1]!.loaded);
    expect(progress.at(-1)).toEqual({
      file: 'model.safetensors',
      loaded: WEIGHTS.length,
      total: WEIGHTS.length,
    });
    expect(progress.every((p) => p.total === WEIGHTS.length)).toBe(true);
  });

  it('resumes a cut connection with a Range request and gets the right bytes', async () => {
    behaviour = { honourRange: true, cutAfter: 100_000, cuts: 2 };
    const progress: number[] = [];
    const cache = new MemoryModelCache();
    const blob = await downloadFile(weightsUrl(), {
      file: 'w',
      cache,
      retryDelayMs: 0,
      sha256: sha(WEIGHTS),
      onProgress: (p) => progress.push(p.loaded),
    });
    expect(sameBytes(await bytesOf(blob), WEIGHTS)).toBe(true);
    const ranges = requests.map((r) => r.range);
    expect(ranges[0]).toBeUndefined();
    expect(ranges.length).toBe(3);
    // Each resume asks from where the bytes stopped (at least the 100,000 sent before the cut).
    const starts = ranges.slice(1).map((r) => Number(/^bytes=(\d+)-$/.exec(r!)![1]));
    expect(starts[0]).toBeGreaterThanOrEqual(100_000);
    expect(starts[1]).toBeGreaterThanOrEqual(starts[0]! + 100_000);
    expect(progress.at(-1)).toBe(WEIGHTS.length);
    expect(await cache.keys()).toEqual([weightsUrl()]);
  });

  it('resumes without a readable Content-Range when the size is known and the length fits', async () => {
    behaviour = { honourRange: true, hideContentRange: true, cutAfter: 100_000, cuts: 1 };
    const blob = await downloadFile(weightsUrl(), {
      file: 'w',
      retryDelayMs: 0,
      expectedSize: WEIGHTS.length,
    });
    expect(sameBytes(await bytesOf(blob), WEIGHTS)).toBe(true);
    expect(requests.length).toBe(2);
    // The size the first response announced is enough.
    behaviour = { honourRange: true, hideContentRange: true, cutAfter: 100_000, cuts: 1 };
    const again = await downloadFile(weightsUrl(), { file: 'w', retryDelayMs: 0 });
    expect(sameBytes(await bytesOf(again), WEIGHTS)).toBe(true);
  });

  it('starts over when the server ignores Range, still with monotonic progress', async () => {
    behaviour = { honourRange: false, cutAfter: 150_000, cuts: 1 };
    const progress: number[] = [];
    const blob = await downloadFile(weightsUrl(), {
      file: 'w',
      retryDelayMs: 0,
      onProgress: (p) => progress.push(p.loaded),
    });
    expect(sameBytes(await bytesOf(blob), WEIGHTS)).toBe(true);
    expect(requests.length).toBe(2);
    expect(requests[1]!.range).toMatch(/^bytes=\d+-$/);
    for (let i = 1; i < progress.length; i++)
      expect(progress[i]!).toBeGreaterThan(progress[i - 1]!);
  });

  it('leaves no cache entry when a download fails: 404, 500 to the end, cuts past the attempts, a wrong hash', async () => {
    const cache = new MemoryModelCache();
    const url = resolveUrl('org/tiny', 'missing.bin', { baseUrl });
    await expect(downloadFile(url, { file: 'missing.bin', cache })).rejects.toThrow(
      'missing.bin: not found (HTTP 404)',
    );
    behaviour.status = { '/org/tiny/resolve/main/model.safetensors': 500 };
    await expect(
      downloadFile(weightsUrl(), { file: 'w', cache, retryDelayMs: 0, maxAttempts: 3 }),
    ).rejects.toThrow('w: gave up after 3 attempts (HTTP 500)');
    behaviour = { honourRange: true, cutAfter: 1_000, cuts: 10 };
    await expect(
      downloadFile(weightsUrl(), { file: 'w', cache, retryDelayMs: 0, maxAttempts: 3 }),
    ).rejects.toThrow(/gave up after 3 attempts \(the connection/);
    behaviour = { honourRange: true };
    await expect(
      downloadFile(weightsUrl(), { file: 'w', cache, sha256: '0'.repeat(64) }),
    ).rejects.toThrow(/sha256 [0-9a-f]{64} does not match/);
    await expect(downloadFile(weightsUrl(), { file: 'w', cache, expectedSize: 5 })).rejects.toThrow(
      'the server says 300000 bytes, the listing 5',
    );
    expect(await cache.keys()).toEqual([]);
  });

  it('downloads a model by id, then serves it again from the cache with zero requests', async () => {
    const cache = new MemoryModelCache();
    const files = await downloadModel('org/tiny', { baseUrl, cache });
    expect([...files.keys()]).toEqual(['config.json', 'model.safetensors']);
    expect(sameBytes(await bytesOf(files.get('model.safetensors')!), WEIGHTS)).toBe(true);
    expect(requests.map((r) => r.url)).toEqual([
      '/api/models/org/tiny/tree/main',
      '/org/tiny/resolve/main/config.json',
      '/org/tiny/resolve/main/model.safetensors',
    ]);
    requests = [];
    const progress: DownloadProgress[] = [];
    const again = await downloadModel('org/tiny', {
      baseUrl,
      cache,
      onProgress: (p) => progress.push(p),
    });
    expect(requests).toEqual([]);
    expect(await bytesOf(again.get('config.json')!)).toEqual(CONFIG);
    expect(progress.map((p) => [p.file, p.loaded])).toEqual([
      ['config.json', CONFIG.length],
      ['model.safetensors', WEIGHTS.length],
    ]);
  });

  it('a model whose weights fail leaves only its verified files and no listing in the cache', async () => {
    const cache = new MemoryModelCache();
    behaviour.weightsSha = 'f'.repeat(64);
    await expect(downloadModel('org/tiny', { baseUrl, cache })).rejects.toThrow('does not match');
    expect(await cache.keys()).toEqual([resolveUrl('org/tiny', 'config.json', { baseUrl })]);
  });

  it('downloads the index and the shards it names, nothing else', async () => {
    const files = await downloadModel('org/sharded', { baseUrl, cache: new MemoryModelCache() });
    expect([...files.keys()]).toEqual([
      'config.json',
      'model.safetensors.index.json',
      'model-00001-of-00002.safetensors',
      'model-00002-of-00002.safetensors',
    ]);
    expect([...(await bytesOf(files.get('model-00002-of-00002.safetensors')!))]).toEqual([6, 7, 8]);
    expect(requests.some((r) => r.url.endsWith('README.md'))).toBe(false);
  });

  it('names a missing model and refuses ids that are not org/name', async () => {
    await expect(listModelFiles('org/none', { baseUrl })).rejects.toThrow(
      'org/none: no such model (or revision) (HTTP 404)',
    );
    expect(() => resolveUrl('../etc', 'x')).toThrow('model id must look like "org/name"');
    expect(() => resolveUrl('a/b/c', 'x')).toThrow('model id must look like');
    expect(resolveUrl('HuggingFaceTB/SmolLM2-135M-Instruct', 'model.safetensors')).toBe(
      'https://huggingface.co/HuggingFaceTB/SmolLM2-135M-Instruct/resolve/main/model.safetensors',
    );
  });
});
