/**
 * What a language-model trainer's last update did, token by token, for the lab's inspectors: for
 * each sampled row its group, reward and advantage, and per token after the prompt the text,
 * whether it was trained (the loss mask), whether a tool wrote it (an observation), its
 * advantage, the importance ratio π_new/π_old at the last optimizer step, and whether the clip
 * was active there. Built on request from arrays the update keeps, so an update pays nothing.
 */
import type { Tokenizer } from '../models/tokenizer-api';
import { tokenClipState, type PolicyLossOptions } from '../ops/policy-loss';
import { promptTokens } from '../agents/prompt-tokens';
import type { RolloutRow } from './token-rollout';

export interface InspectedToken {
  text: string;
  /** In the loss mask (sampled by the policy and not masked out). */
  trained: boolean;
  /** Written by a tool (agent tasks), never trained. */
  observation: boolean;
  advantage: number;
  /** π_new/π_old at the last optimizer step (1 at the first); NaN where not trained. */
  ratio: number;
  /** The clipped term was taken (no gradient through this token). */
  clipped: boolean;
  /** PPO's critic value at this token (PPO only). */
  value?: number;
  /** PPO's GAE return target (PPO only). */
  return?: number;
}

export interface InspectedSample {
  /** Index of the prompt group (GRPO: G consecutive rows share one). */
  group: number;
  prompt: string;
  completion: string;
  reward: number;
  /** The sequence advantage (the first trained token's). */
  advantage: number;
  tokens: InspectedToken[];
}

/** What a trainer shows of its last update (the lab's inspector; plain data for postMessage). */
export type Inspection = SampleInspection | GridInspection | CartPoleInspection;

/** One greedy CartPole episode of the current policy, frame by frame (the lab's animation). */
export interface CartPoleInspection {
  kind: 'cartpole';
  algorithm: string;
  step: number;
  /** Cart position (m) and pole angle (rad) per frame: the start, then after each step. */
  x: number[];
  theta: number[];
  /** Steps balanced (the return: +1 per step). */
  steps: number;
  /** 'fell': pole past ±12° or cart past ±2.4 m; 'truncated': the 500-step limit. */
  end: 'fell' | 'truncated';
}

/** A tabular method on a grid: the state values and the greedy policy, cell by cell. */
export interface GridInspection {
  kind: 'grid';
  algorithm: string;
  step: number;
  rows: number;
  cols: number;
  /** Per cell (row-major): 'floor', 'wall', 'goal', 'hole' or 'cliff'. */
  cells: string[];
  start: number;
  /** V(s) per cell (planners: V; TD methods: max_a Q(s, a)). */
  values: number[];
  /** Greedy action per cell as (Δrow, Δcol); [0, 0] where no action matters (walls, terminals). */
  moves: [number, number][];
}

/** A language-model update, token by token. */
export interface SampleInspection {
  kind: 'samples';
  algorithm: string;
  /** The update these samples are from. */
  step: number;
  /** Rows per prompt group (GRPO: G; PPO: 1). */
  groupSize: number;
  /** Which per-token quantities exist: ratios/clipping (GRPO), values/returns (PPO). */
  has: { ratio: boolean; value: boolean };
  samples: InspectedSample[];
}

export interface BatchArrays {
  rows: readonly RolloutRow[];
  /** Rows per group (1 when rows are independent). */
  groupSize: number;
  seq: number; // T
  targets: Int32Array; // (B, T)
  mask: Float32Array; // (B, T)
  advantages: Float32Array; // (B, T)
  /** (B, T) at the last optimizer step; absent: ratios are not shown (NaN). */
  logp?: Float32Array;
  oldLogp: Float32Array; // (B, T) behaviour policy
  values?: Float32Array; // (B, T)
  returns?: Float32Array; // (B, T)
  clip: PolicyLossOptions;
}

export function inspectBatch(tokenizer: Tokenizer, batch: BatchArrays): InspectedSample[] {
  const T = batch.seq;
  return batch.rows.map((row, b) => {
    // Row position p + 1 is target t = p; the completion starts after the prompt (mask 0 there).
    const promptEnd = row.episode?.segments[0]?.end ?? promptTokens(tokenizer, row.sample).length;
    const observed = new Set<number>();
    for (const s of row.episode?.segments ?? []) {
      if (s.kind === 'observation') for (let p = s.start; p < s.end; p++) observed.add(p);
    }
    const tokens: InspectedToken[] = [];
    let firstAdvantage = NaN;
    for (let t = promptEnd - 1; t < T; t++) {
      const i = b * T + t;
      const id = batch.targets[i]!;
      const generated = row.mask[t + 1] === 1;
      const observation = observed.has(t + 1);
      if (!generated && !observation) break; // padding after the row's end
      const trained = batch.mask[i] === 1;
      const advantage = batch.advantages[i]!;
      const ratio = trained && batch.logp ? Math.exp(batch.logp[i]! - batch.oldLogp[i]!) : NaN;
      if (trained && Number.isNaN(firstAdvantage)) firstAdvantage = advantage;
      tokens.push({
        text: tokenizer.token(id),
        trained,
        observation,
        advantage,
        ratio,
        clipped: !Number.isNaN(ratio) && tokenClipState(ratio, advantage, batch.clip).clipped,
        ...(batch.values ? { value: batch.values[i]! } : {}),
        ...(batch.returns ? { return: batch.returns[i]! } : {}),
      });
    }
    return {
      group: Math.floor(b / batch.groupSize),
      prompt: row.sample.prompt,
      completion: row.completion.text,
      reward: row.reward.total,
      advantage: Number.isNaN(firstAdvantage) ? 0 : firstAdvantage,
      tokens,
    };
  });
}
