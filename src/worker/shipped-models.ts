/**
 * The shipped starting checkpoints (public/models/, built by `npm run build:models`) as the run
 * catalog lists them, and how a worker reads one. The manifest (src/models/shipped-manifest.json)
 * is bundled (a few KB); the weights (about 0.4 MB each) are fetched only when a run starts from
 * them.
 */
import manifest from '../models/shipped-manifest.json';
import type { Settings, ShippedModelInfo } from './run-protocol';

export const SHIPPED_MODELS: readonly ShippedModelInfo[] = manifest.models.map((m) => ({
  name: m.name,
  task: m.task,
  // JSON's union of option objects has optional keys; the defined ones are the options.
  taskOptions: definedOptions(m.taskOptions),
  context: m.config.context,
  // Every SFT step: those on its own task first (ownFirstSteps), when the recipe has them.
  sftSteps: m.recipe.steps + ('ownFirstSteps' in m.recipe ? Number(m.recipe.ownFirstSteps) : 0),
  successRate: m.successRate,
  ...('sampled' in m && m.sampled ? { sampled: { ...m.sampled } } : {}),
  file: m.checkpoint.file,
  ...('warmUp' in m && Array.isArray(m.warmUp)
    ? {
        warmUp: m.warmUp.map((part) => ({
          task: part.task,
          taskOptions: definedOptions(part.taskOptions),
          successRate: part.successRate,
        })),
      }
    : {}),
}));

export function shippedModel(name: string): ShippedModelInfo | undefined {
  return SHIPPED_MODELS.find((m) => m.name === name);
}

/** A shipped checkpoint's bytes, from the page's own server (Vite serves public/ at its base). */
export async function fetchShippedModel(file: string): Promise<Uint8Array> {
  const url = new URL(`${import.meta.env.BASE_URL}models/${file}`, location.href);
  const response = await fetch(url);
  if (!response.ok)
    throw new Error(`GET ${url.pathname}: ${response.status} ${response.statusText}`);
  return new Uint8Array(await response.arrayBuffer());
}

function definedOptions(options: Record<string, Settings[string] | undefined>): Settings {
  const out: Settings = {};
  for (const [key, value] of Object.entries(options)) if (value !== undefined) out[key] = value;
  return out;
}
