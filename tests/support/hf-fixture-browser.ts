/**
 * The tests/fixtures/hf/ models for tests that run in both GPU layers (Node + Dawn and Chromium):
 * JSON through Vite's import, the safetensors bytes through their URL (fetched in the browser,
 * read from disk in Node). Every tensor comes back as f32 under its Hugging Face name, like
 * tests/models/hf/load-fixture.ts, which reads from disk only. A PEFT adapter folder
 * (adapter_config.json, adapter_model.safetensors) is read by the lab's PEFT reader.
 */
import { fromHfConfig } from '../../src/models/hf/hf-config';
import type { LlamaLora } from '../../src/models/hf/llama-lora';
import {
  ADAPTER_CONFIG_FILE,
  ADAPTER_WEIGHTS_FILE,
  type PeftLoraConfig,
  readPeftAdapter,
} from '../../src/models/hf/peft-adapter';
import { bytesSource } from '../../src/models/hf/random-access-source';
import { readSafetensorsHeader, tensorToF32 } from '../../src/models/hf/safetensors';
import type { ModelSpec } from '../../src/models/model-spec';
import type { Golden } from '../models/hf/load-fixture';

const jsonFiles = import.meta.glob<unknown>('../fixtures/hf/*/*.json', {
  eager: true,
  import: 'default',
});
const weightUrls = import.meta.glob<string>('../fixtures/hf/*/*.safetensors', {
  eager: true,
  query: '?url',
  import: 'default',
});

async function bytesAt(url: string): Promise<Uint8Array> {
  if (typeof document !== 'undefined') {
    const response = await fetch(url);
    if (!response.ok) throw new Error(`fixture ${url}: HTTP ${response.status}`);
    return new Uint8Array(await response.arrayBuffer());
  }
  // Node: the URL is the file's path from the project root.
  const fs = 'node:fs';
  const { readFileSync } = (await import(/* @vite-ignore */ fs)) as typeof import('node:fs');
  return new Uint8Array(readFileSync(new URL(`../..${url}`, import.meta.url)));
}

export interface BrowserFixture {
  spec: ModelSpec;
  weights: Map<string, Float32Array>;
  golden: Golden & { f16_storage?: { sequences: { ids: number[]; logprobs: number[] }[] } };
}

/** The fixture in tests/fixtures/hf/<name>/, every tensor as f32. */
export async function loadBrowserFixture(name: string): Promise<BrowserFixture> {
  const json = (file: string) => {
    const value = jsonFiles[`../fixtures/hf/${name}/${file}`];
    if (value === undefined) throw new Error(`no fixture file ${name}/${file}`);
    return value;
  };
  const spec = fromHfConfig(json('config.json'));
  const weights = new Map<string, Float32Array>();
  const prefix = `../fixtures/hf/${name}/`;
  for (const [path, url] of Object.entries(weightUrls)) {
    if (!path.startsWith(prefix)) continue;
    const source = bytesSource(await bytesAt(url), path.slice(prefix.length));
    const header = await readSafetensorsHeader(source);
    for (const tensor of header.tensors) {
      weights.set(tensor.name, await tensorToF32(header, tensor.name));
    }
  }
  return { spec, weights, golden: json('golden.json') as BrowserFixture['golden'] };
}

export interface BrowserAdapterFixture {
  config: PeftLoraConfig;
  lora: LlamaLora;
  /** golden.json of the adapter folder, as written by its reference script. */
  golden: unknown;
}

/** The PEFT adapter in tests/fixtures/hf/<name>/ read for `spec` by the lab's PEFT reader. */
export async function loadBrowserAdapter(
  name: string,
  spec: ModelSpec,
): Promise<BrowserAdapterFixture> {
  const prefix = `../fixtures/hf/${name}/`;
  const config = jsonFiles[`${prefix}${ADAPTER_CONFIG_FILE}`];
  const url = weightUrls[`${prefix}${ADAPTER_WEIGHTS_FILE}`];
  if (config === undefined || url === undefined) throw new Error(`no adapter fixture ${name}`);
  const source = bytesSource(await bytesAt(url), ADAPTER_WEIGHTS_FILE);
  const adapter = await readPeftAdapter(JSON.stringify(config), source, spec);
  return { ...adapter, golden: jsonFiles[`${prefix}golden.json`] };
}
