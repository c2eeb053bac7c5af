/**
 * `--model=HUB_ID` for `npm run lm` and `npm run train`, against a local server that answers as
 * the Hugging Face Hub does (the file listing, then each file under /resolve/): the model
 * downloads once into the cache folder and scores exactly as its folder does; a second run makes
 * no request; HF_TOKEN goes with each request; a download that fails names the file and leaves
 * nothing that looks cached, and the next run completes it; bad ids and revisions are refused
 * naming the flag.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { DiskModelCache } from '../../src/cli/disk-model-cache';
import { main as lm } from '../../src/cli/lm';
import { main as train } from '../../src/cli/train';

const FOLDER = 'public/models/hf/tiny-chat';
const FILES = readdirSync(FOLDER);
const bytesOf = (file: string) => readFileSync(join(FOLDER, file));
const sha = (bytes: Uint8Array) => createHash('sha256').update(bytes).digest('hex');

let server: Server;
let endpoint: string;
let requests: { url: string; authorization: string | undefined }[];
/** Paths answered with 500 (a Hub having a bad day). */
let failing: Set<string>;

/** The Hub's answers for the model org/tiny-chat at main: its listing and its files. */
function serve(req: IncomingMessage, res: ServerResponse) {
  const url = req.url ?? '';
  requests.push({ url, authorization: req.headers.authorization });
  if (failing.has(url)) {
    res.writeHead(500).end('down');
    return;
  }
  if (url === '/api/models/org/tiny-chat/tree/main') {
    const listing = FILES.map((path) => {
      const bytes = bytesOf(path);
      const lfs = path.endsWith('.safetensors')
        ? { lfs: { oid: sha(bytes), size: bytes.length, pointerSize: 134 } }
        : {};
      return { type: 'file', path, size: bytes.length, oid: 'git-oid', ...lfs };
    });
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(listing));
    return;
  }
  const file = /^\/org\/tiny-chat\/resolve\/main\/([\w.-]+)$/.exec(url)?.[1];
  if (file && FILES.includes(file)) {
    res.writeHead(200, { 'content-length': String(bytesOf(file).length) }).end(bytesOf(file));
    return;
  }
  res.writeHead(404).end('not found');
}

beforeAll(async () => {
  server = createServer(serve);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

let cacheRoot: string;
beforeEach(() => {
  requests = [];
  failing = new Set();
  cacheRoot = mkdtempSync(join(tmpdir(), 'hub-cache-'));
  vi.stubEnv('HF_ENDPOINT', endpoint);
  vi.stubEnv('AGENT_RL_LAB_CACHE', cacheRoot);
  vi.stubEnv('HF_TOKEN', '');
});
afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

/** Runs lm's main; returns what it printed (stdout) and reported (stderr). */
async function runLm(argv: string[]) {
  const log = vi.spyOn(console, 'log').mockImplementation(() => {});
  const error = vi.spyOn(console, 'error').mockImplementation(() => {});
  try {
    expect(await lm(argv)).toBe(0);
    const lines = (spy: typeof log) => spy.mock.calls.map((c) => String(c[0]));
    return { out: lines(log).join('\n'), err: lines(error) };
  } finally {
    log.mockRestore();
    error.mockRestore();
  }
}

const IDS = '--ids=416,10,20,30,40';
/** Where the cache keeps the model's files. */
const modelDir = () =>
  join(
    cacheRoot,
    `http_${endpoint.slice('http://'.length).replace(':', '_')}`,
    'org',
    'tiny-chat',
    'resolve',
    'main',
  );

describe('--model=HUB_ID', () => {
  it('downloads the model once, scores it as its folder does, and then makes no request', async () => {
    const fromFolder = JSON.parse((await runLm(['score', `--model=${FOLDER}`, IDS])).out);
    expect(requests).toEqual([]); // a folder is read where it is

    const first = await runLm(['score', '--model=org/tiny-chat', IDS]);
    const scored = JSON.parse(first.out);
    expect(scored.model).toBe('org/tiny-chat');
    expect(scored.logprobs).toEqual(fromFolder.logprobs);
    // The listing, then every file the folder has (each once), and no authorization unasked.
    expect(requests[0]!.url).toBe('/api/models/org/tiny-chat/tree/main');
    expect(
      requests
        .slice(1)
        .map((r) => r.url)
        .sort(),
    ).toEqual(FILES.map((f) => `/org/tiny-chat/resolve/main/${f}`).sort());
    expect(requests.every((r) => r.authorization === undefined)).toBe(true);
    for (const file of FILES) {
      expect(readFileSync(join(modelDir(), file))).toEqual(bytesOf(file));
    }
    expect(first.err.at(-1)).toBe(`org/tiny-chat: in ${modelDir()}`);

    requests = [];
    const again = await runLm(['score', '--model=org/tiny-chat', IDS]);
    expect(JSON.parse(again.out).logprobs).toEqual(fromFolder.logprobs);
    expect(requests).toEqual([]);
    // The cache folder is an ordinary model folder.
    const direct = await runLm(['score', `--model=${modelDir()}`, IDS]);
    expect(JSON.parse(direct.out).logprobs).toEqual(fromFolder.logprobs);
  }, 60_000);

  it('sends HF_TOKEN as a bearer token', async () => {
    vi.stubEnv('HF_TOKEN', 'hf_secret');
    await runLm(['generate', '--model=org/tiny-chat', '--prompt=hi', '--max-new-tokens=2']);
    expect(requests.length).toBeGreaterThan(1);
    expect(requests.every((r) => r.authorization === 'Bearer hf_secret')).toBe(true);
  }, 60_000);

  it('a failed download names the file, leaves nothing cached of it, and the next run completes it', async () => {
    failing.add('/org/tiny-chat/resolve/main/model.safetensors');
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const argv = ['score', '--model=org/tiny-chat', IDS];
    // One try (its retries take seconds): the refusal names the flag and the file.
    const refusal = await lm(argv).catch((error: unknown) => error as Error & { flag: string });
    expect(refusal).toMatchObject({ name: 'FlagError', flag: 'model' });
    expect((refusal as Error).message).toMatch(/--model=org\/tiny-chat: model\.safetensors: .*500/);
    expect(existsSync(join(modelDir(), 'model.safetensors'))).toBe(false);
    // No listing either: a later run must not take the model for complete.
    const keys = await new DiskModelCache(cacheRoot).keys();
    expect(keys.some((k) => k.includes('/api/models/'))).toBe(false);
    expect(keys.some((k) => k.endsWith('/config.json'))).toBe(true); // whole files stay

    failing.clear();
    requests = [];
    await runLm(argv);
    expect(requests.map((r) => r.url)).toContain('/org/tiny-chat/resolve/main/model.safetensors');
    expect(requests.map((r) => r.url)).not.toContain('/org/tiny-chat/resolve/main/config.json');
  }, 60_000);

  it('refuses what is neither a folder nor a Hub id, and a revision beside a folder', async () => {
    const refusals: [string[], string, RegExp][] = [
      [['--model=no/such/folder'], 'model', /no such folder, and not a Hugging Face model id/],
      [['--model=org/missing'], 'model', /--model=org\/missing: .*no such model .*HTTP 404/],
      [[`--model=${FOLDER}`, '--revision=v1'], 'revision', /is for a Hub model id/],
      [['--model=org/tiny-chat', '--revision=a/b'], 'revision', /branch, tag or commit/],
      [['--revision=main', '--ids=1,2'], 'revision', /needs --model=HUB_ID/],
      [[`--model=${FOLDER}/config.json`], 'model', /is a file; give the model's folder/],
    ];
    for (const [flags, flag, message] of refusals) {
      const argv = ['score', IDS, ...flags];
      await expect(lm(argv)).rejects.toMatchObject({ name: 'FlagError', flag });
      await expect(lm(argv)).rejects.toThrow(message);
    }
  });

  it('npm run train names the Hub id as the adapter’s base model', async () => {
    vi.spyOn(console, 'error').mockImplementation(() => {});
    const log = vi.spyOn(console, 'log').mockImplementation(() => {});
    const out = join(mkdtempSync(join(tmpdir(), 'adapter-')), 'a');
    const argv = ['--model=org/tiny-chat', '--revision=main', '--task=addition', '--max-digits=2'];
    const small = ['--reverse-answer', '--lora-r=2', '--updates=1', '--prompts-per-update=2'];
    expect(await train([...argv, ...small, '--group-size=2', `--adapter-out=${out}`])).toBe(0);
    expect(log.mock.calls.map((c) => String(c[0])).join('\n')).toContain('of org/tiny-chat');
    const config = JSON.parse(readFileSync(join(out, 'adapter_config.json'), 'utf8'));
    expect(config).toMatchObject({ base_model_name_or_path: 'org/tiny-chat', revision: null });
  }, 60_000);
});

describe('DiskModelCache', () => {
  it('keeps a URL as a file under its path, lists it back, and refuses paths that leave it', async () => {
    const cache = new DiskModelCache(mkdtempSync(join(tmpdir(), 'disk-cache-')));
    const url = 'https://huggingface.co/org/m/resolve/main/config.json';
    await cache.put(url, new Blob(['{}']));
    expect(await (await cache.get(url))!.text()).toBe('{}');
    expect(await cache.keys()).toEqual([url]);
    expect(await cache.get('https://huggingface.co/org/m/resolve/main/other.json')).toBeUndefined();
    expect(await cache.delete(url)).toBe(true);
    expect(await cache.keys()).toEqual([]);
    for (const bad of [
      'https://h.co/a%2F..%2F..%2Fb/c',
      'https://h.co/a%5Cb',
      'https://h.co/a//b',
      'file:///etc/passwd',
    ]) {
      expect(() => cache.pathOf(bad)).toThrow(/model cache/);
    }
  });

  it('a write cut half way leaves neither the file nor its partial', async () => {
    const root = mkdtempSync(join(tmpdir(), 'disk-cache-'));
    const cache = new DiskModelCache(root);
    let sent = false;
    const cut = {
      stream: () =>
        new ReadableStream<Uint8Array>({
          pull(controller) {
            if (!sent) controller.enqueue(new Uint8Array(1000));
            else controller.error(new Error('cut'));
            sent = true;
          },
        }),
    } as unknown as Blob;
    await expect(cache.put('http://127.0.0.1:9/org/m/resolve/main/w.bin', cut)).rejects.toThrow(
      'cut',
    );
    expect(await cache.keys()).toEqual([]);
    expect(
      readdirSync(root, { recursive: true }).filter((p) => String(p).endsWith('.bin')),
    ).toEqual([]);
  });
});
