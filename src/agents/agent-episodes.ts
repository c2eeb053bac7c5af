/**
 * Agent episodes on whichever tokenizer the model has: a chat template's (a brought model: calls
 * in the template's format, src/agents/chat-episode.ts) or the lab's character tokenizer (the
 * tiny GPT: `<call>` tags, src/agents/episode.ts).
 */
import type { TokenTaskSample } from '../envs/token-tasks/types';
import type { LanguageModel } from '../models/language-model';
import { CharTokenizer } from '../models/tokenizer';
import type { Tokenizer } from '../models/tokenizer-api';
import type { SampleOptions } from '../ops/nn/sample';
import { OpInputError } from '../ops/errors';
import type { AgentTask } from './agent-task';
import { runChatEpisodes } from './chat-episode';
import { chatTokenizer } from './chat-task';
import { runEpisodes, type Episode } from './episode';

export interface AgentEpisodesRequest {
  policy: LanguageModel;
  tokenizer: Tokenizer;
  task: AgentTask;
  samples: readonly TokenTaskSample[];
  /** Row length L, ≤ the model's context. */
  maxLength: number;
  /** Most tokens per model turn. */
  maxTurnTokens: number;
  sampling: SampleOptions;
  seed: number;
  /** Who asks, for errors. */
  op: string;
}

export function runAgentEpisodes(request: AgentEpisodesRequest): Promise<Episode[]> {
  const { tokenizer, op, ...rest } = request;
  if (tokenizer instanceof CharTokenizer) return runEpisodes({ ...rest, tokenizer });
  if (!tokenizer.applyChatTemplate) {
    throw new OpInputError(
      op,
      'tokenizer',
      `runs an agent task on the lab's character tokenizer or a chat template; this ${tokenizer.spec.kind} tokenizer has neither`,
    );
  }
  return runChatEpisodes({ ...rest, tokenizer: chatTokenizer(tokenizer) });
}
