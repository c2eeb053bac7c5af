/** What the UI knows about the compute backend, fed by the lab worker. */
import { proxy, type Remote } from 'comlink';
import { describeAdapter, describeUnavailable } from '../gpu/adapter-summary';
import type { BackendChoice } from '../gpu/backend-choice';
import { machineSentence, shortBackend } from './backend-summary';
import type {
  BackendReport,
  GpuEvent,
  KernelCheckResult,
  LabWorkerApi,
} from '../worker/lab-protocol';
import { errorText } from '../util/error-text';

export class BackendState {
  report = $state.raw<BackendReport | undefined>(undefined);
  probeError = $state<string | undefined>(undefined);
  check = $state.raw<KernelCheckResult | undefined>(undefined);
  checkError = $state<string | undefined>(undefined);
  checking = $state(false);
  /** The last device loss or uncaptured GPU error the worker reported. */
  gpuEvent = $state.raw<GpuEvent | undefined>(undefined);

  constructor(private readonly worker: Remote<LabWorkerApi>) {}

  /** The status-bar line: the adapter, or "CPU" and why. */
  get line(): string {
    if (this.probeError) return `CPU — the compute worker failed to start: ${this.probeError}`;
    if (!this.report) return 'Looking for a WebGPU adapter…';
    if (this.gpuEvent?.type === 'device-lost') {
      return `WebGPU device lost (${this.gpuEvent.reason}): ${this.gpuEvent.message || 'no message'} — reload the page to get a new device`;
    }
    return this.report.kind === 'webgpu'
      ? describeAdapter(this.report.adapter)
      : describeUnavailable(this.report.reason);
  }

  /** The status line's few words ("CPU — no hardware GPU found"); `line` is the full story. */
  get short(): string {
    if (this.gpuEvent?.type === 'device-lost') return 'WebGPU device lost — reload the page';
    return shortBackend(this.report, this.probeError !== undefined);
  }

  /** What the home page tells the reader their machine trains on. */
  get sentence(): string {
    return machineSentence(this.report, this.probeError !== undefined);
  }

  async probe(backend: BackendChoice): Promise<void> {
    try {
      await this.worker.onGpuEvent(proxy((event: GpuEvent) => (this.gpuEvent = event)));
      this.report = await this.worker.probeBackend({ backend });
    } catch (error) {
      this.probeError = errorText(error);
    }
  }

  async runCheck(rows: number, cols: number): Promise<void> {
    this.checking = true;
    this.checkError = undefined;
    try {
      this.check = await this.worker.runKernelCheck({ rows, cols, seed: 1 });
    } catch (error) {
      this.checkError = errorText(error);
    } finally {
      this.checking = false;
    }
  }
}
