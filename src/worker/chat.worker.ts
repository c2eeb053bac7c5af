/// <reference lib="webworker" />
/** The CPU chat worker of "Bring a model" (chat-protocol.ts, chat-api.ts). */
import { expose } from 'comlink';
import { createChatWorkerApi } from './chat-api';

expose(createChatWorkerApi());
