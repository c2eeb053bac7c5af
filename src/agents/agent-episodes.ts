/**
 * Agent episodes on whichever tokenizer the model has: a chat template's (a brought model: calls
 * in the template's format, src/agents/chat-episode.ts) or the lab's character tokenizer (the
 * tiny GPT: `<call>` tags, src/agents/episode.ts).
 */
import { CharTokenizer } from '../models/tokenizer';
import type { Tokenizer } from '../models/tokenizer-api';
import { OpInputError } from '../ops/errors';
import { runChatEpisodes } from './chat-episode';
import { chatTokenizer } from './chat-task';
import { runEpisodes } from './episode';
import type { Episode, EpisodeRequestBase } from './episode-rows';

export interface AgentEpisodesRequest extends EpisodeRequestBase {
  tokenizer: Tokenizer;
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
