/**
 * Finds the WebGPU entry point (`GPU`) for the current JavaScript runtime: `navigator.gpu` in
 * browsers and workers, the `webgpu` npm package (Dawn) in Node.
 */
import type { GpuUnavailableReason } from './adapter-summary';
import { errorText } from '../util/error-text';

export interface WebGpuApi {
  gpu: GPU;
  runtime: 'browser' | 'node-dawn';
}

export type WebGpuApiResult =
  { ok: true; api: WebGpuApi } | { ok: false; reason: GpuUnavailableReason };

function isNode(): boolean {
  const proc = (globalThis as { process?: { versions?: { node?: string } } }).process;
  return typeof proc?.versions?.node === 'string';
}

/** Enums such as GPUBufferUsage are globals in browsers; Dawn in Node hands them over instead. */
function installNodeGlobals(globals: object): void {
  for (const [key, value] of Object.entries(globals)) {
    if (!(key in globalThis)) Object.defineProperty(globalThis, key, { value, configurable: true });
  }
}

async function loadDawn(): Promise<WebGpuApiResult> {
  // A variable specifier keeps bundlers from pulling the native addon into browser builds.
  const specifier = 'webgpu';
  try {
    const dawn = (await import(/* @vite-ignore */ specifier)) as {
      create: (flags: string[]) => GPU;
      globals: object;
    };
    installNodeGlobals(dawn.globals);
    return { ok: true, api: { gpu: dawn.create([]), runtime: 'node-dawn' } };
  } catch (error) {
    const detail = errorText(error);
    return {
      ok: false,
      reason: {
        code: 'node-binding-failed',
        message: `the "webgpu" package (Dawn for Node) could not be loaded: ${detail}`,
      },
    };
  }
}

function browserApiMissing(): GpuUnavailableReason {
  const secure = (globalThis as { isSecureContext?: boolean }).isSecureContext;
  if (secure === false) {
    return {
      code: 'no-webgpu-api',
      message: 'WebGPU needs a secure context; open the lab over https or from localhost',
    };
  }
  return {
    code: 'no-webgpu-api',
    message: 'this browser does not expose navigator.gpu (WebGPU is off or not supported)',
  };
}

export async function getWebGpuApi(): Promise<WebGpuApiResult> {
  const nav = (globalThis as { navigator?: { gpu?: GPU } }).navigator;
  if (nav?.gpu) return { ok: true, api: { gpu: nav.gpu, runtime: 'browser' } };
  if (isNode()) return loadDawn();
  return { ok: false, reason: browserApiMissing() };
}
