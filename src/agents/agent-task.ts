/**
 * Agent tasks: token tasks solved over several turns with tools. The policy writes text; a turn
 * ends at `</call>`, `</answer>` or `<eos>`; a call's result comes back as observation tokens
 * (`<result>…</result>`, written by the environment, never trained on); the episode ends at an
 * answer, a turn limit or the row's token limit (see episode.ts).
 *
 * An agent task is a CharsetTask whose `verify` reads the text inside `<answer>…</answer>`, plus
 * what the environment needs: which tools it offers, the turn and call limits, the tool cost, and
 * a correct transcript per sample for the SFT warm-up that teaches the call syntax.
 */
import type { ConfigSpec } from '../util/hyperparams';
import type { CharsetTask } from '../envs/token-tasks/shared';
import type { TokenTask, TokenTaskSample } from '../envs/token-tasks/types';

/** The environment's side of every agent task: tools, limits and the tool terms of the reward. */
export interface AgentEnvOptions {
  /** Offer the task's tools (false: the model must answer from its weights — the no-tool baseline). */
  useTools?: boolean;
  /** Reward subtracted per tool call, ≥ 0 (the counterweight to callBonus). */
  toolCost?: number;
  /**
   * Reward added per call that ran, ≥ 0: the naive "reward tool use" shaping. Anything paid per
   * call invites flooding (calls up to maxCalls); the tool-use lesson shows it. Default 0.
   */
  callBonus?: number;
  /** Calls an episode may make; a call beyond it gets an error result and counts as failed. */
  maxCalls?: number;
  /** Model turns per episode (each ends at a call, an answer or <eos>). */
  maxTurns?: number;
  /** Weight of the call-validity term: the fraction of calls that parsed and ran without error. */
  callValidityWeight?: number;
}

export const DEFAULT_AGENT_ENV_OPTIONS: Readonly<Required<AgentEnvOptions>> = Object.freeze({
  useTools: true,
  toolCost: 0,
  callBonus: 0,
  maxCalls: 4,
  maxTurns: 5,
  callValidityWeight: 0,
});

/** The spec entries every agent task shares (merged into each task's own spec). */
export const AGENT_ENV_SPEC: ConfigSpec<AgentEnvOptions> = {
  useTools: {
    kind: 'boolean',
    live: false,
    doc: 'offer the tools; off, the model must answer from what its weights hold',
  },
  toolCost: {
    kind: 'number',
    min: 0,
    max: 10,
    live: true,
    doc: 'reward subtracted per tool call (0 makes calls free)',
  },
  callBonus: {
    kind: 'number',
    min: 0,
    max: 10,
    live: true,
    doc: 'reward added per call that ran: paying per call invites flooding (calls up to maxCalls)',
  },
  maxCalls: {
    kind: 'int',
    min: 1,
    max: 16,
    live: true,
    doc: 'tool calls an episode may make; later calls return an error and count as failed',
    framework: 'verl multi-turn: max_assistant_turns / tool call limits',
  },
  maxTurns: {
    kind: 'int',
    min: 1,
    max: 16,
    live: true,
    doc: 'model turns per episode; an episode that has not answered by then ends unanswered',
    framework: 'verl: multi_turn.max_assistant_turns',
  },
  callValidityWeight: {
    kind: 'number',
    min: 0,
    max: 10,
    live: true,
    doc: 'weight of the call-validity term: the fraction of calls that parsed and ran',
  },
};

export interface AgentTask extends CharsetTask {
  readonly kind: 'agent';
  /** Tool names offered to the policy (empty when useTools is off). */
  readonly tools: readonly string[];
  readonly env: Readonly<Required<AgentEnvOptions>>;
  /** The text after the prompt of a correct episode: calls, their results, and the answer. */
  demonstration(sample: TokenTaskSample): string;
  /** 1 when `answer` (the text inside <answer>…</answer>) is correct for `sample`, else 0. */
  verify(sample: TokenTaskSample, answer: string): number;
  /**
   * The prompt as a chat model is asked it (src/agents/chat-episode.ts), e.g. "What is 347*86?"
   * for "347*86="; absent where the prompt already reads as a question.
   */
  chatQuestion?(sample: TokenTaskSample): string;
}

export function isAgentTask(task: TokenTask): task is AgentTask {
  return (task as Partial<AgentTask>).kind === 'agent';
}

/** `<answer>text</answer>`: the closing part every demonstration shares. */
export function answerText(text: string): string {
  return `<answer>${text}</answer>`;
}

/** `<call>tool(args)</call><result>result</result>`: one tool turn as a demonstration writes it. */
export function callText(tool: string, args: string, result: string): string {
  return `<call>${tool}(${args})</call><result>${result}</result>`;
}
