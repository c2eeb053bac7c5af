/**
 * Multi-turn episodes of the tiny GPT, in the lab's own tags: the policy writes a turn, the
 * environment parses it, runs the tool it calls and appends the result as observation tokens, and
 * the policy writes the next turn — until an answer, the turn limit or the row's length L.
 *
 *   row:  <bos> prompt | turn₁ <result>…</result> turn₂ <result>…</result> … <answer>…</answer> <pad>…
 *   mask:   0     0    |  1…1  0 … … … … … … … 0   1…1  0 … … … … … … … 0   1 … … … … … 1     0
 *
 * The row, its mask and the turn loop are shared with a chat model's episodes
 * (src/agents/episode-rows.ts); a turn ends at `</call>`, `</answer>` or `<eos>`.
 */
import type { CharTokenizer } from '../models/tokenizer';
import { parseTurn } from './call-parser';
import {
  appendModelTurn,
  appendObservation,
  driveEpisodes,
  finishRow,
  startRow,
  type Episode,
  type EpisodeRequestBase,
  type EpisodeRow,
} from './episode-rows';
import { observationTokens } from './observation';
import { createToolSet, runTool } from './tools';

export type { Episode, EpisodeEnd, EpisodeSegment, ToolCallRecord } from './episode-rows';

export interface EpisodeRequest extends EpisodeRequestBase {
  tokenizer: CharTokenizer;
}

export async function runEpisodes(request: EpisodeRequest): Promise<Episode[]> {
  const { tokenizer, task, maxLength: L } = request;
  const tools = createToolSet(task.env.useTools ? task.tools : []);
  const stops = [
    tokenizer.special['</call>'],
    tokenizer.special['</answer>'],
    tokenizer.eos,
  ] as const;
  const rows = request.samples.map((sample) => {
    const row = startRow(
      sample,
      [tokenizer.bos, ...tokenizer.encode(sample.prompt)],
      sample.prompt,
    );
    // A row needs at least one free position for its first turn.
    if (row.ids.length >= L - 1) finishRow(row, 'token-limit');
    return row;
  });
  return driveEpisodes(
    rows,
    { ...request, maxTurns: task.env.maxTurns, stopTokens: stops, padToken: tokenizer.pad },
    takeTurn,
  );

  /** Appends one model turn to `row`, then acts on it: run a call, take an answer, or stop. */
  function takeTurn(row: EpisodeRow, written: number[]): void {
    const episode = row.episode;
    const text = tokenizer.decode(written);
    appendModelTurn(row, written, text);
    const last = written[written.length - 1];
    if (last === undefined || !stops.includes(last as (typeof stops)[number])) {
      return finishRow(row, 'token-limit'); // the turn ran out of room before a stop token
    }
    if (last === tokenizer.eos) return finishRow(row, 'eos');
    const action = parseTurn(text);
    if (action.kind === 'answer') {
      episode.answer = action.text;
      return finishRow(row, 'answer');
    }
    if (action.kind === 'malformed') return finishRow(row, 'malformed');

    const overLimit = episode.calls.length >= task.env.maxCalls;
    const outcome = overLimit
      ? { ok: false, text: 'error: call limit reached', reason: 'budget-exceeded' as const }
      : runTool(tools, action.tool, action.args);
    episode.calls.push({
      tool: action.tool,
      args: action.args,
      ok: outcome.ok,
      result: outcome.text,
    });
    appendObservation(row, observationTokens(tokenizer, outcome.text), L, (kept) =>
      tokenizer.decode(kept),
    );
  }
}

/** What the episode added after the prompt (turns and observations) as text. */
export function episodeTranscript(episode: Pick<Episode, 'segments'>): string {
  return episode.segments
    .filter((s) => s.kind !== 'prompt')
    .map((s) => s.text)
    .join('');
}
