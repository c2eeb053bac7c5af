/**
 * The shipped starting checkpoints (public/models/, built by `npm run build:models`) for the Node
 * tests: the manifest, each file's bytes, and a CPU model of an entry. Node only (node:fs).
 */
import { readFileSync } from 'node:fs';
import { SHIPPED_MANIFEST, type Manifest, type ManifestEntry } from '../../scripts/build-models';
import { createTokenTask } from '../../src/agents/token-task-registry';
import { loadLanguageModel, type LoadedLanguageModel } from '../../src/models/lm-checkpoint';
import { CharTokenizer } from '../../src/models/tokenizer';

const MODELS_DIR = new URL('../../public/models/', import.meta.url);

export function readShipped(file: string): Uint8Array {
  return new Uint8Array(readFileSync(new URL(file, MODELS_DIR)));
}

export function shippedManifest(): Manifest {
  const file = new URL(`../../${SHIPPED_MANIFEST}`, import.meta.url);
  return JSON.parse(readFileSync(file, 'utf8')) as Manifest;
}

export function shippedEntry(name: string): ManifestEntry {
  const entry = shippedManifest().models.find((m) => m.name === name);
  if (!entry) throw new Error(`${SHIPPED_MANIFEST} has no model "${name}"`);
  return entry;
}

/** An entry's checkpoint loaded, its task built from the recorded options, its tokenizer. */
export function loadShipped(name: string): LoadedLanguageModel & {
  entry: ManifestEntry;
  task: ReturnType<typeof createTokenTask>;
  tokenizerObject: CharTokenizer;
} {
  const entry = shippedEntry(name);
  const loaded = loadLanguageModel(readShipped(entry.checkpoint.file));
  if (!loaded.tokenizer) throw new Error(`${entry.checkpoint.file} has no tokenizer`);
  return {
    ...loaded,
    entry,
    task: createTokenTask(entry.task, entry.taskOptions),
    tokenizerObject: CharTokenizer.fromSpec(loaded.tokenizer),
  };
}
