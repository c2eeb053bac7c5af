/**
 * Short words for the compute backend: the few that a status line and the home page show, with the
 * full sentence (adapter-summary.ts) one click away. Plain functions of the worker's report.
 */
import type { GpuUnavailableReason } from '../gpu/adapter-summary';
import type { BackendReport } from '../worker/lab-protocol';

/** Why the CPU, in a few words a newcomer can read; the full message is the details. */
const CPU_BECAUSE: Record<GpuUnavailableReason['code'], string> = {
  'no-webgpu-api': 'this browser has no WebGPU',
  'node-binding-failed': 'no WebGPU binding in Node',
  'no-adapter': 'no GPU found',
  'device-request-failed': 'the GPU would not start',
  'cpu-requested': 'asked for in the address (?backend=cpu)',
  'fallback-adapter': 'no hardware GPU found',
};

/** "CPU — no hardware GPU found", "WebGPU — nvidia ampere", or the probe's state. */
export function shortBackend(report: BackendReport | undefined, failed = false): string {
  if (failed) return 'CPU — the compute worker failed to start';
  if (!report) return 'Looking for a GPU…';
  if (report.kind === 'cpu') return `CPU — ${CPU_BECAUSE[report.reason.code]}`;
  const a = report.adapter;
  const name = [a.vendor, a.architecture || a.device].filter(Boolean).join(' ') || 'a GPU';
  return `WebGPU — ${name}${a.isFallbackAdapter ? ' (software)' : ''}`;
}

/** One plain sentence for the home page: what this reader's machine will train on. */
export function machineSentence(report: BackendReport | undefined, failed = false): string {
  if (failed || report?.kind === 'cpu') {
    return 'On this machine the lessons train on your CPU: everything works, the larger models just take longer.';
  }
  if (!report) return 'Checking what this machine can train on…';
  return report.adapter.isFallbackAdapter
    ? "On this machine the lessons train on WebGPU's software adapter (no hardware GPU found): it works, but slower than a GPU."
    : 'On this machine the lessons train on your GPU, through WebGPU.';
}

/**
 * A run card's backend line ("CPU — WebGPU not used: <why>", "WebGPU — vendor · arch — …") cut to
 * its head: the part before the reason or the adapter's details.
 */
export function shortRunLine(line: string): string {
  const colon = line.indexOf(': ');
  const head = colon >= 0 ? line.slice(0, colon) : line;
  return head.split(' — ').slice(0, 2).join(' — ');
}
