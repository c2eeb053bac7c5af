/**
 * onnxruntime-web (wasm EP, Node) as the frozen reference policy: its token log-probs against our
 * own model's scoreTokens(), the MLP actor-critic export against mlp-cpu.ts, and the input checks
 * of the run functions.
 *
 * Tolerance: max |ORT − CPU| ≤ 1e-4 · max(1, max |x|) for logits and values (see
 * export-transformer.test.ts); log-probs move by at most twice the largest logit difference
 * (logp = z_t − logsumexp z, each term within that difference), so the same bound holds for them
 * with the logit scale.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CpuLanguageModel } from '../../src/models/lm-cpu';
import { mlpForward } from '../../src/models/mlp-cpu';
import { AgentLayout } from '../../src/models/mlp-policy';
import type { MlpConfig } from '../../src/models/mlp-params';
import type { TransformerConfig } from '../../src/models/transformer-config';
import { transformerForward } from '../../src/models/transformer-cpu';
import { OpInputError } from '../../src/ops/errors';
import { exportActorCriticOnnx } from '../../src/onnx/export-mlp';
import { exportTransformerOnnx } from '../../src/onnx/export-transformer';
import { OnnxError } from '../../src/onnx/onnx-error';
import { encodeModel } from '../../src/onnx/onnx-proto';
import { nodeOrtOptions } from '../../src/onnx/ort-node';
import {
  createOrtSession,
  ortActorCritic,
  ortLogits,
  ortReferenceLogprobs,
  type OrtPolicySession,
} from '../../src/onnx/ort-reference';
import { maxAbsDiff } from '../support/random';
import { maxAbs, randomParams, randomTokens, transformerModel, warmUpOrt } from './helpers';

const TOLERANCE = 1e-4;
const wasm = { executionProviders: ['wasm' as const], ...nodeOrtOptions() };

const config: TransformerConfig = {
  vocab: 30,
  context: 16,
  width: 32,
  layers: 2,
  heads: 4,
  tiedEmbeddings: true,
  valueHead: false,
};
const model = transformerModel(config, 31);
let policy: OrtPolicySession;

beforeAll(async () => {
  await warmUpOrt(wasm);
  policy = await createOrtSession(
    exportTransformerOnnx(config, model.params, model.tokenizer),
    wasm,
  );
}, 60_000);
afterAll(() => policy.release());

describe('ortReferenceLogprobs', () => {
  it('matches our model’s scoreTokens log-probs (temperature 1 and 0.7)', async () => {
    const [batch, seq] = [3, 10];
    const tokens = randomTokens(batch * seq, config.vocab, 1);
    const targets = randomTokens(batch * seq, config.vocab, 2);
    const ours = new CpuLanguageModel(config, model.params);
    const scale = Math.max(
      1,
      maxAbs(transformerForward(config, model.layout, model.params, tokens, batch, seq).logits),
    );
    for (const temperature of [1, 0.7]) {
      const reference = await ortReferenceLogprobs(
        policy,
        tokens,
        targets,
        batch,
        seq,
        temperature,
      );
      const scored = await ours.scoreTokens(tokens, targets, batch, seq, temperature);
      expect(reference).toHaveLength(batch * seq);
      expect(maxAbsDiff(reference, scored.logp)).toBeLessThanOrEqual(
        (2 * TOLERANCE * scale) / temperature,
      );
      expect(Math.max(...reference)).toBeLessThan(0); // log-probs of a 30-way softmax
    }
  });

  it('refuses bad tokens before running (op, field, index and range named)', async () => {
    const bad: [Int32Array, number, number, RegExp][] = [
      [new Int32Array(17), 1, 17, /seq must be an integer in \[1, 16\], got 17/],
      [new Int32Array(6), 2, 4, /tokens must have batch × seq = 8 ids, got 6/],
      [Int32Array.of(0, 5, 30, 1), 1, 4, /tokens index 2: id must be in \[0, 29\], got 30/],
      [Int32Array.of(-1), 1, 1, /tokens index 0: id must be in \[0, 29\], got -1/],
      [new Int32Array(0), 0, 0, /batch must be an integer in \[1, 1048576\], got 0/],
    ];
    for (const [tokens, batch, seq, says] of bad) {
      const error = await ortLogits(policy, tokens, batch, seq).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(OpInputError);
      expect((error as Error).message).toMatch(says);
    }
  });

  it('asks for the Node options instead of failing inside ORT', async () => {
    const bytes = exportTransformerOnnx(config, model.params, model.tokenizer);
    const error = await createOrtSession(bytes, { executionProviders: ['wasm'] }).catch((e) => e);
    expect(error).toBeInstanceOf(OnnxError);
    expect((error as Error).message).toMatch(
      /wasmPaths must be given in Node: pass ...nodeOrtOptions\(\)/,
    );
  });

  it('refuses a foreign model before onnxruntime sees it', async () => {
    const foreign = encodeModel({
      irVersion: 8,
      opsetImports: [{ domain: '', version: 17 }],
      graph: { name: 'g', nodes: [], initializers: [], inputs: [], outputs: [] },
      metadataProps: [],
    });
    const error = await createOrtSession(foreign, wasm).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OnnxError);
    expect((error as OnnxError).reason).toBe('foreign');
  });
});

describe('MLP actor-critic export on onnxruntime-web (wasm)', () => {
  const hidden = (activation: MlpConfig['activation']): MlpConfig => ({
    inputs: 6,
    hidden: [16, 8],
    outputs: 3,
    activation,
    outputGain: 0.01,
  });
  for (const activation of ['tanh', 'relu', 'gelu'] as const) {
    it(`${activation} actor, tanh critic with one hidden layer`, async () => {
      const critic: MlpConfig = {
        inputs: 6,
        hidden: [12],
        outputs: 1,
        activation: 'tanh',
        outputGain: 1,
      };
      const agent = new AgentLayout(hidden(activation), critic);
      const params = randomParams(agent.joint, 17);
      const session = await createOrtSession(exportActorCriticOnnx(agent, params), wasm);
      const batch = 7;
      const obs = Float32Array.from({ length: batch * 6 }, (_, i) => Math.cos(i * 1.3) * 3);
      const actor = new Float32Array(agent.actor.total);
      const criticParams = new Float32Array(agent.critic.total);
      agent.scatter(params, actor, criticParams);
      const logits = mlpForward(agent.actorConfig, agent.actor, actor, obs, batch).out;
      const values = mlpForward(critic, agent.critic, criticParams, obs, batch).out;
      const ort = await ortActorCritic(session, obs, batch);
      expect(maxAbsDiff(ort.logits, logits)).toBeLessThanOrEqual(
        TOLERANCE * Math.max(1, maxAbs(logits)),
      );
      expect(maxAbsDiff(ort.values, values)).toBeLessThanOrEqual(
        TOLERANCE * Math.max(1, maxAbs(values)),
      );
      expect(maxAbs(logits)).toBeGreaterThan(0.1); // a model whose outputs are not all ~0
      await expect(ortLogits(session, new Int32Array(1), 1, 1)).rejects.toThrow(
        /policy is a mlp-actor-critic session; this needs a transformer/,
      );
      await expect(ortActorCritic(session, obs, 3)).rejects.toThrow(
        /obs must have batch × 6 = 18 floats, got 42/,
      );
      await session.release();
    });
  }

  it('refuses networks that do not read the same observation', () => {
    const agent = new AgentLayout(hidden('tanh'), { ...hidden('tanh'), inputs: 5, outputs: 1 });
    expect(() => exportActorCriticOnnx(agent, new Float32Array(agent.joint.total))).toThrow(
      /critic.inputs must equal actor.inputs \(6\)/,
    );
  });
});
