/**
 * Multi-turn episodes for a batch of rows: the policy writes a turn, the environment parses it,
 * runs the tool it calls and appends the result as observation tokens, and the policy writes the
 * next turn — until an answer, the turn limit or the row's length L.
 *
 *   row:  <bos> prompt | turn₁ <result>…</result> turn₂ <result>…</result> … <answer>…</answer> <pad>…
 *   mask:   0     0    |  1…1  0 … … … … … … … 0   1…1  0 … … … … … … … 0   1 … … … … … 1     0
 *
 * The mask is 1 only on tokens the policy sampled, so the policy loss, KL, entropy and whitening
 * never see a tool's output (observation masking). Each turn is one batched `generate` call over
 * the rows still running, with the whole row so far as its prompt (no KV cache is kept between
 * turns: rows are short, and a row's prefix is re-read in one pass per turn); a turn's sampler seed
 * is (seed, turn), so an episode is reproducible from the seed.
 */
import type { TokenTaskSample } from '../envs/token-tasks/types';
import type { LanguageModel } from '../models/language-model';
import type { CharTokenizer } from '../models/tokenizer';
import type { SampleOptions } from '../ops/nn/sample';
import type { AgentTask } from './agent-task';
import { parseTurn } from './call-parser';
import { observationTokens } from './observation';
import { createToolSet, runTool } from './tools';
import { generateTurn } from './turn-generation';

export type EpisodeEnd =
  | 'answer' //        wrote <answer>…</answer>
  | 'eos' //           ended with <eos> and no answer
  | 'malformed' //     a turn that is neither a call nor an answer
  | 'turn-limit' //    maxTurns turns without an answer
  | 'token-limit'; //  the row filled up (mid-turn or by an observation)

/** One stretch of the row, for the inspector: what the model wrote, or what a tool returned. */
export interface EpisodeSegment {
  kind: 'prompt' | 'model' | 'observation';
  /** Token positions [start, end) in the row. */
  start: number;
  end: number;
  text: string;
}

export interface ToolCallRecord {
  tool: string;
  args: string;
  ok: boolean;
  result: string;
}

export interface Episode {
  sample: TokenTaskSample;
  /** (L) the row: prompt, turns, observations, padding. */
  tokens: Int32Array;
  /** (L) 1 where the policy sampled the token. */
  mask: Float32Array;
  segments: EpisodeSegment[];
  calls: ToolCallRecord[];
  turns: number;
  /** The text inside <answer>…</answer>, or null. */
  answer: string | null;
  end: EpisodeEnd;
  /** Tokens the policy wrote (mask sum) and tokens tools wrote. */
  modelTokens: number;
  observationTokens: number;
}

export interface EpisodeRequest {
  policy: LanguageModel;
  tokenizer: CharTokenizer;
  task: AgentTask;
  samples: readonly TokenTaskSample[];
  /** Row length L, ≤ the model's context. */
  maxLength: number;
  /** Most tokens per model turn. */
  maxTurnTokens: number;
  sampling: SampleOptions;
  seed: number;
}

interface RowState {
  ids: number[];
  mask: number[];
  episode: Omit<Episode, 'tokens' | 'mask'>;
  done: boolean;
}

export async function runEpisodes(request: EpisodeRequest): Promise<Episode[]> {
  const { tokenizer, task, maxLength: L } = request;
  const tools = createToolSet(task.env.useTools ? task.tools : []);
  const stops = [
    tokenizer.special['</call>'],
    tokenizer.special['</answer>'],
    tokenizer.eos,
  ] as const;
  const rows: RowState[] = request.samples.map((sample) => {
    const ids = [tokenizer.bos, ...tokenizer.encode(sample.prompt)];
    return {
      ids,
      mask: ids.map(() => 0),
      done: ids.length >= L - 1,
      episode: {
        sample,
        segments: [{ kind: 'prompt', start: 0, end: ids.length, text: sample.prompt }],
        calls: [],
        turns: 0,
        answer: null,
        end: 'token-limit',
        modelTokens: 0,
        observationTokens: 0,
      },
    };
  });

  for (let turn = 0; turn < task.env.maxTurns; turn++) {
    const active = rows.filter((r) => !r.done);
    if (active.length === 0) break;
    const written = await generateTurn({
      policy: request.policy,
      rows: active.map((r) => r.ids),
      maxLength: L,
      maxTurnTokens: request.maxTurnTokens,
      stopTokens: stops,
      padToken: tokenizer.pad,
      sampling: request.sampling,
      seed: request.seed,
      turn,
    });
    active.forEach((row, b) => takeTurn(row, written[b]!, row.ids.length));
  }
  for (const row of rows) {
    if (!row.done) row.episode.end = 'turn-limit';
  }
  return rows.map((row) => {
    const tokens = new Int32Array(L).fill(tokenizer.pad);
    tokens.set(row.ids.slice(0, L));
    const mask = new Float32Array(L);
    mask.set(row.mask.slice(0, L));
    return { ...row.episode, tokens, mask };
  });

  // #region model-turn
  /** Appends one model turn to `row`, then acts on it: run a call, take an answer, or stop. */
  function takeTurn(row: RowState, written: number[], start: number): void {
    const episode = row.episode;
    episode.turns += 1;
    episode.modelTokens += written.length;
    row.ids.push(...written);
    row.mask.push(...written.map(() => 1));
    // #endregion model-turn
    const text = tokenizer.decode(written);
    episode.segments.push({ kind: 'model', start, end: row.ids.length, text });
    const last = written[written.length - 1];
    if (last === undefined || !stops.includes(last as (typeof stops)[number])) {
      return finish(row, 'token-limit'); // the turn ran out of room before a stop token
    }
    if (last === tokenizer.eos) {
      return finish(row, 'eos');
    }
    const action = parseTurn(text);
    if (action.kind === 'answer') {
      episode.answer = action.text;
      return finish(row, 'answer');
    }
    if (action.kind === 'malformed') return finish(row, 'malformed');

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
    // #region tool-result
    const observation = observationTokens(tokenizer, outcome.text);
    const room = L - row.ids.length;
    const kept = observation.slice(0, room);
    const obsStart = row.ids.length;
    row.ids.push(...kept);
    row.mask.push(...kept.map(() => 0));
    episode.observationTokens += kept.length;
    // #endregion tool-result
    episode.segments.push({
      kind: 'observation',
      start: obsStart,
      end: row.ids.length,
      text: tokenizer.decode(kept),
    });
    // A row needs at least one free position for the next turn (and its prompt ≤ L − 1).
    if (kept.length < observation.length || row.ids.length >= L - 1) finish(row, 'token-limit');
  }

  function finish(row: RowState, end: EpisodeEnd): void {
    row.episode.end = end;
    row.done = true;
  }
}

/** What the episode added after the prompt (turns and observations) as text. */
export function episodeTranscript(episode: Pick<Episode, 'segments'>): string {
  return episode.segments
    .filter((s) => s.kind !== 'prompt')
    .map((s) => s.text)
    .join('');
}
