/**
 * A test-only loader of the fixture models in tests/fixtures/hf/: config.json through
 * fromHfConfig, and every tensor of the safetensors file (or of the shards named by
 * model.safetensors.index.json) as f32 under its Hugging Face name. The lab's own weight loader
 * (folders the user picks, downloads, f16 storage) lives in src/models/hf; this one only reads
 * files from disk for the parity tests.
 */
import { existsSync, readFileSync } from 'node:fs';
import { fromHfConfig } from '../../../src/models/hf/hf-config';
import { bytesSource } from '../../../src/models/hf/random-access-source';
import { readSafetensorsHeader, tensorToF32 } from '../../../src/models/hf/safetensors';
import type { ModelSpec } from '../../../src/models/model-spec';

export const FIXTURE_ROOT = new URL('../../fixtures/hf/', import.meta.url);

export interface FixtureModel {
  spec: ModelSpec;
  weights: Map<string, Float32Array>;
}

/** The fixture in tests/fixtures/hf/<name>/. */
export async function loadFixture(name: string): Promise<FixtureModel> {
  const dir = new URL(`${name}/`, FIXTURE_ROOT);
  const spec = fromHfConfig(JSON.parse(readFileSync(new URL('config.json', dir), 'utf8')));
  const index = new URL('model.safetensors.index.json', dir);
  const files = existsSync(index)
    ? [
        ...new Set(
          Object.values(
            (JSON.parse(readFileSync(index, 'utf8')) as { weight_map: Record<string, string> })
              .weight_map,
          ),
        ),
      ]
    : ['model.safetensors'];
  const weights = new Map<string, Float32Array>();
  for (const file of files) {
    const bytes = new Uint8Array(readFileSync(new URL(file, dir)));
    const header = await readSafetensorsHeader(bytesSource(bytes, file));
    for (const tensor of header.tensors) {
      weights.set(tensor.name, await tensorToF32(header, tensor.name));
    }
  }
  return { spec, weights };
}

/** golden.json of the fixture (schema: tests/fixtures/hf/README.md). */
export interface Golden {
  sequences: { ids: number[]; logprobs: number[]; logits: number[][] }[];
  long_sequence: { ids: number[]; logprobs: number[]; last_logits: number[] };
  intermediates: Record<string, number[][]> & { ids: number[] };
  greedy: { prompt_ids: number[]; ids: number[]; logprobs: number[] };
}

export function readGolden(name: string): Golden {
  return JSON.parse(readFileSync(new URL(`${name}/golden.json`, FIXTURE_ROOT), 'utf8')) as Golden;
}
