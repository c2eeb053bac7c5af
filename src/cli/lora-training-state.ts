/**
 * The rest of a LoRA run's state beside its PEFT adapter, so that `npm run train -- --model …
 * --resume=DIR` goes on where a run left off (as a Hugging Face Trainer checkpoint keeps
 * optimizer.pt and trainer_state.json beside the adapter; PEFT ignores the extra file):
 *
 *   DIR/lab_training_state.safetensors
 *     exp_avg       F32 [n]  AdamW's first moment of every adapter value, in the 'lora' group's
 *                            layout (the order of the lab's adapter parameters)
 *     exp_avg_sq    F32 [n]  its second moment
 *     optimizer_stats F32 [4]  [gradNorm, clipScale, applied, step] of the last step
 *     __metadata__  { "format": "agent-rl-lab/lora-training-state", "version": "1",
 *                     "state": JSON of { base: { source, fingerprint }, seed,
 *                                        trainer: TrainerState, seconds } }
 *
 * The base model is named and fingerprinted (src/models/weights-fingerprint.ts), never copied: a
 * resume refuses another base. Reading checks the header, shapes and finite values; the trainer's
 * part is checked again by the trainer when it loads it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { OptimizerSnapshot } from '../models/language-model';
import { STATS_LENGTH } from '../models/optimizer';
import { readSafetensorsHeader, readTensorF32 } from '../models/hf/safetensors';
import { writeSafetensors } from '../models/hf/safetensors-writer';
import type { TrainerState } from '../rl/trainer';
import { FlagError } from './args';
import { openFileSource } from './file-source';

export const TRAINING_STATE_FILE = 'lab_training_state.safetensors';
const FORMAT = 'agent-rl-lab/lora-training-state';
const VERSION = '1';

export interface LoraTrainingState {
  base: { source: string; fingerprint: string };
  /** The run's --seed: its random streams go on from their draw counts under this seed. */
  seed: number;
  optimizer: OptimizerSnapshot;
  trainer: TrainerState;
  /** Seconds trained so far, over every run that led here. */
  seconds: number;
}

/** The file's bytes. */
export function trainingStateBytes(state: LoraTrainingState): Uint8Array<ArrayBuffer> {
  const { m, v, stats } = state.optimizer;
  const { base, seed, trainer, seconds } = state;
  const json = JSON.stringify({ base, seed, trainer, seconds });
  return writeSafetensors(
    [
      { name: 'exp_avg', shape: [m.length], dtype: 'F32', data: m },
      { name: 'exp_avg_sq', shape: [v.length], dtype: 'F32', data: v },
      { name: 'optimizer_stats', shape: [stats.length], dtype: 'F32', data: stats },
    ],
    { format: FORMAT, version: VERSION, state: json },
  );
}

/**
 * The state in `dir` for adapters of `floats` values; FlagErrors name --`flag`, the file and
 * the field.
 */
export async function readTrainingState(
  dir: string,
  floats: number,
  flag = 'resume',
): Promise<LoraTrainingState> {
  const path = join(dir, TRAINING_STATE_FILE);
  const fail = (what: string) =>
    new FlagError(flag, `--${flag}=${dir}: ${TRAINING_STATE_FILE}: ${what}`);
  if (!existsSync(path)) {
    throw fail('missing (a run saves it beside its adapter with --adapter-out)');
  }
  const source = await openFileSource(path);
  try {
    const header = await readSafetensorsHeader(source).catch((error: unknown) => {
      throw fail(error instanceof Error ? error.message : String(error));
    });
    if (header.metadata.format !== FORMAT || header.metadata.version !== VERSION) {
      throw fail(`format must be ${FORMAT} version ${VERSION}`);
    }
    const read = async (name: string, length: number): Promise<Float32Array> => {
      const tensor = header.byName.get(name);
      if (
        !tensor ||
        tensor.dtype !== 'F32' ||
        tensor.size !== length ||
        tensor.shape.length !== 1
      ) {
        throw fail(`${name} must be an F32 tensor of shape [${length}] (the adapters' values)`);
      }
      const out = new Float32Array(length);
      await readTensorF32(header, tensor, out);
      const bad = out.findIndex((x) => !Number.isFinite(x));
      if (bad >= 0) throw fail(`${name}[${bad}] is not finite`);
      return out;
    };
    const optimizer = {
      m: await read('exp_avg', floats),
      v: await read('exp_avg_sq', floats),
      stats: await read('optimizer_stats', STATS_LENGTH),
    };
    let parsed: unknown;
    try {
      parsed = JSON.parse(header.metadata.state ?? '');
    } catch {
      throw fail('__metadata__.state is not JSON');
    }
    const state = parsed as Partial<LoraTrainingState> | null;
    const base = state?.base;
    if (typeof base?.source !== 'string' || typeof base.fingerprint !== 'string') {
      throw fail('__metadata__.state.base must name the source and fingerprint');
    }
    const trainer = state?.trainer;
    if (typeof trainer !== 'object' || trainer === null || !Number.isInteger(trainer.step)) {
      throw fail("__metadata__.state.trainer must be the trainer's state");
    }
    const seed = state?.seed;
    if (!Number.isInteger(seed)) throw fail('__metadata__.state.seed must be a whole number');
    const seconds = state?.seconds;
    if (typeof seconds !== 'number' || !(seconds >= 0)) {
      throw fail('__metadata__.state.seconds must be a number ≥ 0');
    }
    return {
      base: { source: base.source, fingerprint: base.fingerprint },
      seed: seed as number,
      optimizer,
      trainer,
      seconds,
    };
  } finally {
    await source.close();
  }
}
