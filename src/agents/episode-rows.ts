/**
 * What every multi-turn episode runner shares — the tiny GPT's `<call>` tags (episode.ts) and a
 * chat model's template (chat-episode.ts): the episode's record, its row of tokens and mask, and
 * the turn loop. A runner supplies the prompt ids and what to do with each turn; the loop takes the
 * turns of every row still running in one batched `generate` call each.
 *
 *   row:  prompt | turn₁ | observation₁ | turn₂ | … | pad…
 *   mask:   0    |  1…1  |     0…0      |  1…1  | … |  0
 *
 * The mask is 1 only on tokens the policy sampled, so the policy loss, KL, entropy and whitening
 * never see a tool's output (observation masking). Each turn re-reads the whole row so far (no KV
 * cache is kept between turns); turn t's sampler seed is a function of (seed, t), so an episode is
 * reproducible from the seed.
 */
import type { TokenTaskSample } from '../envs/token-tasks/types';
import type { LanguageModel } from '../models/language-model';
import type { SampleOptions } from '../ops/nn/sample';
import { counterHash } from '../util/counter-rng';
import type { AgentTask } from './agent-task';

export type EpisodeEnd =
  | 'answer' //        wrote an answer
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
  /** The answer's text, or null. */
  answer: string | null;
  end: EpisodeEnd;
  /** Tokens the policy wrote (mask sum) and tokens tools wrote. */
  modelTokens: number;
  observationTokens: number;
}

/** What both runners are asked, besides their tokenizer. */
export interface EpisodeRequestBase {
  policy: LanguageModel;
  task: AgentTask;
  samples: readonly TokenTaskSample[];
  /** Row length L, ≤ the model's context. */
  maxLength: number;
  /** Most tokens per model turn. */
  maxTurnTokens: number;
  sampling: SampleOptions;
  seed: number;
}

/** A row being written: its ids and mask so far, the episode's record, and whether it ended. */
export interface EpisodeRow {
  ids: number[];
  mask: number[];
  episode: Omit<Episode, 'tokens' | 'mask'>;
  done: boolean;
}

/** A row holding `sample`'s prompt ids (mask 0), shown as `promptText`. */
export function startRow(sample: TokenTaskSample, ids: number[], promptText: string): EpisodeRow {
  return {
    ids,
    mask: ids.map(() => 0),
    done: false,
    episode: {
      sample,
      segments: [{ kind: 'prompt', start: 0, end: ids.length, text: promptText }],
      calls: [],
      turns: 0,
      answer: null,
      end: 'token-limit',
      modelTokens: 0,
      observationTokens: 0,
    },
  };
}

export function finishRow(row: EpisodeRow, end: EpisodeEnd): void {
  row.episode.end = end;
  row.done = true;
}

// #region model-turn
/** Appends what the model wrote this turn: its tokens with mask 1. */
export function appendModelTurn(row: EpisodeRow, written: readonly number[], text: string): void {
  const start = row.ids.length;
  row.episode.turns += 1;
  row.episode.modelTokens += written.length;
  row.ids.push(...written);
  row.mask.push(...written.map(() => 1));
  row.episode.segments.push({ kind: 'model', start, end: row.ids.length, text });
}
// #endregion model-turn

// #region tool-result
/**
 * Appends what the environment writes after a call: its tokens with mask 0, as many as the row of
 * length L holds. The row ends ('token-limit') when they did not all fit or no position is left
 * for the next turn.
 */
export function appendObservation(
  row: EpisodeRow,
  observation: readonly number[],
  L: number,
  textOf: (kept: readonly number[]) => string,
): void {
  const kept = observation.slice(0, L - row.ids.length);
  const start = row.ids.length;
  row.ids.push(...kept);
  row.mask.push(...kept.map(() => 0));
  row.episode.observationTokens += kept.length;
  row.episode.segments.push({
    kind: 'observation',
    start,
    end: row.ids.length,
    text: textOf(kept),
  });
  if (kept.length < observation.length || row.ids.length >= L - 1) finishRow(row, 'token-limit');
}
// #endregion tool-result

export interface TurnLoop {
  policy: LanguageModel;
  /** Row length L. */
  maxLength: number;
  /** Most tokens a turn writes per row. */
  maxTurnTokens: number;
  maxTurns: number;
  stopTokens: readonly number[];
  padToken: number;
  sampling: SampleOptions;
  seed: number;
}

/**
 * Runs the turns: each turn, one `generate` call over the rows still running, then `takeTurn`
 * for each with what its model wrote (ending with a stop id unless the row filled up). Rows still
 * running after maxTurns end 'turn-limit'. Returns the episodes with their padded rows.
 */
export async function driveEpisodes<R extends EpisodeRow>(
  rows: R[],
  loop: TurnLoop,
  takeTurn: (row: R, written: number[]) => void,
): Promise<Episode[]> {
  const L = loop.maxLength;
  for (let turn = 0; turn < loop.maxTurns; turn++) {
    const active = rows.filter((r) => !r.done);
    if (active.length === 0) break;
    const generation = await loop.policy.generate({
      prompts: active.map((r) => Int32Array.from(r.ids)),
      maxLength: L,
      maxNewTokens: Math.min(loop.maxTurnTokens, L - 1),
      stopTokens: loop.stopTokens,
      padToken: loop.padToken,
      sampling: loop.sampling,
      seed: counterHash(loop.seed, turn, 0x7a9e),
    });
    active.forEach((row, b) => {
      const written: number[] = [];
      for (let t = row.ids.length; t < L; t++) {
        if (generation.mask[b * L + t] !== 1) break;
        written.push(generation.tokens[b * L + t]!);
      }
      takeTurn(row, written);
    });
  }
  for (const row of rows) {
    if (!row.done) row.episode.end = 'turn-limit';
  }
  return rows.map((row) => {
    const tokens = new Int32Array(L).fill(loop.padToken);
    tokens.set(row.ids.slice(0, L));
    const mask = new Float32Array(L);
    mask.set(row.mask.slice(0, L));
    return { ...row.episode, tokens, mask };
  });
}
