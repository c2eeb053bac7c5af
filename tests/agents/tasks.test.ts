import { describe, expect, it } from 'vitest';
import { scoreEpisode } from '../../src/agents/agent-rewards';
import type { AgentTask } from '../../src/agents/agent-task';
import { runEpisodes } from '../../src/agents/episode';
import { DOCUMENTS } from '../../src/agents/data/documents';
import { PRICES } from '../../src/agents/data/prices';
import { factsTask } from '../../src/agents/tasks/facts';
import { multiplyTask } from '../../src/agents/tasks/multiply';
import { shoppingTask } from '../../src/agents/tasks/shopping';
import { DEFAULT_REWARD_CONFIG } from '../../src/envs/token-tasks/rewards';
import { createTokenTask, TOKEN_TASKS } from '../../src/agents/token-task-registry';
import { CharTokenizer } from '../../src/models/tokenizer';
import { seededRandom } from '../../src/util/random';
import { scriptedPolicy } from './scripted-policy';

const tok = CharTokenizer.createDefault();

/**
 * A policy that follows each sample's demonstration: at every turn it writes the next stretch of
 * the demonstration up to its next </call> or </answer>. The tools then really run, so a
 * demonstration whose written results differ from what the tools return derails the episode.
 */
function demonstrationPolicy(task: AgentTask, prompts: Map<string, string>) {
  return scriptedPolicy(tok, (promptText) => {
    const body = promptText.slice('<bos>'.length);
    for (const [prompt, demo] of prompts) {
      if (!body.startsWith(prompt)) continue;
      const done = body.slice(prompt.length);
      if (!demo.startsWith(done)) return '<eos>'; // derailed: the tools said something else
      const rest = demo.slice(done.length);
      const stop = Math.min(
        ...['</call>', '</answer>'].map((tag) => {
          const at = rest.indexOf(tag);
          return at < 0 ? Infinity : at + tag.length;
        }),
      );
      return rest.slice(0, stop);
    }
    throw new Error(`no sample for prompt ${promptText} (${task.name})`);
  });
}

async function demonstrationsVerify(task: AgentTask, count: number, seed: number) {
  const random = seededRandom(seed);
  const samples = Array.from({ length: count }, () => task.sample(random));
  const demos = new Map(samples.map((s) => [s.prompt, task.demonstration(s)]));
  const episodes = await runEpisodes({
    policy: demonstrationPolicy(task, demos),
    tokenizer: tok,
    task,
    samples,
    maxLength: Math.min(256, task.maxChars + 2),
    maxTurnTokens: 255,
    sampling: { temperature: 1 },
    seed,
  });
  for (const e of episodes) {
    expect(e.end, `${task.name} ${e.sample.prompt}`).toBe('answer');
    expect(scoreEpisode(task, e, DEFAULT_REWARD_CONFIG).total).toBe(1);
    expect(e.calls.every((c) => c.ok)).toBe(true);
  }
  return episodes;
}

const AGENT_TASKS = ['multiply', 'shopping', 'facts'] as const;

describe('agent task demonstrations', () => {
  for (const name of AGENT_TASKS) {
    it(`${name}: every curriculum rung's demonstrations solve the task with the real tools`, async () => {
      for (const level of TOKEN_TASKS[name].difficultyLevels) {
        await demonstrationsVerify(createTokenTask(name, level) as AgentTask, 40, 3);
      }
    });
    it(`${name}: without tools the demonstration answers at once`, async () => {
      const task = createTokenTask(name, { useTools: false }) as AgentTask;
      expect(task.tools).toEqual([]);
      const episodes = await demonstrationsVerify(task, 10, 5);
      expect(episodes.every((e) => e.calls.length === 0 && e.turns === 1)).toBe(true);
    });
  }
});

describe('multiply', () => {
  it('writes "a*b=" and one calculator call (worked example)', () => {
    const task = multiplyTask();
    const sample = { prompt: '347*86=', answer: '29842' };
    expect(task.demonstration(sample)).toBe(
      '<call>calc(347*86)</call><result>29842</result><answer>29842</answer>',
    );
    expect(task.verify(sample, '29842')).toBe(1);
    expect(task.verify(sample, '029842')).toBe(0);
  });

  it('draws factors with the asked digit counts and exact products', () => {
    const task = multiplyTask({ minDigits: 4, maxDigits: 6 });
    const random = seededRandom(9);
    for (let i = 0; i < 200; i++) {
      const s = task.sample(random);
      const [a, b] = s.prompt.slice(0, -1).split('*');
      for (const f of [a!, b!]) expect(f).toMatch(/^[1-9][0-9]{3,5}$/);
      expect(s.answer).toBe(String(BigInt(a!) * BigInt(b!)));
    }
  });

  it.each([
    [{ maxDigits: 7 }, /maxDigits/],
    [{ minDigits: 3, maxDigits: 2 }, /minDigits/],
    [{ toolCost: -1 }, /toolCost/],
    [{ maxTurns: 0 }, /maxTurns/],
  ])('refuses %o', (options, message) => {
    expect(() => createTokenTask('multiply', options)).toThrow(message);
  });
});

describe('shopping', () => {
  it('looks up each item, then calculates (worked example)', () => {
    const task = shoppingTask();
    // candle 7, bolt 2 in the shipped table: 3·7 + 2·2 = 25.
    expect(PRICES.get('candle')).toBe(7);
    expect(PRICES.get('bolt')).toBe(2);
    expect(task.demonstration({ prompt: '3 candle+2 bolt=', answer: '25' })).toBe(
      '<call>price(candle)</call><result>7</result><call>price(bolt)</call><result>2</result>' +
        '<call>calc(3*7+2*2)</call><result>25</result><answer>25</answer>',
    );
  });

  it('the first rung is one lookup and no arithmetic', () => {
    const task = createTokenTask(
      'shopping',
      TOKEN_TASKS.shopping.difficultyLevels[0]!,
    ) as AgentTask;
    const s = task.sample(seededRandom(2));
    expect(s.prompt).toMatch(/^[a-z]+=$/);
    expect(task.demonstration(s)).toBe(
      `<call>price(${s.prompt.slice(0, -1)})</call><result>${s.answer}</result><answer>${s.answer}</answer>`,
    );
  });

  it('lists distinct items whose bill is the sum of quantity × price', () => {
    const task = shoppingTask({ items: 3, maxQuantity: 9 });
    const random = seededRandom(4);
    for (let i = 0; i < 100; i++) {
      const s = task.sample(random);
      const lines = s.prompt
        .slice(0, -1)
        .split('+')
        .map((l) => l.split(' '));
      expect(new Set(lines.map((l) => l[1])).size).toBe(3);
      const total = lines.reduce((sum, [q, item]) => sum + Number(q) * PRICES.get(item!)!, 0);
      expect(s.answer).toBe(String(total));
    }
  });
});

describe('facts', () => {
  it('searches with the question and answers the number (worked example)', () => {
    const task = factsTask();
    expect(task.demonstration({ prompt: 'how deep is lake miro?', answer: '37' })).toBe(
      '<call>search(how deep is lake miro)</call><result>lake miro is 37 m deep</result><answer>37</answer>',
    );
  });

  it('asks only about the first n documents', () => {
    const task = factsTask({ documents: 5 });
    const random = seededRandom(1);
    const allowed = new Set(DOCUMENTS.slice(0, 5).map((d) => d.question));
    for (let i = 0; i < 50; i++) expect(allowed.has(task.sample(random).prompt)).toBe(true);
  });
});
