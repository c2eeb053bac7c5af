import { describe, expect, it } from 'vitest';
import { scoreEpisode, summarizeEpisodes } from '../../src/agents/agent-rewards';
import { runEpisodes, type EpisodeRequest } from '../../src/agents/episode';
import { observationTokens } from '../../src/agents/observation';
import { multiplyTask } from '../../src/agents/tasks/multiply';
import { DEFAULT_REWARD_CONFIG } from '../../src/envs/token-tasks/rewards';
import { CharTokenizer } from '../../src/models/tokenizer';
import { packRows, rollout } from '../../src/rl/token-rollout';
import { scriptedPolicy } from './scripted-policy';

const tok = CharTokenizer.createDefault();
const sample = { prompt: '12*34=', answer: '408' };

/** A policy that writes `turns[k]` as its k-th turn in every row. */
function turnsPolicy(turns: readonly string[]) {
  return scriptedPolicy(tok, (_prompt, call) => turns[call] ?? '<eos>');
}

function request(
  turns: readonly string[],
  over: Partial<EpisodeRequest> = {},
  taskOptions = {},
): EpisodeRequest {
  return {
    policy: turnsPolicy(turns),
    tokenizer: tok,
    task: multiplyTask(taskOptions),
    samples: [sample],
    maxLength: 64,
    maxTurnTokens: 32,
    sampling: { temperature: 1 },
    seed: 7,
    ...over,
  };
}

describe('runEpisodes', () => {
  it('runs a call, appends its result as masked observation tokens, and takes the answer', async () => {
    const [e] = await runEpisodes(request(['<call>calc(12*34)</call>', '<answer>408</answer>']));
    // Row: <bos> "12*34=" (7 tokens, 0…6) | <call> "calc(12*34)" </call> (13 tokens, 7…19)
    //      | <result> "408" </result> (5, 20…24) | <answer> "408" </answer> (5, 25…29) | pad.
    expect(e!.end).toBe('answer');
    expect(e!.answer).toBe('408');
    expect(e!.turns).toBe(2);
    expect(e!.calls).toEqual([{ tool: 'calc', args: '12*34', ok: true, result: '408' }]);
    expect(e!.modelTokens).toBe(18);
    expect(e!.observationTokens).toBe(5);
    const trained = [...e!.mask].flatMap((m, t) => (m === 1 ? [t] : []));
    expect(trained).toEqual([
      ...Array.from({ length: 13 }, (_, i) => 7 + i),
      ...Array.from({ length: 5 }, (_, i) => 25 + i),
    ]);
    expect(tok.decode(e!.tokens.subarray(0, 30))).toBe(
      '<bos>12*34=<call>calc(12*34)</call><result>408</result><answer>408</answer>',
    );
    expect(e!.tokens[30]).toBe(tok.pad);
    expect(e!.segments.map((s) => [s.kind, s.start, s.end])).toEqual([
      ['prompt', 0, 7],
      ['model', 7, 20],
      ['observation', 20, 25],
      ['model', 25, 30],
    ]);
  });

  it('gives the next turn the whole row so far as its prompt', async () => {
    const req = request(['<call>calc(2+2)</call>', '<answer>4</answer>']);
    await runEpisodes(req);
    const calls = (req.policy as ReturnType<typeof scriptedPolicy>).calls;
    expect(calls).toEqual([
      ['<bos>12*34='],
      ['<bos>12*34=<call>calc(2+2)</call><result>4</result>'],
    ]);
  });

  it('without tools a call fails with an error the policy can read', async () => {
    const [e] = await runEpisodes(
      request(['<call>calc(1+1)</call>', '<answer>2</answer>'], {}, { useTools: false }),
    );
    expect(e!.calls[0]!.ok).toBe(false);
    expect(e!.calls[0]!.result).toMatch(/^error: unknown tool/);
    expect(e!.end).toBe('answer');
  });

  it('refuses calls beyond maxCalls, counted as failed', async () => {
    const call = '<call>calc(1+1)</call>';
    const [e] = await runEpisodes(
      request([call, call, call], { maxLength: 128 }, { maxCalls: 2, maxTurns: 3 }),
    );
    expect(e!.calls.map((c) => c.ok)).toEqual([true, true, false]);
    expect(e!.calls[2]!.result).toBe('error: call limit reached');
    expect(e!.end).toBe('turn-limit');
  });

  it.each([
    ['<eos>', 'eos'],
    ['hello</call>', 'malformed'],
    ['<answer>12', 'token-limit'], // no stop token before the turn budget (8 tokens)
  ])('ends a turn written as %j with %s', async (turn, end) => {
    const [e] = await runEpisodes(request([turn], { maxTurnTokens: 8 }));
    expect(e!.end).toBe(end);
    expect(e!.answer).toBeNull();
  });

  it('ends at the row length when an observation does not fit, keeping what fits', async () => {
    // Prompt 7 + call 11 tokens = 18; L = 21 leaves room for 3 of the 4 observation tokens.
    const [e] = await runEpisodes(request(['<call>calc(9*9)</call>'], { maxLength: 21 }));
    expect(e!.end).toBe('token-limit');
    expect(e!.observationTokens).toBe(3);
    expect(tok.decode(e!.tokens)).toBe('<bos>12*34=<call>calc(9*9)</call><result>81');
  });
});

describe('observationTokens', () => {
  it('never turns tool text into special tokens; unknown characters become ?', () => {
    const ids = observationTokens(tok, '<answer>X');
    expect(ids[0]).toBe(tok.special['<result>']);
    expect(ids[ids.length - 1]).toBe(tok.special['</result>']);
    expect(ids.slice(1, -1).some((id) => tok.isSpecial(id))).toBe(false);
    expect(tok.decode(ids.slice(1, -1))).toBe('<answer>?');
  });
});

describe('agent rewards', () => {
  it('scores each term (worked by hand)', async () => {
    const task = multiplyTask({ toolCost: 0.1, callValidityWeight: 0.5 });
    const [e] = await runEpisodes({
      ...request(['<call>calc(12*34)</call>', '<call>calc(1/0)</call>', '<answer>408</answer>'], {
        maxLength: 128,
      }),
      task,
    });
    const reward = scoreEpisode(task, e!, { ...DEFAULT_REWARD_CONFIG, formatWeight: 0.2 });
    // correct 1 + format 0.2 + validity 0.5 · (1 of 2 calls ok) − cost 0.1 · 2 calls = 1.25
    expect(reward.correct).toBe(1);
    expect(reward.format).toBe(0.2);
    expect(reward.callValidity).toBe(0.25);
    expect(reward.toolCost).toBeCloseTo(-0.2, 12);
    expect(reward.total).toBeCloseTo(1.25, 12);
    expect(reward.length).toBe(e!.modelTokens);
    const metrics = summarizeEpisodes([e!], [reward]);
    expect(metrics['tools/call_frequency']).toBe(2);
    expect(metrics['tools/failure_frequency']).toBe(0.5);
    expect(metrics['num_turns/mean']).toBe(3);
    // The last call that ran said 408 and the answer is 408 (the failed 1/0 call does not count).
    expect(metrics['tools/result_copied']).toBe(1);
  });

  it('result_copied counts answers that differ from the last result, over answered episodes with a call', async () => {
    const task = multiplyTask();
    const run = async (turns: string[]) =>
      (await runEpisodes({ ...request(turns, { maxLength: 128 }), task }))[0]!;
    const copied = await run(['<call>calc(36*35)</call>', '<answer>1260</answer>']);
    const miscopied = await run(['<call>calc(36*35)</call>', '<answer>1250</answer>']);
    const direct = await run(['<answer>1260</answer>']); // no call: not counted
    const episodes = [copied, miscopied, direct];
    const rewards = episodes.map((e) => scoreEpisode(task, e, DEFAULT_REWARD_CONFIG));
    expect(summarizeEpisodes(episodes, rewards)['tools/result_copied']).toBe(0.5);
    expect(summarizeEpisodes([direct], [rewards[2]!])['tools/result_copied']).toBe(0);
  });

  it('pays callBonus per call that ran, so three calls beat one (the flooding incentive)', async () => {
    const task = multiplyTask({ callBonus: 0.3, toolCost: 0.05 });
    const calls = [
      '<call>calc(12*34)</call>',
      '<call>calc(12*34)</call>',
      '<call>calc(1/0)</call>',
    ];
    const [flood] = await runEpisodes({
      ...request([...calls, '<answer>408</answer>'], { maxLength: 160 }),
      task,
    });
    const [once] = await runEpisodes({
      ...request([calls[0]!, '<answer>408</answer>'], { maxLength: 160 }),
      task,
    });
    const flooded = scoreEpisode(task, flood!, DEFAULT_REWARD_CONFIG);
    const single = scoreEpisode(task, once!, DEFAULT_REWARD_CONFIG);
    // Three calls, two ran: correct 1 + bonus 0.3 · 2 − cost 0.05 · 3 = 1.45.
    expect(flooded.callBonus).toBeCloseTo(0.6, 12);
    expect(flooded.total).toBeCloseTo(1.45, 12);
    // One call that ran: 1 + 0.3 − 0.05 = 1.25 — the same right answer earns less.
    expect(single.total).toBeCloseTo(1.25, 12);
    expect(summarizeEpisodes([flood!], [flooded])['reward/call_bonus']).toBeCloseTo(0.6, 12);
  });

  it('a wrong answer earns no correctness; no answer fails the format', async () => {
    const task = multiplyTask();
    const cfg = { ...DEFAULT_REWARD_CONFIG, formatWeight: 1 };
    const [wrong] = await runEpisodes({ ...request(['<answer>407</answer>']), task });
    expect(scoreEpisode(task, wrong!, cfg)).toMatchObject({ correct: 0, format: 1, total: 1 });
    const [none] = await runEpisodes({ ...request(['<eos>']), task });
    expect(scoreEpisode(task, none!, cfg)).toMatchObject({ correct: 0, format: 0, total: 0 });
  });
});

describe('rollout on an agent task', () => {
  it('packs rows whose loss mask excludes tool output, reward on the last model token', async () => {
    const rows = await rollout({
      policy: turnsPolicy(['<call>calc(12*34)</call>', '<answer>408</answer>']),
      tokenizer: tok,
      task: multiplyTask(),
      rewards: DEFAULT_REWARD_CONFIG,
      samples: [sample, sample],
      maxLength: 40,
      maxNewTokens: 32,
      sampling: { temperature: 1 },
      seed: 1,
    });
    expect(rows[0]!.reward.total).toBe(1);
    expect(rows[0]!.completion.length).toBe(18);
    const packed = packRows(rows);
    const T = packed.seq;
    // Targets are row positions 1…; the observation (positions 20…24) → t = 19…23 untrained.
    expect([...packed.mask.subarray(19, 24)]).toEqual([0, 0, 0, 0, 0]);
    expect(packed.mask[18]).toBe(1); // target 19 = </call>
    expect(packed.tokenRewards[28]).toBe(1); // target 29 = </answer>, the last model token
    expect(packed.tokenRewards.subarray(T, 2 * T).reduce((a, b) => a + b)).toBe(1);
  });
});
