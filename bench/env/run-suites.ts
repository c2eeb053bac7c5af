/** Runs the selected suites in one environment; the same code in Node and in the browser page. */
import { SUITES } from '../suites';
import { tokenLogprobsModel } from '../onnx/token-logprobs-graph';
import type { BenchContext, EnvResult, SuiteResult } from '../core/types';

export async function runSuites(ctx: BenchContext): Promise<EnvResult> {
  const start = performance.now();
  const wanted = ctx.options.suites;
  const unknown = wanted.filter((name) => !SUITES.some((s) => s.name === name));
  if (unknown.length > 0) {
    throw new Error(
      `unknown suite(s) ${unknown.join(', ')}; known: ${SUITES.map((s) => s.name).join(', ')}`,
    );
  }
  const selected = SUITES.filter((s) => wanted.length === 0 || wanted.includes(s.name));
  if (selected.some((s) => s.usesPeers)) await preloadPeers(ctx);
  else ctx.env.notes.push('peers not loaded: no selected suite times them');
  const suites: SuiteResult[] = [];
  for (const suite of selected) {
    ctx.log(`suite ${suite.name}`);
    suites.push(await suite.run(ctx));
  }
  return { env: ctx.env, suites, seconds: (performance.now() - start) / 1000 };
}

/**
 * Loads tfjs and ORT and runs each once on a tiny input, then waits for the environment to go
 * idle, so one-off costs (wasm compilation in background threads, backend start-up) land before
 * any timing instead of inside it. A peer that fails to load is noted; its rows then fail with
 * the same error.
 */
async function preloadPeers(ctx: BenchContext): Promise<void> {
  const start = performance.now();
  try {
    const { tf, version } = await ctx.tfjs();
    tf.tidy(() => tf.logSoftmax(tf.ones([2, 8]))).dispose();
    ctx.env.notes.push(`tfjs ${version}, backend ${tf.getBackend()}`);
  } catch (error) {
    ctx.env.notes.push(`tfjs did not load: ${String(error)}`);
  }
  try {
    const ort = await ctx.ort();
    const model = tokenLogprobsModel(2, 8);
    for (const ep of ['wasm', 'webgpu'] as const) {
      const session = await ort.InferenceSession.create(model, { executionProviders: [ep] });
      await session.run({
        logits: new ort.Tensor('float32', new Float32Array(16), [2, 8]),
        targets: new ort.Tensor('int32', new Int32Array(2), [2, 1]),
      });
      await session.release();
    }
    ctx.env.notes.push(`onnxruntime-web ${ort.env.versions.web ?? '?'}`);
  } catch (error) {
    ctx.env.notes.push(`onnxruntime-web did not load: ${String(error)}`);
  }
  const loadedMs = performance.now() - start;
  const settled = await ctx.settle();
  const note =
    `peers loaded in ${(loadedMs / 1000).toFixed(1)} s, then idle after ${(settled.waitedMs / 1000).toFixed(1)} s` +
    (settled.quiet ? '' : ` (gave up waiting: still ${settled.lastCores.toFixed(2)} cores busy)`);
  ctx.env.notes.push(note);
  ctx.log(note);
}

/** True for SwiftShader and other fallback adapters. */
export function isSoftware(summary: { isFallbackAdapter: boolean; architecture: string }): boolean {
  return summary.isFallbackAdapter || summary.architecture === 'swiftshader';
}
