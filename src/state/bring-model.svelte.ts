/**
 * The state of "Bring a model" (#/models): where the files came from (picked, a folder, dropped,
 * or downloaded from the Hub), what the model is and whether it fits, loading it (GPU f16 when
 * WebGPU is available, the CPU otherwise), and the chat. Loading runs on the page, which awaits
 * between tensors so that its progress bar moves; on the CPU the weights then move to a chat
 * worker (src/worker/chat-protocol.ts), so that computing an answer never holds the page. On the
 * GPU the page only records and submits work.
 */
import { acquireForChoice, type BackendChoice } from '../gpu/backend-choice';
import type { GpuContext } from '../gpu/context';
import type { CheckpointFiles } from '../models/hf/hf-checkpoint';
import { HfTokenizer } from '../models/hf/hf-tokenizer';
import { downloadModel } from '../models/hf/hub';
import type { DownloadProgress } from '../models/hf/hub-download';
import type { LlamaGenerated } from '../models/hf/llama-cpu-generate';
import { llamaGenerateGpu } from '../models/hf/llama-gpu-generate';
import { loadLlamaGpuWeights, type LlamaGpuWeights } from '../models/hf/llama-gpu-weights';
import { openCacheStorage } from '../models/hf/model-cache';
import { filesFromBlobs, readHfModelConfig, type HfModelConfig } from '../models/hf/picked-files';
import { errorText } from '../util/error-text';
import { startChatWorker, type ChatWorkerHandle } from '../worker/client';
import { transfer } from 'comlink';
import { answerRoom, generatedTokens, promptIds, type ChatTurn } from './chat-turns';
import type { BufferLimits } from '../models/hf/memory-plan';
import { chatContext, checkFit, type Backend, type Fit } from './model-fit';
import {
  loadCpuBase,
  readTokenizerFiles,
  storedDtypes,
  trainingInputsFrom,
  type TrainingInputs,
} from './model-load';
import { fetchShippedChatFiles } from './shipped-chat';

export interface Progress {
  label: string;
  done: number;
  total: number | undefined;
}

export interface Sampling {
  system: string;
  temperature: number;
  topK: number;
  topP: number;
  maxTokens: number;
  seed: number;
}

type Loaded =
  | { kind: 'cpu'; worker: ChatWorkerHandle }
  | { kind: 'webgpu'; gpu: GpuContext; weights: LlamaGpuWeights };

export class BringModelState {
  /** Where the files came from: a folder name, "3 files" or a Hub id. */
  source = $state<string | undefined>(undefined);
  busy = $state<'reading' | 'downloading' | 'loading' | 'generating' | undefined>(undefined);
  error = $state<string | undefined>(undefined);
  progress = $state.raw<Progress | undefined>(undefined);
  config = $state.raw<HfModelConfig | undefined>(undefined);
  /** The dtypes the safetensors files store, e.g. ['BF16']. */
  dtypes = $state.raw<string[]>([]);
  fit = $state.raw<Fit | undefined>(undefined);
  backend = $state<Backend | undefined>(undefined);
  /** Why the backend is what it is (the adapter, or why not WebGPU). */
  backendNote = $state('');
  loadedNote = $state<string | undefined>(undefined);
  turns = $state.raw<ChatTurn[]>([]);
  sampling = $state<Sampling>({
    system: '',
    temperature: 0.7,
    topK: 40,
    topP: 0.95,
    maxTokens: 48,
    seed: 0,
  });

  private files: CheckpointFiles | undefined;
  private tokenizer = $state.raw<HfTokenizer | undefined>(undefined);
  private loaded = $state.raw<Loaded | undefined>(undefined);
  private gpu: GpuContext | undefined;
  private backendReady: Promise<void>;
  private readonly startChatWorker: () => ChatWorkerHandle;

  /** `startChatWorker`: the CPU chat's worker; default a Web Worker (tests give in-process ones). */
  constructor(choice: BackendChoice, options: { startChatWorker?: () => ChatWorkerHandle } = {}) {
    this.backendReady = this.findBackend(choice);
    this.startChatWorker = options.startChatWorker ?? startChatWorker;
  }

  get ready(): boolean {
    return this.loaded !== undefined && this.tokenizer !== undefined;
  }

  /** The loaded tokenizer (the LoRA panel sizes a training step's prompts with it). */
  get loadedTokenizer(): HfTokenizer | undefined {
    return this.tokenizer;
  }

  /** The WebGPU device's buffer limits, where the model runs on one. */
  get gpuLimits(): BufferLimits | undefined {
    return this.gpu?.summary.limits;
  }

  /** The tokenizer has a chat template and an end-of-turn token: tasks can be asked as chats. */
  get canChat(): boolean {
    return (
      this.tokenizer?.endOfTurn !== undefined && this.tokenizer.applyChatTemplate !== undefined
    );
  }

  private async findBackend(choice: BackendChoice): Promise<void> {
    if (choice === 'cpu') {
      this.backend = 'cpu';
      this.backendNote = 'CPU (?backend=cpu)';
      return;
    }
    // A real model's embedding passes WebGPU's default 128 MiB binding (Qwen2.5-0.5B's is
    // 272 MB in f16): ask for what the adapter offers.
    const found = await acquireForChoice(choice, '?backend=webgpu', { limits: 'adapter' });
    if (found.ok) {
      this.gpu = found.gpu;
      this.backend = 'webgpu';
      const s = found.gpu.summary;
      this.backendNote = `WebGPU: ${s.vendor || 'unknown vendor'} ${s.architecture || s.device}`;
    } else {
      this.backend = 'cpu';
      this.backendNote = `CPU — no WebGPU: ${found.reason.message}`;
    }
  }

  /** Files picked, from a folder or dropped. */
  async pick(files: File[]): Promise<void> {
    if (files.length === 0) return;
    const folder = files[0]!.webkitRelativePath.split('/')[0];
    await this.open(folder || `${files.length} files`, () => filesFromBlobs(files));
  }

  /** One of the lab's own chat models (public/models/hf/), fetched from the page's server. */
  async openShipped(name: string): Promise<void> {
    this.reset();
    this.busy = 'reading';
    try {
      const files = await fetchShippedChatFiles(name);
      this.busy = undefined;
      await this.open(`${name} (the lab's own)`, () => filesFromBlobs(files));
    } catch (error) {
      this.error = errorText(error);
      this.busy = undefined;
    }
  }

  /** Downloads (or takes from the browser's cache) the Hub model `id`. */
  async download(id: string): Promise<void> {
    this.reset();
    this.busy = 'downloading';
    try {
      const cache = await openCacheStorage();
      const blobs = await downloadModel(id.trim(), {
        ...(cache ? { cache } : {}),
        onProgress: (p: DownloadProgress) =>
          (this.progress = { label: `Downloading ${p.file}`, done: p.loaded, total: p.total }),
      });
      this.busy = undefined;
      await this.open(id.trim(), () => filesFromBlobs(blobs));
    } catch (error) {
      this.error = errorText(error);
      this.busy = undefined;
    }
  }

  private reset(): void {
    this.release();
    this.error = undefined;
    this.config = undefined;
    this.fit = undefined;
    this.dtypes = [];
    this.turns = [];
    this.progress = undefined;
    this.loadedNote = undefined;
    this.tokenizer = undefined;
  }

  /** Reads the config, the tensors' dtypes and the tokenizer, and judges the fit. */
  private async open(source: string, make: () => CheckpointFiles): Promise<void> {
    this.reset();
    this.source = source;
    this.busy = 'reading';
    try {
      const files = make();
      this.files = files;
      const config = await readHfModelConfig(files);
      this.config = config;
      this.dtypes = await storedDtypes(files);
      await this.backendReady;
      this.fit = checkFit({
        spec: config.spec,
        backend: this.backend!,
        ...(this.gpu ? { limits: this.gpu.summary.limits } : {}),
      });
      this.tokenizer = await HfTokenizer.load(
        source.slice(0, 300),
        await readTokenizerFiles(files),
      );
    } catch (error) {
      this.error = errorText(error);
    } finally {
      this.busy = undefined;
    }
  }

  /** Loads the weights on the backend the fit was judged for. */
  async load(): Promise<void> {
    const { files, config, fit } = this;
    if (!files || !config || !fit?.ok) return;
    this.release();
    this.busy = 'loading';
    this.error = undefined;
    const onTensor = (done: number, total: number) =>
      (this.progress = { label: 'Loading tensors', done, total });
    const started = performance.now();
    try {
      if (this.backend === 'webgpu' && this.gpu) {
        const weights = await loadLlamaGpuWeights(this.gpu, config.spec, files, {
          storage: 'f16',
          onTensor,
        });
        this.loaded = { kind: 'webgpu', gpu: this.gpu, weights };
      } else {
        const base = await loadCpuBase(config.spec, files, onTensor);
        const worker = this.startChatWorker();
        try {
          await worker.api.open(config.spec, transfer(base, [base.buffer]));
        } catch (error) {
          worker.terminate();
          throw error;
        }
        this.loaded = { kind: 'cpu', worker };
      }
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      this.loadedNote =
        this.loaded.kind === 'webgpu'
          ? `Loaded on the GPU as f16 in ${seconds} s`
          : `Loaded on the CPU as f32 in ${seconds} s`;
    } catch (error) {
      this.error = errorText(error);
    } finally {
      this.busy = undefined;
    }
  }

  /** Sends `message` and generates the answer (shown when done, token by token). */
  async send(message: string): Promise<void> {
    const { tokenizer, loaded, config } = this;
    if (!tokenizer || !loaded || !config || message.trim() === '') return;
    this.error = undefined;
    const turns: ChatTurn[] = [...this.turns, { role: 'user', content: message }];
    this.turns = turns;
    this.busy = 'generating';
    try {
      const s = this.sampling;
      const prompt = promptIds(tokenizer, turns, s.system);
      const options = {
        maxNewTokens: answerRoom(prompt.length, s.maxTokens, chatContext(config.spec)),
        temperature: s.temperature,
        topK: s.topK,
        topP: s.topP,
        seed: s.seed,
        stopIds: tokenizer.stopIds,
      };
      const out: LlamaGenerated =
        loaded.kind === 'webgpu'
          ? await llamaGenerateGpu(loaded.gpu, loaded.weights, [prompt], options)
          : await loaded.worker.api.generate([prompt], options);
      const ids = out.tokens[0]!;
      this.turns = [
        ...turns,
        {
          role: 'assistant',
          content: tokenizer.decode(ids, { skipSpecial: true }),
          tokens: generatedTokens(tokenizer, ids, out.logprobs[0]!),
          finish: out.finish[0]!,
        },
      ];
      this.sampling.seed = s.seed + 1;
    } catch (error) {
      this.error = errorText(error);
    } finally {
      this.busy = undefined;
    }
  }

  clearChat(): void {
    this.turns = [];
  }

  /**
   * What a LoRA run needs (src/state/lora-train.svelte.ts): the weights read again as f32 (the
   * loaded copy may be f16 on the GPU, and the worker takes its own), the tokenizer's files.
   */
  async trainingInputs(
    onTensor: (done: number, total: number) => void,
  ): Promise<TrainingInputs | undefined> {
    const { files, config, source } = this;
    if (!files || !config || !source || !this.tokenizer) return undefined;
    return trainingInputsFrom(source.slice(0, 300), config.spec, files, onTensor);
  }

  /** Frees the loaded weights (GPU buffers back to the pool). */
  release(): void {
    if (this.loaded?.kind === 'webgpu') this.loaded.weights.release();
    if (this.loaded?.kind === 'cpu') this.loaded.worker.terminate();
    this.loaded = undefined;
  }
}
