/**
 * Issue 8 end to end, in Node: load the shipped reverse checkpoint, run five GRPO updates on the
 * CPU, export the trained policy to ONNX, run the export on onnxruntime-web (wasm EP), and its
 * logits and values match our CPU forward of the same weights. A truncated or foreign .onnx is
 * refused with an OnnxError that says what is wrong, before onnxruntime sees it.
 *
 * Tolerance (as in export-transformer.test.ts): max |ORT − CPU| ≤ 1e-4 · max(1, max |x|), float32
 * on both sides with different summation orders.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { CpuLanguageModel } from '../../src/models/lm-cpu';
import { transformerForward } from '../../src/models/transformer-cpu';
import { transformerLayout } from '../../src/models/transformer-params';
import { exportTransformerOnnx } from '../../src/onnx/export-transformer';
import { importOnnx, importTransformerOnnx } from '../../src/onnx/import';
import { OnnxError } from '../../src/onnx/onnx-error';
import { encodeModel, DataType } from '../../src/onnx/onnx-proto';
import { nodeOrtOptions } from '../../src/onnx/ort-node';
import { createOrtSession, ortForward } from '../../src/onnx/ort-reference';
import { createGrpoTrainer } from '../../src/rl/grpo';
import { DEFAULT_GRPO_CONFIG } from '../../src/rl/grpo-config';
import { promptTokens } from '../../src/agents/prompt-tokens';
import { seededRandom } from '../../src/util/random';
import { maxAbsDiff } from '../support/random';
import { maxAbs, randomTokens, warmUpOrt } from './helpers';
import { loadShipped, readShipped } from './shipped';

const TOLERANCE = 1e-4;
const wasm = { executionProviders: ['wasm' as const], ...nodeOrtOptions() };

const shipped = loadShipped('reverse');
const { config } = shipped;
const layout = transformerLayout(config);
let trained: Float32Array;
let exported: Uint8Array;

beforeAll(async () => {
  await warmUpOrt(wasm);
  const policy = new CpuLanguageModel(config, shipped.params);
  const trainer = createGrpoTrainer(
    { policy, tokenizer: shipped.tokenizerObject, task: shipped.task, seed: 11 },
    { ...DEFAULT_GRPO_CONFIG, groupSize: 8, promptsPerUpdate: 4, maxNewTokens: 8, lr: 1e-3 },
  );
  for (let u = 0; u < 5; u++) {
    const m = await trainer.update();
    expect(Number.isFinite(m['actor/pg_loss']), `update ${u + 1} pg_loss`).toBe(true);
  }
  expect(trainer.step).toBe(5);
  trained = await policy.readParams();
  exported = exportTransformerOnnx(config, trained, shipped.tokenizer!, {
    meta: { task: shipped.entry.task, step: 5, from: shipped.entry.checkpoint.file },
  });
}, 60_000);

describe('shipped checkpoint → 5 GRPO updates → ONNX → onnxruntime-web (wasm)', () => {
  it('the updates changed the weights, and the export imports back bit for bit', () => {
    expect(maxAbsDiff(trained, shipped.params)).toBeGreaterThan(1e-5);
    const back = importTransformerOnnx(exported);
    expect(back.config).toEqual(config);
    expect(back.tokenizerSpec).toEqual(shipped.tokenizer);
    expect(new Uint32Array(back.params.buffer)).toEqual(new Uint32Array(trained.buffer));
    expect(back.meta).toEqual({ task: 'reverse', step: '5', from: 'reverse.ckpt' });
  });

  it('ORT logits and values match our CPU forward (task prompts and random ids, T up to context)', async () => {
    const session = await createOrtSession(exported, wasm);
    try {
      // Real prompts padded to the longest, then random ids over the whole context.
      const random = seededRandom(3);
      const prompts = Array.from({ length: 6 }, () =>
        promptTokens(shipped.tokenizerObject, shipped.task.sample(random)),
      );
      const T1 = Math.max(...prompts.map((p) => p.length));
      const padded = new Int32Array(prompts.length * T1).fill(shipped.tokenizerObject.pad);
      prompts.forEach((p, b) => padded.set(p, b * T1));
      const batches: [Int32Array, number, number][] = [
        [padded, prompts.length, T1],
        [randomTokens(4 * config.context, config.vocab, 4), 4, config.context],
        [randomTokens(1, config.vocab, 5), 1, 1],
      ];
      for (const [tokens, batch, seq] of batches) {
        const cpu = transformerForward(config, layout, trained, tokens, batch, seq);
        const ort = await ortForward(session, tokens, batch, seq);
        const where = `B=${batch} T=${seq}`;
        expect(maxAbsDiff(ort.logits, cpu.logits), `logits ${where}`).toBeLessThanOrEqual(
          TOLERANCE * Math.max(1, maxAbs(cpu.logits)),
        );
        expect(maxAbsDiff(ort.values!, cpu.values!), `values ${where}`).toBeLessThanOrEqual(
          TOLERANCE * Math.max(1, maxAbs(cpu.values!)),
        );
      }
    } finally {
      await session.release();
    }
  });
});

describe('a truncated or foreign .onnx gets a clear error (before onnxruntime sees it)', () => {
  const cases: [string, () => Uint8Array, OnnxError['reason'], RegExp][] = [
    [
      'the export cut in half (a partial download)',
      () => exported.subarray(0, exported.length >> 1),
      'truncated',
      /onnx: .* \(at byte \d+\)$/,
    ],
    [
      'the export without its last byte',
      () => exported.subarray(0, exported.length - 1),
      'truncated',
      /at byte \d+/,
    ],
    ['no bytes at all', () => new Uint8Array(0), 'truncated', /ModelProto is empty \(0 bytes\)/],
    [
      'the shipped checkpoint file given as ONNX',
      () => readShipped(shipped.entry.checkpoint.file),
      'foreign',
      /start with "ARLCKPT1": this is an agent-rl-lab checkpoint, not an ONNX file/,
    ],
    [
      'a valid ONNX model from elsewhere (y = relu(x), no agent-rl-lab metadata)',
      () =>
        encodeModel({
          irVersion: 8,
          opsetImports: [{ domain: '', version: 17 }],
          producerName: 'pytorch',
          graph: {
            name: 'main_graph',
            nodes: [{ opType: 'Relu', inputs: ['x'], outputs: ['y'], attributes: [] }],
            initializers: [],
            inputs: [{ name: 'x', elemType: DataType.FLOAT, shape: [3] }],
            outputs: [{ name: 'y', elemType: DataType.FLOAT, shape: [3] }],
          },
          metadataProps: [],
        }),
      'foreign',
      /has no agent-rl-lab metadata .* \(producer "pytorch", graph "main_graph", 0 initializers\)/,
    ],
  ];
  for (const [name, bytes, reason, says] of cases) {
    it(name, async () => {
      const error = await createOrtSession(bytes(), wasm).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OnnxError);
      expect((error as OnnxError).reason).toBe(reason);
      expect((error as Error).message).toMatch(says);
      expect(() => importOnnx(bytes())).toThrow(OnnxError);
    });
  }
});
