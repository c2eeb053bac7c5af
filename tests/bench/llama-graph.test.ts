/**
 * The ONNX graph of the real-shape benches' peer (bench/onnx/llama-graph.ts) computes what the
 * lab's CPU twin computes: on the tiny fixture models of each family, onnxruntime-web's wasm
 * build in Node gives llamaForward's logits within 1e-4, and prefill + three decode steps through
 * the past/present k/v give the full pass's logits row by row.
 */
import { describe, expect, it } from 'vitest';
import { llamaForward } from '../../src/models/hf/llama-cpu';
import { llamaModelFromWeights, llamaTensorEntries } from '../../src/models/hf/llama-cpu-weights';
import { DataType, decodeModel } from '../../src/onnx/onnx-proto';
import { nodeOrtOptions } from '../../src/onnx/ort-node';
import { loadOrt, type OrtModule } from '../../src/onnx/ort-reference';
import { f16ToF32, f32ToF16 } from '../../src/util/half-float';
import { seededRandom } from '../../src/util/random';
import { LLAMA_IO } from '../../bench/onnx/llama-graph';
import { llamaModelBytes, PROTOBUF_MAX_BYTES } from '../../bench/onnx/llama-model-bytes';
import { randomLlamaWeights } from '../../bench/onnx/random-llama-weights';
import { expectClose } from '../support/expect-close';
import { QWEN3_06B, SMOLLM2_135M } from '../support/published-specs';
import { loadFixture } from '../models/hf/load-fixture';

const TOLERANCE = 1e-4;
const FAMILIES = ['llama', 'qwen2', 'qwen3'] as const;
const [B, T, STEPS] = [2, 5, 3];

type Feeds = Record<string, InstanceType<OrtModule['Tensor']>>;

function int64(ort: OrtModule, values: number[], dims: number[]) {
  return new ort.Tensor('int64', BigInt64Array.from(values.map(BigInt)), dims);
}

/** Rows b, positions from..to−1 of logits (B, S, V) → (B, to − from, V). */
function rows(logits: Float32Array, S: number, V: number, from: number, to: number): Float32Array {
  const out = new Float32Array(B * (to - from) * V);
  for (let b = 0; b < B; b++) {
    out.set(logits.subarray((b * S + from) * V, (b * S + to) * V), b * (to - from) * V);
  }
  return out;
}

describe('the Llama-family ONNX graph of the bench peer', () => {
  for (const family of FAMILIES) {
    it(`${family}-tiny: prefill logits match llamaForward; 3 decode steps match the full pass`, async () => {
      const { spec, weights } = await loadFixture(`${family}-tiny`);
      const V = spec.vocab;
      const S = T + STEPS;
      const random = seededRandom(11);
      const ids = Array.from({ length: B * S }, () => Math.floor(random() * V));
      const full = llamaForward(llamaModelFromWeights(spec, weights), Int32Array.from(ids), B, S);

      const ort = await loadOrt(nodeOrtOptions());
      const create = (withPast: boolean) =>
        ort.InferenceSession.create(llamaModelBytes(spec, { dtype: 'f32', withPast }, weights), {
          executionProviders: ['wasm'],
        });
      const prefill = await create(false);
      const decode = await create(true);
      try {
        // Prefill: the first T tokens of each row.
        const idsAt = (from: number, to: number) =>
          Array.from({ length: B }, (_, b) => ids.slice(b * S + from, b * S + to)).flat();
        const positions = (from: number, to: number) =>
          Array.from({ length: B }, () =>
            Array.from({ length: to - from }, (_, t) => from + t),
          ).flat();
        const out = await prefill.run({
          [LLAMA_IO.inputIds]: int64(ort, idsAt(0, T), [B, T]),
          [LLAMA_IO.positionIds]: int64(ort, positions(0, T), [B, T]),
        });
        expect(out[LLAMA_IO.logits]!.dims).toEqual([B, T, V]);
        const fullT = llamaForward(
          llamaModelFromWeights(spec, weights),
          Int32Array.from(idsAt(0, T)),
          B,
          T,
        );
        expectClose(
          out[LLAMA_IO.logits]!.data as Float32Array,
          fullT.logits,
          TOLERANCE,
          0,
          `${family} prefill`,
        );
        expectClose(
          out[LLAMA_IO.logits]!.data as Float32Array,
          rows(full.logits, S, V, 0, T),
          TOLERANCE,
          0,
          `${family} prefill vs full`,
        );
        expect(out[LLAMA_IO.presentKey(0)]!.dims).toEqual([B, spec.kvHeads, T, spec.headDim]);

        // Decode: one token per step, the previous step's present k/v as the past.
        let past = out;
        for (let step = 0; step < STEPS; step++) {
          const p = T + step;
          const feeds: Feeds = {
            [LLAMA_IO.inputIds]: int64(ort, idsAt(p, p + 1), [B, 1]),
            [LLAMA_IO.positionIds]: int64(ort, positions(p, p + 1), [B, 1]),
          };
          for (let n = 0; n < spec.layers; n++) {
            feeds[LLAMA_IO.pastKey(n)] = past[LLAMA_IO.presentKey(n)]!;
            feeds[LLAMA_IO.pastValue(n)] = past[LLAMA_IO.presentValue(n)]!;
          }
          const next = await decode.run(feeds);
          expect(next[LLAMA_IO.logits]!.dims).toEqual([B, 1, V]);
          expect(next[LLAMA_IO.presentValue(spec.layers - 1)]!.dims).toEqual([
            B,
            spec.kvHeads,
            p + 1,
            spec.headDim,
          ]);
          const got = next[LLAMA_IO.logits]!.data as Float32Array;
          expectClose(
            got,
            rows(full.logits, S, V, p, p + 1),
            TOLERANCE,
            0,
            `${family} decode step ${step}`,
          );
          past = next;
        }
      } finally {
        await prefill.release();
        await decode.release();
      }
    });
  }

  it('writes f16 initializers as the f32 weights rounded, linears transposed to (in, out)', () => {
    const spec = {
      ...SMOLLM2_135M,
      vocab: 64,
      width: 32,
      heads: 4,
      kvHeads: 2,
      headDim: 8,
      mlpWidth: 48,
      layers: 1,
    };
    const weights = randomLlamaWeights(spec, 3);
    const model = decodeModel(llamaModelBytes(spec, { dtype: 'f16', withPast: true }, weights));
    const byName = new Map(model.graph.initializers.map((t) => [t.name, t]));
    // Every HF tensor is stored once (tied: no lm_head), the linears under `${name}.T`.
    expect(model.graph.initializers.length).toBe(llamaTensorEntries(spec).length);
    const up = byName.get('model.layers.0.mlp.up_proj.weight.T')!;
    expect(up.dataType).toBe(DataType.FLOAT16);
    expect(up.dims).toEqual([32, 48]);
    const source = weights.get('model.layers.0.mlp.up_proj.weight')!; // (48, 32)
    const raw = new DataView(up.rawData!.buffer, up.rawData!.byteOffset, up.rawData!.byteLength);
    for (const [r, c] of [
      [0, 0],
      [5, 17],
      [31, 47],
    ] as const) {
      const half = raw.getUint16((r * 48 + c) * 2, true);
      expect(half).toBe(f32ToF16(source[c * 32 + r]!));
      expect(Math.abs(f16ToF32(half) - source[c * 32 + r]!)).toBeLessThan(1e-4);
    }
    expect(byName.get('model.embed_tokens.weight')!.dims).toEqual([64, 32]);
    expect(model.graph.inputs.map((v) => v.name)).toContain(LLAMA_IO.pastKey(0));
  });

  it('refuses Qwen3-0.6B in f32 (2.4 GB) before allocating: past protobuf’s 2 GiB', () => {
    let asked = 0;
    const source = () => {
      asked++;
      return new Float32Array(0);
    };
    expect(() => llamaModelBytes(QWEN3_06B, { dtype: 'f32', withPast: false }, source)).toThrow(
      /GiB is past protobuf's 2 GiB limit/,
    );
    expect(asked).toBe(0);
    expect(PROTOBUF_MAX_BYTES).toBe(2 ** 31 - 1);
  });
});
