/**
 * Node side of `npm run bench` (loaded through Vite by scripts/bench.mjs): runs the Node
 * environment, and prints and saves the results of every environment of one run as one JSON
 * file under bench/results/.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { renderEnv, renderNotes, renderTargets, SOFTWARE_LABEL } from './core/report';
import { renderLessonEnv } from './ui/lesson-report';
import type { BenchOptions, EnvResult } from './core/types';
import { runNode } from './env/node';
import { IMPL } from './suites/token-logprobs.bench';
import { UI_SUITE } from './ui/frame-stats';
import { renderUiEnv, renderUiTarget } from './ui/report';

export { runNode };

/** Versions of the peers and of Dawn, read from their installed package.json. */
function versions(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of [
    '@tensorflow/tfjs-core',
    '@tensorflow/tfjs-backend-webgpu',
    'onnxruntime-web',
    'webgpu',
    'playwright-core',
  ]) {
    try {
      const url = new URL(`../node_modules/${name}/package.json`, import.meta.url);
      out[name] = (JSON.parse(readFileSync(url, 'utf8')) as { version: string }).version;
    } catch {
      out[name] = 'not installed';
    }
  }
  return out;
}

export interface RunMeta {
  args: string[];
  options: BenchOptions;
  /** Environments that did not produce results, with why. */
  failures: { env: string; reason: string }[];
}

/** Prints every table and the target check, saves the JSON record, returns its path. */
export function finish(results: EnvResult[], meta: RunMeta): string {
  for (const result of results) {
    const render =
      result.env.name === 'chromium-ui'
        ? renderUiEnv
        : result.env.name === 'chromium-lessons'
          ? renderLessonEnv
          : renderEnv;
    console.log(`\n${render(result)}`);
  }
  for (const failure of meta.failures) {
    console.log(`\n=== ${failure.env}: no results ===\n${failure.reason}`);
  }
  if (results.length > 0) {
    console.log(`\nWhat is timed how:\n${renderNotes(results)}`);
    const targets = renderTargets(results, 'token-logprobs', [IMPL.tfjs, IMPL.ortWebgpu]);
    if (targets.length > 0) {
      const software = results.some((r) => r.env.software) ? ` (${SOFTWARE_LABEL})` : '';
      console.log(`\nTargets at V = 32768${software}:\n${targets.map((t) => `  ${t}`).join('\n')}`);
    }
    const ui = renderUiTarget(results, UI_SUITE);
    if (ui.length > 0) console.log(`\nUI target:\n${ui.map((t) => `  ${t}`).join('\n')}`);
  }
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  const date = new Date();
  const stamp = date.toISOString().replace(/[:.]/g, '-');
  const names = results.map((r) => r.env.name).join('+') || 'none';
  const file = `bench/results/${stamp}-${names}.json`;
  const record = {
    date: date.toISOString(),
    args: meta.args,
    options: meta.options,
    host: {
      platform: `${os.platform()} ${os.arch()}`,
      cpus: os.cpus().length,
      memoryGiB: Math.round(os.totalmem() / 2 ** 30),
      loadAverageAtEnd: os.loadavg(),
    },
    versions: versions(),
    environments: results,
    failures: meta.failures,
  };
  writeFileSync(new URL(`../${file}`, import.meta.url), `${JSON.stringify(record, null, 2)}\n`);
  console.log(`\nSaved ${file}`);
  return file;
}
