/// <reference lib="webworker" />
/** A LoRA worker: one LoRA-GRPO run on a brought model (lora-protocol.ts). */
import { expose, transfer } from 'comlink';
import { chatTokenizer } from '../agents/chat-task';
import { createTokenTask } from '../agents/token-task-registry';
import { HfTokenizer } from '../models/hf/hf-tokenizer';
import { LoraGrpoSession, loraGrpoConfig } from '../rl/lora-grpo-session';
import { loraGpuPolicy } from './lora-gpu';
import { LORA_MODULES } from '../models/hf/llama-lora';
import { promptLengthBound } from '../agents/prompt-tokens';
import type { LoraRunReport, LoraRunRequest, LoraWorkerApi } from './lora-protocol';

let session: LoraGrpoSession | undefined;
let source = '';
let updates = 0;
let seconds = 0;

function opened(): LoraGrpoSession {
  if (!session) throw new Error('lora worker: open() a run first');
  return session;
}

const api: LoraWorkerApi = {
  async open(request: LoraRunRequest) {
    const tokenizer = chatTokenizer(await HfTokenizer.load(request.source, request.tokenizer));
    source = request.source;
    session?.dispose();
    session = undefined;
    const task = createTokenTask(request.task.name, request.task.options);
    const lora = { rank: request.rank, alpha: request.alpha, targets: [...LORA_MODULES] };
    const { policy, device } =
      request.backend === 'webgpu'
        ? await loraGpuPolicy(
            request,
            lora,
            promptLengthBound(tokenizer, task) + request.maxNewTokens,
          )
        : { policy: undefined, device: 'CPU' };
    session = new LoraGrpoSession({
      spec: request.spec,
      ...(policy ? { policy } : { base: request.base }),
      tokenizer,
      task,
      lora,
      grpo: loraGrpoConfig(request),
      seed: request.seed,
    });
    updates = 0;
    seconds = 0;
    return { parameters: session.parameters, device };
  },
  heldOut: () => opened().heldOut(),
  async update(heldOut: boolean): Promise<LoraRunReport> {
    const run = opened();
    const started = performance.now();
    const metrics = await run.update();
    seconds += (performance.now() - started) / 1000;
    updates += 1;
    return {
      update: updates,
      strictAccuracy: metrics['reward/strict_accuracy'] ?? NaN,
      ...(heldOut ? { heldOut: await run.heldOut() } : {}),
      seconds,
    };
  },
  async adapter() {
    const files = await opened().adapterFiles(source);
    return transfer(files, [files.weights.buffer]);
  },
};

expose(api);
