/**
 * Issue 8 end to end in Chromium: fetch the shipped reverse model from /models/ (public/ is the
 * test server's public dir, as it is the app's), run the .onnx on onnxruntime-web's WebGPU
 * execution provider (SwiftShader here, a real GPU elsewhere) and compare its logits and values
 * with our CPU forward of the shipped checkpoint's weights. (The GRPO-then-export half runs in
 * Node: end-to-end.test.ts.)
 *
 * Without a WebGPU adapter the file fails (tests/support/gpu.ts), unless a developer opted out
 * with ALLOW_NO_GPU=1. Tolerance as in the Node tests: max |ORT − CPU| ≤ 1e-4 · max(1, max |x|).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { loadLanguageModel, type LoadedLanguageModel } from '../../src/models/lm-checkpoint';
import { transformerForward } from '../../src/models/transformer-cpu';
import { transformerLayout } from '../../src/models/transformer-params';
import { importTransformerOnnx } from '../../src/onnx/import';
import { OnnxError } from '../../src/onnx/onnx-error';
import { createOrtSession, ortForward, type OrtPolicySession } from '../../src/onnx/ort-reference';
import { IN_BROWSER, testGpu } from '../support/gpu';
import { maxAbsDiff } from '../support/random';
import manifest from '../../src/models/shipped-manifest.json';
import { maxAbs, randomTokens } from './helpers';

const TOLERANCE = 1e-4;

async function fetchBytes(path: string): Promise<Uint8Array> {
  const response = await fetch(path);
  if (!response.ok) throw new Error(`GET ${path}: ${response.status} ${response.statusText}`);
  return new Uint8Array(await response.arrayBuffer());
}

describe.skipIf(!IN_BROWSER)('shipped reverse model on onnxruntime-web WebGPU', () => {
  let hasGpu = false;
  let onnx: Uint8Array;
  let ckpt: LoadedLanguageModel;
  let session: OrtPolicySession;

  beforeAll(async () => {
    hasGpu = (await testGpu()) !== undefined; // fails the file without an adapter (see header)
    const entry = manifest.models.find((m) => m.name === 'reverse');
    if (!entry) throw new Error('src/models/shipped-manifest.json lists no "reverse" model');
    onnx = await fetchBytes(`/models/${entry.onnx.file}`);
    ckpt = loadLanguageModel(await fetchBytes(`/models/${entry.checkpoint.file}`));
    if (!hasGpu) return;
    session = await createOrtSession(onnx, { executionProviders: ['webgpu'] });
  }, 60_000);

  it('the fetched .onnx holds the checkpoint’s config and weights', () => {
    const imported = importTransformerOnnx(onnx);
    expect(imported.config).toEqual(ckpt.config);
    // Bit for bit, by a plain loop (toEqual on 10⁵ elements takes seconds in the browser).
    const [a, b] = [new Uint32Array(imported.params.buffer), new Uint32Array(ckpt.params.buffer)];
    expect(a.length).toBe(b.length);
    expect(a.findIndex((bits, i) => bits !== b[i])).toBe(-1);
  });

  // One shape: every new shape compiles ORT's shaders again, seconds each on SwiftShader.
  it('ORT WebGPU logits and values match our CPU forward (B = 3, T = context)', async (ctx) => {
    if (!hasGpu) ctx.skip();
    expect(session.executionProviders).toEqual(['webgpu']);
    const { config, params } = ckpt;
    const layout = transformerLayout(config);
    for (const [batch, seq] of [[3, config.context]] as const) {
      const tokens = randomTokens(batch * seq, config.vocab, 100 + seq);
      const cpu = transformerForward(config, layout, params, tokens, batch, seq);
      const ort = await ortForward(session, tokens, batch, seq);
      const where = `B=${batch} T=${seq}`;
      expect(maxAbsDiff(ort.logits, cpu.logits), `logits ${where}`).toBeLessThanOrEqual(
        TOLERANCE * Math.max(1, maxAbs(cpu.logits)),
      );
      expect(maxAbsDiff(ort.values!, cpu.values!), `values ${where}`).toBeLessThanOrEqual(
        TOLERANCE * Math.max(1, maxAbs(cpu.values!)),
      );
    }
    await session.release();
  });

  it('a truncated download of the .onnx is refused before ORT sees it', async () => {
    const error = await createOrtSession(onnx.subarray(0, onnx.length >> 1), {
      executionProviders: ['webgpu'],
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OnnxError);
    expect((error as OnnxError).reason).toBe('truncated');
  });
});
