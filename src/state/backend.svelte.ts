/** What the UI knows about the compute backend, fed by the lab worker. */
import type { Remote } from 'comlink';
import { describeAdapter, describeUnavailable } from '../gpu/adapter-summary';
import type { BackendReport, KernelCheckResult, LabWorkerApi } from '../worker/protocol';

export class BackendState {
  report = $state.raw<BackendReport | undefined>(undefined);
  probeError = $state<string | undefined>(undefined);
  check = $state.raw<KernelCheckResult | undefined>(undefined);
  checkError = $state<string | undefined>(undefined);
  checking = $state(false);

  constructor(private readonly worker: Remote<LabWorkerApi>) {}

  /** The status-bar line: the adapter, or "CPU" and why. */
  get line(): string {
    if (this.probeError) return `CPU — the compute worker failed to start: ${this.probeError}`;
    if (!this.report) return 'Looking for a WebGPU adapter…';
    return this.report.kind === 'webgpu'
      ? describeAdapter(this.report.adapter)
      : describeUnavailable(this.report.reason);
  }

  async probe(forceCpu: boolean): Promise<void> {
    try {
      this.report = await this.worker.probeBackend({ forceCpu });
    } catch (error) {
      this.probeError = error instanceof Error ? error.message : String(error);
    }
  }

  async runCheck(rows: number, cols: number): Promise<void> {
    this.checking = true;
    this.checkError = undefined;
    try {
      this.check = await this.worker.runKernelCheck({ rows, cols, seed: 1 });
    } catch (error) {
      this.checkError = error instanceof Error ? error.message : String(error);
    } finally {
      this.checking = false;
    }
  }
}
