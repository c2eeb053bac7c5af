/**
 * The browser environment: the page scripts/bench.mjs opens in headless Chromium. It exposes
 * `runBench(options)` on window; the script calls it and receives the plain-data result.
 *
 * ORT's wasm module binds console.log/console.error when it loads, so the log tap wraps the
 * console here first (this module loads before ORT is imported) and collects ORT's lines while
 * a tap is open.
 */
import { acquireGpu } from '../../src/gpu/context';
import type { BenchContext, BenchOptions, EnvResult } from '../core/types';
import { loadOrt, type OrtLogTap } from '../peers/ort';
import { loadTfjs } from '../peers/tfjs';
import { settle } from '../core/settle';
import { isSoftware, runSuites } from './run-suites';

declare global {
  interface Window {
    runBench?: (options: BenchOptions) => Promise<EnvResult>;
    /** Provided by the driving script (Playwright exposeFunction) to print progress. */
    benchLog?: (line: string) => Promise<void>;
    /** Provided by the driving script: CPU seconds used so far by all of Chromium's processes. */
    benchCpuSeconds?: () => Promise<number>;
  }
}

let sink: string[] | undefined;
for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
  const original = console[method].bind(console);
  console[method] = (...args: unknown[]) => {
    const text = args.map(String).join(' ');
    if (sink && text.includes('onnxruntime')) sink.push(...text.split('\n').filter(Boolean));
    else original(...args);
  };
}

const logTap: OrtLogTap = async (fn) => {
  const lines: string[] = [];
  sink = lines;
  try {
    return { value: await fn(), lines };
  } finally {
    sink = undefined;
  }
};

function log(line: string): void {
  const pre = document.getElementById('log');
  if (pre) pre.textContent += `${line}\n`;
  void window.benchLog?.(line);
}

window.runBench = async (options: BenchOptions): Promise<EnvResult> => {
  const acquired = await acquireGpu({ limits: 'adapter' });
  if (!acquired.ok) throw new Error(`no WebGPU adapter in the browser: ${acquired.reason.message}`);
  const gpu = acquired.gpu;
  const isolated = globalThis.crossOriginIsolated === true;
  const ortThreads = isolated ? Math.min(4, navigator.hardwareConcurrency || 1) : 1;
  const ctx: BenchContext = {
    env: {
      name: 'chromium',
      adapter: gpu.summary,
      software: isSoftware(gpu.summary),
      runtime: navigator.userAgent,
      notes: [
        `ORT wasm threads: ${ortThreads} (cross-origin isolated: ${isolated})`,
        `navigator.hardwareConcurrency: ${navigator.hardwareConcurrency}`,
      ],
    },
    gpu,
    options,
    log,
    tfjs: loadTfjs,
    ort: () =>
      loadOrt({
        wasmPaths: new URL('/ort-dist/', location.href).href,
        numThreads: ortThreads,
      }),
    ortLogTap: logTap,
    settle: async () => {
      const sample = window.benchCpuSeconds;
      if (!sample) return { waitedMs: 0, quiet: false, lastCores: Number.NaN };
      return settle(sample);
    },
  };
  try {
    return await runSuites(ctx);
  } finally {
    gpu.destroy();
  }
};
