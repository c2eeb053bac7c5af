/// <reference lib="webworker" />
/** A LoRA worker: one LoRA-GRPO run on a brought model (lora-protocol.ts, lora-api.ts). */
import { expose } from 'comlink';
import { createLoraWorkerApi } from './lora-api';

expose(createLoraWorkerApi());
