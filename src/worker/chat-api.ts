/** The CPU chat worker's API (chat-protocol.ts): in-process in tests, exposed by chat.worker.ts. */
import { llamaGenerate } from '../models/hf/llama-cpu-generate';
import type { LlamaCpuModel } from '../models/hf/llama-cpu-weights';
import { llamaModelFromBase } from '../models/hf/llama-lm-cpu';
import type { ChatWorkerApi } from './chat-protocol';

export function createChatWorkerApi(): ChatWorkerApi {
  let model: LlamaCpuModel | undefined;
  return {
    async open(spec, base) {
      model = undefined; // a refused base leaves no model half-replaced
      model = llamaModelFromBase(spec, base);
    },
    async generate(prompts, sampling) {
      if (!model) throw new Error('chat worker: open() a model first');
      return llamaGenerate(model, prompts, sampling);
    },
  };
}
