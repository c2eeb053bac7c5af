/**
 * One file downloaded with plain fetch, resumed after a cut connection, verified before it is
 * cached. A cut (the body stream fails, or ends short of the length the server announced) is
 * followed by a request for the rest (`Range: bytes=<received>-`): a 206 whose Content-Range
 * starts where the bytes stopped is appended; a 200 means the server ignored the range, and the
 * file starts over. The file is cached only once complete, its size checked (and its sha256 where
 * the Hub gave one), so a failed download leaves no entry.
 */
import type { ModelCache } from './model-cache';

export interface DownloadProgress {
  file: string;
  /** Bytes received so far; never goes down (a restart is reported once it passes the mark). */
  loaded: number;
  /** The file's size, once known. */
  total: number | undefined;
}

export interface DownloadOptions {
  /** The file's name, for progress and messages. */
  file: string;
  cache?: ModelCache;
  /** The size the listing gave; a response of another length is refused. */
  expectedSize?: number;
  /** The hex sha256 the listing gave (LFS files). */
  sha256?: string;
  onProgress?: (progress: DownloadProgress) => void;
  /** Requests in all, the first included (default 6). */
  maxAttempts?: number;
  /** Wait before retry n: retryDelayMs · n (default 500). */
  retryDelayMs?: number;
  signal?: AbortSignal;
  fetch?: typeof fetch;
}

/** A download that failed for good: names the file and the reason. */
export class DownloadError extends Error {
  override readonly name = 'DownloadError';
  constructor(
    message: string,
    /** The HTTP status where one decided it. */
    readonly status?: number,
  ) {
    super(message);
  }
}

/** A reason to try again (a cut connection, a 5xx); anything else ends the download. */
class Retryable extends Error {}

/** `bytes start-end/total` → [start, total] (total undefined for '*'). */
function parseContentRange(value: string | null): [number, number | undefined] | undefined {
  const match = /^bytes (\d+)-(\d+)\/(\d+|\*)$/.exec(value?.trim() ?? '');
  if (!match) return undefined;
  return [Number(match[1]), match[3] === '*' ? undefined : Number(match[3])];
}

/** Downloads `url` (or returns the cached copy without a request). */
export async function downloadFile(url: string, options: DownloadOptions): Promise<Blob> {
  const { file, cache } = options;
  const cached = await cache?.get(url);
  if (cached && (options.expectedSize === undefined || cached.size === options.expectedSize)) {
    options.onProgress?.({ file, loaded: cached.size, total: cached.size });
    return cached;
  }
  const doFetch = options.fetch ?? fetch;
  const maxAttempts = options.maxAttempts ?? 6;
  const chunks: Uint8Array<ArrayBuffer>[] = [];
  let received = 0;
  let reported = -1;
  let total = options.expectedSize;
  const report = () => {
    if (received > reported) {
      reported = received;
      options.onProgress?.({ file, loaded: received, total });
    }
  };
  let lastProblem = '';
  for (let attempt = 1; ; attempt++) {
    if (attempt > maxAttempts) {
      throw new DownloadError(`${file}: gave up after ${maxAttempts} attempts (${lastProblem})`);
    }
    if (attempt > 1) await delay((options.retryDelayMs ?? 500) * (attempt - 1), options.signal);
    try {
      const headers: Record<string, string> = received > 0 ? { range: `bytes=${received}-` } : {};
      let response: Response;
      try {
        response = await doFetch(url, { headers, signal: options.signal });
      } catch (error) {
        if (options.signal?.aborted) throw error;
        throw new Retryable(`network error: ${(error as Error).message}`);
      }
      const length = readResponseStart(response, file, received, total);
      if (length.restart) {
        chunks.length = 0;
        received = 0;
      }
      total = length.total;
      await readBody(response, (chunk) => {
        chunks.push(chunk);
        received += chunk.length;
        if (total !== undefined && received > total) {
          throw new DownloadError(
            `${file}: the server sent more than the ${total} bytes it announced`,
          );
        }
        report();
      });
      if (total !== undefined && received < total) {
        throw new Retryable(`the connection ended at ${received} of ${total} bytes`);
      }
      break;
    } catch (error) {
      if (!(error instanceof Retryable)) throw error;
      lastProblem = error.message;
    }
  }
  report();
  const blob = new Blob(chunks, { type: 'application/octet-stream' });
  await verify(blob, chunks, options);
  await cache?.put(url, blob);
  return blob;
}

/**
 * Checks the response's status and lengths against what is held: whether the bytes so far are
 * kept (a 206 from where they stop) or dropped (a 200), and the file's total size if stated.
 */
function readResponseStart(
  response: Response,
  file: string,
  received: number,
  known: number | undefined,
): { restart: boolean; total: number | undefined } {
  const status = response.status;
  if (status >= 500 || status === 429 || status === 408) {
    void response.body?.cancel();
    throw new Retryable(`HTTP ${status}`);
  }
  if (status === 206) {
    const header = response.headers.get('content-range');
    // A cross-origin response hides Content-Range unless the server exposes it; Content-Length
    // is always readable, and the rest of a file of known size has exactly one length.
    const length = Number(response.headers.get('content-length') ?? NaN);
    if (header === null && known !== undefined && received > 0 && length === known - received) {
      return { restart: false, total: known };
    }
    const range = parseContentRange(header);
    if (!range || range[0] !== received || received === 0) {
      void response.body?.cancel();
      throw new DownloadError(
        `${file}: the server answered the range from ${received} with Content-Range ${response.headers.get('content-range') ?? '(none)'}`,
        206,
      );
    }
    return { restart: false, total: checkTotal(file, range[1] ?? known, known) };
  }
  if (status !== 200) {
    void response.body?.cancel();
    const what =
      status === 404
        ? 'not found'
        : status === 401 || status === 403
          ? 'not allowed (a gated or private model?)'
          : 'refused';
    throw new DownloadError(`${file}: ${what} (HTTP ${status})`, status);
  }
  const header = response.headers.get('content-length');
  // A compressed body's Content-Length is not the file's; only trust it for identity encoding.
  const encoded = (response.headers.get('content-encoding') ?? 'identity') !== 'identity';
  const stated = header !== null && !encoded ? Number(header) : undefined;
  return { restart: received > 0, total: checkTotal(file, stated ?? known, known) };
}

function checkTotal(file: string, total: number | undefined, known: number | undefined) {
  if (total !== undefined && known !== undefined && total !== known) {
    throw new DownloadError(`${file}: the server says ${total} bytes, the listing ${known}`);
  }
  return total;
}

/** Reads the body chunk by chunk; a stream error becomes Retryable (the connection was cut). */
async function readBody(response: Response, onChunk: (chunk: Uint8Array<ArrayBuffer>) => void) {
  if (!response.body) return;
  const reader = response.body.getReader();
  for (;;) {
    let result: ReadableStreamReadResult<Uint8Array>;
    try {
      result = await reader.read();
    } catch (error) {
      throw new Retryable(`the connection was cut (${(error as Error).message})`);
    }
    if (result.done) return;
    onChunk(new Uint8Array(result.value));
  }
}

async function verify(
  blob: Blob,
  chunks: readonly Uint8Array<ArrayBuffer>[],
  options: DownloadOptions,
) {
  const { file, expectedSize, sha256 } = options;
  if (expectedSize !== undefined && blob.size !== expectedSize) {
    throw new DownloadError(`${file}: received ${blob.size} bytes, expected ${expectedSize}`);
  }
  if (sha256 === undefined) return;
  // One buffer for the digest: WebCrypto has no incremental hash.
  const whole = new Uint8Array(blob.size);
  let at = 0;
  for (const chunk of chunks) {
    whole.set(chunk, at);
    at += chunk.length;
  }
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', whole));
  const hex = [...digest].map((b) => b.toString(16).padStart(2, '0')).join('');
  if (hex !== sha256.toLowerCase()) {
    throw new DownloadError(`${file}: sha256 ${hex} does not match the Hub's ${sha256}`);
  }
}

function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(signal.reason);
    });
  });
}
