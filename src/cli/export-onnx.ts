/**
 * `npm run export:onnx -- --in=model.ckpt [--out=model.onnx] [--verify]`
 *
 * A checkpoint file (a transformer from `npm run sft` / the lab, or an MLP actor-critic) → an ONNX
 * model (opset 17) with the weights as initializers and config + tokenizer in its metadata, for
 * onnxruntime, Netron or PyTorch tooling. --out defaults to the input path with `.onnx`.
 * --verify runs the export in onnxruntime-web (wasm) on a few seeded inputs and prints the
 * largest difference from our CPU forward; it fails (exit code 1) past the tolerance the tests use.
 * --verify is a switch (--verify=yes is refused, not read as "off"); the output's folder is
 * created, and checked before the export (never the --in file itself: cli/output-file.ts); a JSON
 * file (a run file) given to --in is named as one, and a damaged checkpoint in one line naming --in.
 */
import { decodeCheckpoint } from '../models/checkpoint';
import { loadLanguageModel, TRANSFORMER_KIND } from '../models/lm-checkpoint';
import { ACTOR_CRITIC_KIND, loadActorCritic } from '../models/mlp-checkpoint';
import { mlpForward } from '../models/mlp-cpu';
import type { AgentLayout } from '../models/mlp-policy';
import type { TransformerConfig } from '../models/transformer-config';
import { transformerForward } from '../models/transformer-cpu';
import { transformerLayout } from '../models/transformer-params';
import { exportActorCriticOnnx } from '../onnx/export-mlp';
import { exportTransformerOnnx } from '../onnx/export-transformer';
import { nodeOrtOptions } from '../onnx/ort-node';
import { createOrtSession, ortActorCritic, ortForward } from '../onnx/ort-reference';
import { maxAbsDiff } from '../util/max-abs-diff';
import { seededRandom } from '../util/random';
import { shownText } from '../util/shown-text';
import { CliArgs, FlagError } from './args';
import { modelFileError, readModelFile } from './model-file';
import { prepareOutput, writeAtomically } from './output-file';

/** max |ORT − CPU| ≤ VERIFY_TOLERANCE · max(1, max |output|), as in tests/onnx. */
export const VERIFY_TOLERANCE = 1e-4;

export async function main(argv: string[]): Promise<number> {
  const args = new CliArgs(argv);
  const input = args.optional('in');
  const out = args.optional('out');
  const verify = args.flag('verify');
  args.checkAllUsed();
  if (!input)
    throw new FlagError('in', '--in: the checkpoint to export is required (--in=model.ckpt)');
  const target = prepareOutput(out ?? `${input.replace(/\.[^./\\]*$/, '')}.onnx`, 'out', [
    { flag: 'in', path: input },
  ]);

  const bytes = readModelFile(input, 'in', 'a checkpoint (.ckpt, from npm run sft or the lab)');
  let exported: { onnx: Uint8Array; check: () => Promise<number> };
  try {
    exported = exportModel(bytes, input);
  } catch (error) {
    // A truncated or damaged checkpoint is the user's input: one line naming --in, no stack.
    throw modelFileError(error, 'in', input);
  }
  const { onnx, check } = exported;
  writeAtomically(target, onnx);
  console.log(`wrote ${target} (${onnx.length} bytes, opset 17)`);
  if (!verify) return 0;
  const relative = await check();
  const ok = relative <= VERIFY_TOLERANCE;
  console.log(
    `verify: onnxruntime-web (wasm) vs CPU forward, max |diff| / scale = ${relative.toExponential(2)} ` +
      `(tolerance ${VERIFY_TOLERANCE}) ${ok ? 'ok' : 'FAILED'}`,
  );
  return ok ? 0 : 1;
}

/** The checkpoint `bytes` (the file `input`) as ONNX, and the check --verify runs on it. */
function exportModel(
  bytes: Uint8Array,
  input: string,
): { onnx: Uint8Array; check: () => Promise<number> } {
  // Header only first (which kind of model); each loader then checks the file in full.
  const kind = decodeCheckpoint(bytes).model.kind;
  const meta = { source: input.split(/[/\\]/).pop() ?? input };
  if (kind === TRANSFORMER_KIND) {
    const loaded = loadLanguageModel(bytes);
    if (!loaded.tokenizer) {
      throw new FlagError(
        'in',
        `--in=${shownText(input, 200)}: the checkpoint has no tokenizer; the ONNX export needs one`,
      );
    }
    const onnx = exportTransformerOnnx(loaded.config, loaded.params, loaded.tokenizer, {
      meta: { ...meta, step: loaded.checkpoint.step, ...(loaded.checkpoint.meta ?? {}) },
    });
    console.log(`transformer ${JSON.stringify(loaded.config)}, step ${loaded.checkpoint.step}`);
    return { onnx, check: () => verifyTransformer(onnx, loaded.config, loaded.params) };
  }
  if (kind === ACTOR_CRITIC_KIND) {
    const loaded = loadActorCritic(bytes);
    const onnx = exportActorCriticOnnx(loaded.agent, loaded.params, { meta });
    console.log(
      `actor-critic actor ${JSON.stringify(loaded.agent.actorConfig)}, ` +
        `critic ${JSON.stringify(loaded.agent.criticConfig)}`,
    );
    return { onnx, check: () => verifyActorCritic(onnx, loaded.agent, loaded.params) };
  }
  throw new FlagError(
    'in',
    `--in=${shownText(input, 200)}: model kind "${shownText(kind)}" has no ONNX export ` +
      `(only ${TRANSFORMER_KIND}, ${ACTOR_CRITIC_KIND})`,
  );
}

/** Largest |ORT − CPU| / max(1, max |CPU|) over logits (and values) of a few random batches. */
async function verifyTransformer(
  onnx: Uint8Array,
  config: TransformerConfig,
  params: Float32Array,
): Promise<number> {
  const session = await createOrtSession(onnx, {
    executionProviders: ['wasm'],
    ...nodeOrtOptions(),
  });
  const layout = transformerLayout(config);
  const random = seededRandom(1);
  let worst = 0;
  try {
    for (const [batch, seq] of [
      [1, 1],
      [2, Math.max(1, config.context >> 1)],
      [1, config.context],
    ] as const) {
      const tokens = Int32Array.from({ length: batch * seq }, () =>
        Math.floor(random() * config.vocab),
      );
      const cpu = transformerForward(config, layout, params, tokens, batch, seq);
      const ort = await ortForward(session, tokens, batch, seq);
      worst = Math.max(worst, relativeDiff(ort.logits, cpu.logits));
      if (cpu.values && ort.values) worst = Math.max(worst, relativeDiff(ort.values, cpu.values));
    }
  } finally {
    await session.release();
  }
  return worst;
}

async function verifyActorCritic(
  onnx: Uint8Array,
  agent: AgentLayout,
  params: Float32Array,
): Promise<number> {
  const session = await createOrtSession(onnx, {
    executionProviders: ['wasm'],
    ...nodeOrtOptions(),
  });
  const batch = 8;
  const random = seededRandom(1);
  const obs = Float32Array.from(
    { length: batch * agent.actorConfig.inputs },
    () => (random() * 2 - 1) * 2,
  );
  const actor = new Float32Array(agent.actor.total);
  const critic = new Float32Array(agent.critic.total);
  agent.scatter(params, actor, critic);
  try {
    const ort = await ortActorCritic(session, obs, batch);
    const logits = mlpForward(agent.actorConfig, agent.actor, actor, obs, batch).out;
    const values = mlpForward(agent.criticConfig, agent.critic, critic, obs, batch).out;
    return Math.max(relativeDiff(ort.logits, logits), relativeDiff(ort.values, values));
  } finally {
    await session.release();
  }
}

function relativeDiff(a: Float32Array, b: Float32Array): number {
  let scale = 1;
  for (const v of b) scale = Math.max(scale, Math.abs(v));
  return maxAbsDiff(a, b) / scale;
}
