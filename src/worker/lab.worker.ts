/// <reference lib="webworker" />
/** The lab worker: owns the GPU device; the main thread never computes. */
import { expose } from 'comlink';
import { acquireForChoice } from '../gpu/backend-choice';
import type { GpuContext, GpuEvent } from '../gpu/context';
import { logSoftmaxGpu } from '../gpu/kernels/log-softmax';
import { logSoftmax } from '../ops/log-softmax';
import { checkInt } from '../ops/validate';
import { maxAbsDiff } from '../util/max-abs-diff';
import { uniformF32 } from '../util/random';
import type {
  BackendReport,
  KernelCheckRequest,
  KernelCheckResult,
  LabWorkerApi,
  ProbeRequest,
} from './lab-protocol';
import type { RunSpec } from './run-protocol';
import { checkRunSpec, runCatalog } from './run-spec';

let gpu: GpuContext | undefined;
let report: BackendReport | undefined;
const gpuListeners: ((event: GpuEvent) => void)[] = [];

const api: LabWorkerApi = {
  async probeBackend({ backend }: ProbeRequest): Promise<BackendReport> {
    if (report) return report;
    if (backend === 'cpu') {
      report = {
        kind: 'cpu',
        reason: { code: 'cpu-requested', message: 'CPU was requested in the URL (?backend=cpu)' },
      };
      return report;
    }
    const result = await acquireForChoice(backend, '?backend=webgpu');
    if (result.ok) {
      gpu = result.gpu;
      gpu.onEvent((event) => gpuListeners.forEach((listener) => listener(event)));
      report = { kind: 'webgpu', adapter: gpu.summary };
    } else {
      report = { kind: 'cpu', reason: result.reason };
    }
    return report;
  },

  async onGpuEvent(listener: (event: GpuEvent) => void): Promise<void> {
    gpuListeners.push(listener);
  },

  async runKernelCheck({ rows, cols, seed }: KernelCheckRequest): Promise<KernelCheckResult> {
    checkInt('kernelCheck', 'rows', rows, 1, 4096);
    checkInt('kernelCheck', 'cols', cols, 1, 65536);
    const logits = uniformF32(rows * cols, 10, seed);
    const cpuStart = performance.now();
    const expected = logSoftmax(logits, rows, cols);
    const cpuMs = performance.now() - cpuStart;
    if (!gpu || gpu.isLost)
      return { rows, cols, backend: 'cpu', maxAbsError: null, gpuMs: null, cpuMs };
    const gpuStart = performance.now();
    const actual = await logSoftmaxGpu(gpu, logits, rows, cols);
    const gpuMs = performance.now() - gpuStart;
    return {
      rows,
      cols,
      backend: 'webgpu',
      maxAbsError: maxAbsDiff(actual, expected),
      gpuMs,
      cpuMs,
    };
  },

  async runCatalog() {
    return runCatalog();
  },

  async checkRunSpec(spec: RunSpec) {
    return checkRunSpec(spec);
  },
};

expose(api);
