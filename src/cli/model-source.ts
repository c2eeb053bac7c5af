/**
 * `--model` of `npm run lm` and `npm run train`: a Hugging Face model folder on disk, or a model
 * id on the Hugging Face Hub ("org/name", at `--revision`, default main) downloaded once with
 * src/models/hf/hub.ts (resumed after a cut, each file's size and sha256 checked) into the cache
 * folder, then read from there like any folder. A later run of the same id and revision finds
 * every file in the cache and makes no request.
 *
 * The environment, as Hugging Face's own tools read it:
 *   HF_ENDPOINT          the Hub's address (default https://huggingface.co; tests: a local server)
 *   HF_TOKEN             sent as a bearer token, for gated or private models
 *   AGENT_RL_LAB_CACHE   the cache folder (default $XDG_CACHE_HOME/agent-rl-lab, else
 *                        ~/.cache/agent-rl-lab); a model's files lie in
 *                        <cache>/<host>/<org>/<name>/resolve/<revision>/
 * Download progress goes to stderr, so that stdout stays the command's JSON or text.
 */
import { existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { downloadModel, HUB_URL, resolveUrl } from '../models/hf/hub';
import type { DownloadProgress } from '../models/hf/hub-download';
import { errorText } from '../util/error-text';
import { CliArgs, FlagError } from './args';
import { DiskModelCache } from './disk-model-cache';

export type ModelSource =
  { kind: 'folder'; dir: string } | { kind: 'hub'; id: string; revision: string };

/** "org/name": the shape of a Hub id (checked in full by hub.ts when it is used). */
const HUB_ID = /^[\w.-]+\/[\w.-]+$/;

/** --model (and --revision), or undefined without --model. Marks both as used. */
export function readModelSource(args: CliArgs): ModelSource | undefined {
  const value = args.optional('model');
  const revision = args.optional('revision');
  if (value === undefined) {
    if (revision !== undefined) {
      throw new FlagError('revision', '--revision needs --model=HUB_ID (a Hugging Face model id)');
    }
    return undefined;
  }
  if (existsSync(value)) {
    if (!statSync(value).isDirectory()) {
      throw new FlagError('model', `--model=${value} is a file; give the model's folder`);
    }
    if (revision !== undefined) {
      throw new FlagError(
        'revision',
        `--revision is for a Hub model id; --model=${value} is a folder`,
      );
    }
    return { kind: 'folder', dir: value };
  }
  if (!HUB_ID.test(value) || value.includes('..')) {
    throw new FlagError(
      'model',
      `--model=${value}: no such folder, and not a Hugging Face model id ("org/name")`,
    );
  }
  if (revision !== undefined && (!/^[\w.-]{1,100}$/.test(revision) || revision.includes('..'))) {
    throw new FlagError(
      'revision',
      `--revision must be a branch, tag or commit name (letters, digits, - _ .), got '${revision.slice(0, 100)}'`,
    );
  }
  return { kind: 'hub', id: value, revision: revision ?? 'main' };
}

/** How outputs name the model: the folder, or the id (with @revision when not main). */
export function modelName(source: ModelSource): string {
  if (source.kind === 'folder') return source.dir;
  return source.revision === 'main' ? source.id : `${source.id}@${source.revision}`;
}

/** The Hub's address, the token and the cache folder, from the environment. */
export function hubSettings(env: NodeJS.ProcessEnv = process.env) {
  const cacheHome = env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return {
    baseUrl: (env.HF_ENDPOINT || HUB_URL).replace(/\/+$/, ''),
    token: env.HF_TOKEN || undefined,
    cacheRoot: env.AGENT_RL_LAB_CACHE || join(cacheHome, 'agent-rl-lab'),
  };
}

export interface ModelFolderOptions {
  env?: NodeJS.ProcessEnv;
  fetch?: typeof fetch;
  /** Where progress lines go (default stderr). */
  report?: (line: string) => void;
}

/** The folder to read the model from: the given one, or the Hub model's in the cache. */
export async function modelFolder(
  source: ModelSource,
  options: ModelFolderOptions = {},
): Promise<string> {
  if (source.kind === 'folder') return source.dir;
  const { baseUrl, token, cacheRoot } = hubSettings(options.env);
  const cache = new DiskModelCache(cacheRoot);
  const report = options.report ?? ((line: string) => console.error(line));
  const hub = { baseUrl, revision: source.revision };
  const baseFetch = options.fetch ?? fetch;
  // The token goes with every request; fetch drops it on a redirect to another origin (the CDN).
  const authorized: typeof fetch = token
    ? (input, init) =>
        baseFetch(input, {
          ...init,
          headers: {
            ...(init?.headers as Record<string, string>),
            authorization: `Bearer ${token}`,
          },
        })
    : baseFetch;
  try {
    await downloadModel(source.id, {
      ...hub,
      cache,
      fetch: authorized,
      onProgress: progressLines(modelName(source), report),
    });
  } catch (error) {
    throw new FlagError(
      'model',
      `--model=${modelName(source)}: ${errorText(error).replace(/\s+/g, ' ')}`,
    );
  }
  const folder = dirname(cache.pathOf(resolveUrl(source.id, 'config.json', hub)));
  report(`${modelName(source)}: in ${folder}`);
  return folder;
}

const MB = 1e6;
/** A file's progress is reported at most this often, in ms (its start and end always). */
const PROGRESS_EVERY_MS = 2000;

/**
 * Download progress as lines: each file's start, its end, and its bytes every few seconds; a file
 * already in the cache says nothing.
 */
function progressLines(model: string, report: (line: string) => void) {
  let file = '';
  let last = 0;
  const size = (bytes: number) => `${(bytes / MB).toFixed(1)} MB`;
  return ({ file: name, loaded, total }: DownloadProgress) => {
    const now = Date.now();
    if (name !== file) {
      file = name;
      last = now;
      // Whole at first sight: from the cache (or one small read), nothing to follow.
      if (total !== undefined && loaded >= total) return;
      report(`${model}: downloading ${name}${total === undefined ? '' : ` (${size(total)})`}`);
    } else if (total !== undefined && loaded >= total) {
      report(`${model}: ${name} done`);
    } else if (now - last >= PROGRESS_EVERY_MS) {
      last = now;
      report(`${model}: ${name} ${size(loaded)}${total === undefined ? '' : ` of ${size(total)}`}`);
    }
  };
}
