/**
 * The Node environment: Dawn from the `webgpu` package, set up so that tfjs and onnxruntime-web
 * (written for browsers) run on it too. Loaded through Vite (scripts/bench.mjs) so that `?raw`
 * WGSL imports work.
 *
 * What it changes in the process, and why:
 * - globalThis.navigator.gpu = Dawn's GPU object, before any peer is imported: tfjs and ORT look
 *   for WebGPU there. The object also stays alive that way (Dawn crashes if it is collected).
 * - A 1 ms interval keeps the event loop polling Dawn; without it ORT's first readback waited
 *   ~60 s in Node (Dawn's callbacks only run when the loop wakes up).
 * - GPUQueue.writeBuffer copies views of a SharedArrayBuffer first: ORT's threaded wasm keeps its
 *   heap in shared memory, which Dawn in Node rejects ("Invalid argument"). Browsers accept it.
 * - ORT's native logger writes with fs.writeSync(1|2); the log tap swaps that out while it listens.
 */
import fs from 'node:fs';
import os from 'node:os';
import { acquireGpu } from '../../src/gpu/context';
import type { BenchContext, BenchOptions, EnvResult } from '../core/types';
import { loadOrt, type OrtLogTap } from '../peers/ort';
import { loadTfjs } from '../peers/tfjs';
import { settle } from '../core/settle';
import { isSoftware, runSuites } from './run-suites';

/**
 * Dawn rounds timestamp queries to about 65.5 µs by default (the browsers' guard against timing
 * attacks); on an NVIDIA H200 every short kernel then read 0.066 ms or a multiple of it. The bench
 * asks for the GPU's own resolution.
 */
const UNQUANTIZED_TIMESTAMPS = 'disable-dawn-features=timestamp_quantization';

interface Dawn {
  create(flags: string[]): GPU;
  globals: object;
}

function installNavigatorGpu(gpu: GPU): void {
  const g = globalThis as { navigator?: object };
  if (!g.navigator) {
    Object.defineProperty(globalThis, 'navigator', {
      value: {},
      configurable: true,
      writable: true,
    });
  }
  Object.defineProperty(g.navigator, 'gpu', { value: gpu, configurable: true });
}

function allowSharedMemoryWrites(queue: GPUQueue): void {
  const proto = Object.getPrototypeOf(queue) as GPUQueue & { __benchShim?: boolean };
  if (proto.__benchShim) return;
  const original = proto.writeBuffer;
  proto.writeBuffer = function (
    this: GPUQueue,
    buffer: GPUBuffer,
    offset: number,
    data: BufferSource | SharedArrayBuffer,
    dataOffset?: number,
    size?: number,
  ): undefined {
    if (ArrayBuffer.isView(data) && data.buffer instanceof SharedArrayBuffer) {
      // dataOffset and size count elements of a typed array (bytes for a DataView).
      const unit = 'BYTES_PER_ELEMENT' in data ? (data.BYTES_PER_ELEMENT as number) : 1;
      const start = data.byteOffset + (dataOffset ?? 0) * unit;
      const length = size === undefined ? data.byteLength - (dataOffset ?? 0) * unit : size * unit;
      const copy = new Uint8Array(data.buffer, start, length).slice();
      return original.call(this, buffer, offset, copy);
    }
    return original.call(this, buffer, offset, data as BufferSource, dataOffset, size);
  } as GPUQueue['writeBuffer'];
  proto.__benchShim = true;
}

const logTap: OrtLogTap = async (fn) => {
  const lines: string[] = [];
  const original = fs.writeSync;
  const tapped = function (fd: number, data: unknown, ...rest: unknown[]) {
    if ((fd === 1 || fd === 2) && typeof data === 'string' && data.includes('onnxruntime')) {
      lines.push(...data.split('\n').filter(Boolean));
      return data.length;
    }
    return (original as (...args: unknown[]) => number)(fd, data, ...rest);
  };
  fs.writeSync = tapped as typeof fs.writeSync;
  try {
    return { value: await fn(), lines };
  } finally {
    fs.writeSync = original;
  }
};

/** CPU time of this process, all threads (V8's compiler threads and SwiftShader's included). */
async function ownCpuSeconds(): Promise<number> {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

export async function runNode(
  options: BenchOptions,
  log: (line: string) => void,
): Promise<EnvResult> {
  const dawn = (await import('webgpu')) as Dawn;
  for (const [key, value] of Object.entries(dawn.globals)) {
    if (!(key in globalThis)) Object.defineProperty(globalThis, key, { value, configurable: true });
  }
  installNavigatorGpu(dawn.create([UNQUANTIZED_TIMESTAMPS]));
  const pump = setInterval(() => {}, 1);
  try {
    const acquired = await acquireGpu({ limits: 'adapter' });
    if (!acquired.ok) throw new Error(`no WebGPU adapter in Node: ${acquired.reason.message}`);
    const gpu = acquired.gpu;
    allowSharedMemoryWrites(gpu.device.queue);
    // acquireGpu saw navigator.gpu and calls it a browser; it is Dawn.
    const adapter = { ...gpu.summary, runtime: 'node-dawn' as const };
    const ortThreads = 1;
    const ctx: BenchContext = {
      env: {
        name: 'node-dawn',
        adapter,
        software: isSoftware(adapter),
        runtime: `node ${process.version} (${os.cpus().length} CPUs)`,
        notes: [
          `ORT wasm threads: ${ortThreads} (multi-threaded wasm failed to start in Node)`,
          'navigator.gpu = Dawn; 1 ms interval keeps Dawn polled; GPUQueue.writeBuffer copies SharedArrayBuffer views (ORT heap) before Dawn sees them',
          `load average at start: ${os
            .loadavg()
            .map((l) => l.toFixed(1))
            .join(' ')}`,
        ],
      },
      gpu,
      options,
      log,
      tfjs: loadTfjs,
      ort: () =>
        loadOrt({
          wasmPaths: new URL('../../node_modules/onnxruntime-web/dist/', import.meta.url).href,
          numThreads: ortThreads,
        }),
      ortLogTap: logTap,
      settle: () => settle(ownCpuSeconds),
    };
    const result = await runSuites(ctx);
    result.env.notes.push(
      `load average at end: ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(' ')}`,
    );
    gpu.destroy();
    return result;
  } finally {
    clearInterval(pump);
  }
}
