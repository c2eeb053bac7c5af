/**
 * onnxruntime-web (the WebGPU build, which also carries the wasm CPU EP) as a benchmark peer.
 * Imported on first use with its wasm files and thread count set by the environment.
 */
export type OrtModule = typeof import('onnxruntime-web/webgpu');

export interface OrtConfig {
  /** URL prefix of onnxruntime-web's dist/ folder (the .mjs/.wasm pairs it loads at run time). */
  wasmPaths: string;
  /** Threads of the wasm CPU EP (> 1 needs cross-origin isolation in the browser). */
  numThreads: number;
}

/** Runs `fn` and returns what ORT's native logger printed meanwhile. */
export type OrtLogTap = <T>(fn: () => Promise<T>) => Promise<{ value: T; lines: string[] }>;

let loading: Promise<OrtModule> | undefined;

export function loadOrt(config: OrtConfig): Promise<OrtModule> {
  loading ??= (async () => {
    const ort = await import('onnxruntime-web/webgpu');
    ort.env.wasm.wasmPaths = config.wasmPaths;
    ort.env.wasm.numThreads = config.numThreads;
    ort.env.logLevel = 'error';
    return ort;
  })();
  return loading;
}

const EP_NAMES: Record<string, string> = {
  webgpu: 'WebGpuExecutionProvider',
  wasm: 'CPUExecutionProvider',
};

/**
 * Creates a throwaway session with verbose logging and reads ORT's node placement report.
 * Returns undefined when every node runs on `ep`, else what ran elsewhere. This is how a silent
 * fallback to the CPU EP (as LogSoftmax does on SwiftShader) is caught.
 */
export async function checkPlacement(
  ort: OrtModule,
  tap: OrtLogTap,
  model: Uint8Array,
  ep: 'webgpu' | 'wasm',
): Promise<string | undefined> {
  const { value: session, lines } = await tap(() =>
    ort.InferenceSession.create(model, { executionProviders: [ep], logSeverityLevel: 0 }),
  );
  await session.release();
  const expected = EP_NAMES[ep]!;
  const report = lines.filter((l) => l.includes('VerifyEachNodeIsAssignedToAnEp'));
  if (report.some((l) => l.includes(`All nodes placed on [${expected}]`))) return undefined;
  if (report.length === 0) return 'ORT printed no node placement report';
  return `not all nodes on ${expected}: ${report.map((l) => l.replace(/^.*\] /, '')).join(' | ')}`;
}
