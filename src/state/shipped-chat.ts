/**
 * The lab's own chat models in Hugging Face's layout (public/models/hf/, listed under `hfModels`
 * in src/models/shipped-manifest.json, built by `npm run build:models -- --only=tiny-chat`): their
 * files fetched from the page's own server, so that "Bring a model" and the lessons can start from
 * one without a download from the Hub or a file picker. Each file's size is checked against the
 * manifest, so a cut or stale copy is refused by name.
 */
import { filesFromBlobs, readHfModelConfig } from '../models/hf/picked-files';
import manifest from '../models/shipped-manifest.json';
import { trainingInputsFrom, type TrainingInputs } from './model-load';

export interface ShippedChatModel {
  name: string;
  /** The task it was warmed up on, and its options (the LoRA lesson trains on the same). */
  task: string;
  taskOptions: Record<string, unknown>;
  parameters: number;
  bytes: number;
}

export const SHIPPED_CHAT_MODELS: readonly ShippedChatModel[] = (manifest.hfModels ?? []).map(
  (m) => ({
    name: m.name,
    task: m.task,
    taskOptions: { ...m.taskOptions },
    parameters: m.parameters,
    bytes: m.files.reduce((n, f) => n + f.bytes, 0),
  }),
);

/** The model's files as File objects named as in its folder, fetched from public/models/hf/. */
export async function fetchShippedChatFiles(name: string): Promise<File[]> {
  const entry = (manifest.hfModels ?? []).find((m) => m.name === name);
  if (!entry) throw new Error(`no shipped chat model is called ${JSON.stringify(name)}`);
  return Promise.all(
    entry.files.map(async ({ file, bytes }) => {
      const url = new URL(
        `${import.meta.env.BASE_URL}models/hf/${entry.dir}/${file}`,
        location.href,
      );
      const response = await fetch(url);
      if (!response.ok) {
        throw new Error(`GET ${url.pathname}: ${response.status} ${response.statusText}`);
      }
      const blob = await response.blob();
      if (blob.size !== bytes) {
        throw new Error(`${entry.dir}/${file} is ${blob.size} bytes; the manifest says ${bytes}`);
      }
      return new File([blob], file);
    }),
  );
}

/** A shipped chat model as a LoRA run's inputs: its f32 weights and tokenizer files. */
export async function shippedTrainingInputs(
  name: string,
  onTensor: (done: number, total: number) => void,
): Promise<TrainingInputs> {
  const files = filesFromBlobs(await fetchShippedChatFiles(name));
  const { spec } = await readHfModelConfig(files);
  return trainingInputsFrom(name, spec, files, onTensor);
}
