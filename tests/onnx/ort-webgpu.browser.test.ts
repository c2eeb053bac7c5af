/**
 * Exported models on onnxruntime-web's WebGPU execution provider in Chromium (headless, on
 * SwiftShader's software adapter here; a real GPU elsewhere), against our CPU forward.
 *
 * ORT-WebGPU does run in this headless Chromium, so there is no wasm fallback in this file. A
 * WebGPU session can still quietly run nodes on ORT's CPU EP (ORT always adds it as the fallback
 * for ops the WebGPU EP lacks), so the first test reads ORT's own node placement report (verbose
 * log) and fails if anything but the shape arithmetic (Shape, the seq-length Gather, Concat and
 * the bool mask Slice, which ORT keeps on the CPU by design) ran outside WebGPU. Without an
 * adapter the file fails (tests/support/gpu.ts), unless a developer opted out with ALLOW_NO_GPU=1.
 *
 * Tolerance as in the Node tests: max |ORT − CPU| ≤ 1e-4 · max(1, max |logit|) (float32 on both
 * sides; measured ≈ 2e-6 on SwiftShader).
 *
 * The cpu (Node) project also matches *.browser.test.ts; there this file skips (no window).
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { mlpForward } from '../../src/models/mlp-cpu';
import { AgentLayout } from '../../src/models/mlp-policy';
import type { TransformerConfig } from '../../src/models/transformer-config';
import { transformerForward } from '../../src/models/transformer-cpu';
import { exportActorCriticOnnx } from '../../src/onnx/export-mlp';
import { exportTransformerOnnx } from '../../src/onnx/export-transformer';
import {
  createOrtSession,
  ortActorCritic,
  ortForward,
  type OrtPolicySession,
} from '../../src/onnx/ort-reference';
import { IN_BROWSER, testGpu } from '../support/gpu';
import { maxAbsDiff } from '../support/random';
import { maxAbs, randomParams, randomTokens, transformerModel } from './helpers';

const TOLERANCE = 1e-4;

// ORT's wasm module binds the console when it loads: collect its lines from here on, so the
// placement report can be read back. Only while `tap` is set.
let tap: string[] | undefined;
if (IN_BROWSER) {
  for (const method of ['log', 'info', 'warn', 'error', 'debug'] as const) {
    const original = console[method].bind(console);
    console[method] = (...args: unknown[]) => {
      const text = args.map(String).join(' ');
      if (tap && text.includes('onnxruntime')) tap.push(text);
      else original(...args);
    };
  }
}

/** Nodes ORT placed on its CPU EP, from the verbose placement report. */
function cpuPlacedNodes(lines: string[]): string[] | undefined {
  const report = lines.filter((l) => l.includes('VerifyEachNodeIsAssignedToAnEp'));
  if (report.length === 0) return undefined;
  const nodes: string[] = [];
  let onCpu = false;
  for (const line of report) {
    const header = /Node\(s\) placed on \[(\w+)\]/.exec(line);
    if (header) onCpu = header[1] === 'CPUExecutionProvider';
    else if (onCpu) {
      const node = /\] {3}(\w+) \((.*)\)\s*$/.exec(line);
      if (node) nodes.push(`${node[1]} (${node[2]})`);
    }
  }
  return nodes;
}

const config: TransformerConfig = {
  vocab: 23,
  context: 12,
  width: 32,
  layers: 2,
  heads: 4,
  tiedEmbeddings: false,
  valueHead: true,
};

describe.skipIf(!IN_BROWSER)(
  'onnxruntime-web WebGPU EP runs our exports like our CPU forward',
  () => {
    let hasGpu = false;
    let transformer: OrtPolicySession;
    const model = transformerModel(config, 11);

    beforeAll(async () => {
      hasGpu = (await testGpu()) !== undefined; // fails the file without an adapter (see header)
      if (!hasGpu) return;
      transformer = await createOrtSession(
        exportTransformerOnnx(config, model.params, model.tokenizer),
        { executionProviders: ['webgpu'] },
      );
    }, 60_000);

    it('places every compute node on the WebGPU EP', async (ctx) => {
      if (!hasGpu) ctx.skip();
      expect(transformer.executionProviders).toEqual(['webgpu']);
      // A verbose session of a one-layer model (the report is printed while a session
      // initializes; one layer keeps ORT's verbose log short).
      const small = transformerModel({ ...config, layers: 1 }, 1);
      tap = [];
      let lines: string[];
      try {
        const verbose = await createOrtSession(
          exportTransformerOnnx(small.config, small.params, small.tokenizer),
          { executionProviders: ['webgpu'], logSeverityLevel: 0 },
        );
        await verbose.release();
      } finally {
        lines = tap;
        tap = undefined;
      }
      const onCpu = cpuPlacedNodes(lines);
      expect(onCpu, 'ORT printed a node placement report').toBeDefined();
      const shapeArithmetic = [
        'Shape (ids_shape)',
        'Gather (seq_len)',
        'Concat (mask_ends)',
        'Slice (causal_mask)',
      ];
      expect(onCpu!.filter((n) => !shapeArithmetic.includes(n))).toEqual([]);
    });

    it('transformer logits and values match (B = 2, T = 7 of context 12)', async (ctx) => {
      if (!hasGpu) ctx.skip();
      for (const [batch, seq] of [[2, 7]] as const) {
        const tokens = randomTokens(batch * seq, config.vocab, batch + 10 * seq);
        const cpu = transformerForward(config, model.layout, model.params, tokens, batch, seq);
        const ort = await ortForward(transformer, tokens, batch, seq);
        const scale = Math.max(1, maxAbs(cpu.logits));
        expect(
          maxAbsDiff(ort.logits, cpu.logits),
          `logits B=${batch} T=${seq}`,
        ).toBeLessThanOrEqual(TOLERANCE * scale);
        const vscale = Math.max(1, maxAbs(cpu.values!));
        expect(
          maxAbsDiff(ort.values!, cpu.values!),
          `values B=${batch} T=${seq}`,
        ).toBeLessThanOrEqual(TOLERANCE * vscale);
      }
    });

    it('MLP actor-critic logits and values match', async (ctx) => {
      if (!hasGpu) ctx.skip();
      // One hidden layer each: every distinct op shape costs a shader compile on SwiftShader
      // (seconds), and the deeper and GELU variants are covered on wasm in ort-reference.test.ts.
      const agent = new AgentLayout(
        { inputs: 4, hidden: [16], outputs: 3, activation: 'tanh', outputGain: 0.01 },
        { inputs: 4, hidden: [16], outputs: 1, activation: 'relu', outputGain: 1 },
      );
      const params = randomParams(agent.joint, 4);
      const session = await createOrtSession(exportActorCriticOnnx(agent, params), {
        executionProviders: ['webgpu'],
      });
      const batch = 5;
      const obs = Float32Array.from({ length: batch * 4 }, (_, i) => Math.sin(i) * 2);
      const actorParams = new Float32Array(agent.actor.total);
      const criticParams = new Float32Array(agent.critic.total);
      agent.scatter(params, actorParams, criticParams);
      const logits = mlpForward(agent.actorConfig, agent.actor, actorParams, obs, batch).out;
      const values = mlpForward(agent.criticConfig, agent.critic, criticParams, obs, batch).out;
      const ort = await ortActorCritic(session, obs, batch);
      expect(maxAbsDiff(ort.logits, logits)).toBeLessThanOrEqual(
        TOLERANCE * Math.max(1, maxAbs(logits)),
      );
      expect(maxAbsDiff(ort.values, values)).toBeLessThanOrEqual(
        TOLERANCE * Math.max(1, maxAbs(values)),
      );
      await session.release();
    });
  },
);
