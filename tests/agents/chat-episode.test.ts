/**
 * Tool tasks asked of a chat model: the call format read from the model's own template (Qwen's
 * Hermes format, Llama's bare JSON, none at all), turns parsed in it, and whole episodes run with a
 * scripted model, the rows checked against what the template writes for the same conversation.
 */
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  chatAgentLengthBound,
  chatAgentPromptIds,
  chatAgentSetup,
  observationIds,
  openingMessages,
  renderChat,
  runChatEpisodes,
} from '../../src/agents/chat-episode';
import { chatTokenizer, type ChatTokenizer } from '../../src/agents/chat-task';
import {
  chatToolFormat,
  HERMES_CALL_FORMAT,
  parseChatTurn,
} from '../../src/agents/chat-tool-format';
import { chatToolArgs, chatToolDefinitions } from '../../src/agents/chat-tools';
import { factsTask } from '../../src/agents/tasks/facts';
import { multiplyTask } from '../../src/agents/tasks/multiply';
import { shoppingTask } from '../../src/agents/tasks/shopping';
import { loadLmModel } from '../../src/cli/lm-model';
import { HfTokenizer } from '../../src/models/hf/hf-tokenizer';
import { LORA_MODULES } from '../../src/models/hf/llama-lora';
import { evaluateTask } from '../../src/rl/evaluate';
import { LoraGrpoSession, loraDpoConfig, loraGrpoConfig } from '../../src/rl/lora-grpo-session';
import { scriptedPolicy } from './scripted-policy';

function files(dir: string) {
  const read = (name: string) => readFileSync(`${dir}/${name}`, 'utf8');
  return {
    tokenizerJson: read('tokenizer.json'),
    tokenizerConfig: read('tokenizer_config.json'),
    generationConfig: read('generation_config.json'),
  };
}

/** A fixture's tokenizer, its chat template replaced by `template` where given. */
async function tokenizerOf(dir: string, template?: string): Promise<ChatTokenizer> {
  const f = files(dir);
  if (template !== undefined) {
    const config = JSON.parse(f.tokenizerConfig) as Record<string, unknown>;
    f.tokenizerConfig = JSON.stringify({ ...config, chat_template: template });
  }
  return chatTokenizer(await HfTokenizer.load(dir, f));
}

const QWEN = 'tests/fixtures/hf/qwen2-tiny';
const TINY_CHAT = 'public/models/hf/tiny-chat';

/** Llama 3.1's way: calls as a bare JSON object with "parameters", results in an ipython turn. */
const LLAMA_STYLE = `{%- for m in messages -%}
{%- if m.role == 'assistant' and m.tool_calls -%}
<|im_start|>assistant
{%- for c in m.tool_calls %}{"name": "{{ c.function.name }}", "parameters": {{ c.function.arguments | tojson }}}{% endfor -%}
<|im_end|>
{%- elif m.role == 'tool' -%}
<|im_start|>ipython
{{ m.content }}<|im_end|>
{%- else -%}
<|im_start|>{{ m.role }}
{{ m.content }}<|im_end|>
{%- endif -%}
{%- endfor -%}
{%- if add_generation_prompt -%}<|im_start|>assistant
{% endif -%}`;

describe('the call format, read from the template', () => {
  it("reads Qwen's Hermes format: tools, calls and results all the template's", async () => {
    const format = chatToolFormat(await tokenizerOf(QWEN));
    expect(format).toEqual({
      toolsIn: 'template',
      call: {
        open: '<tool_call>\n',
        close: '\n</tool_call>',
        nameKey: 'name',
        argumentsKey: 'arguments',
      },
      resultsIn: 'tool-role',
      systemMessage: true,
    });
  });

  it('falls back to the Hermes format, taught by instructions, where the template has none', async () => {
    const format = chatToolFormat(await tokenizerOf(TINY_CHAT));
    expect(format).toEqual({
      toolsIn: 'instructions',
      call: { ...HERMES_CALL_FORMAT },
      resultsIn: 'user-message',
      systemMessage: true,
    });
  });

  it("reads a bare-JSON format with other keys (Llama's)", async () => {
    const format = chatToolFormat(await tokenizerOf(QWEN, LLAMA_STYLE));
    expect(format.call).toEqual({
      open: '',
      close: '',
      nameKey: 'name',
      argumentsKey: 'parameters',
    });
    expect(format.resultsIn).toBe('tool-role');
    expect(format.toolsIn).toBe('instructions'); // the template never writes `tools`
  });
});

describe('parseChatTurn', () => {
  const hermes = HERMES_CALL_FORMAT;
  const call = (name: string, args: unknown) =>
    `<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`;

  it('reads calls, several per turn, with the text around them as content', () => {
    expect(parseChatTurn(hermes, call('calc', { expression: '2*3' }))).toEqual({
      kind: 'calls',
      content: '',
      calls: [{ name: 'calc', arguments: { expression: '2*3' } }],
    });
    const two = `Let me look.\n${call('price', { item: 'candle' })}\n${call('price', { item: 'bolt' })}`;
    expect(parseChatTurn(hermes, two)).toEqual({
      kind: 'calls',
      content: 'Let me look.',
      calls: [
        { name: 'price', arguments: { item: 'candle' } },
        { name: 'price', arguments: { item: 'bolt' } },
      ],
    });
    // Arguments written as a JSON string of an object, as some models do.
    const asString =
      '<tool_call>{"name": "calc", "arguments": "{\\"expression\\": \\"1+1\\"}"}</tool_call>';
    expect(parseChatTurn(hermes, asString)).toMatchObject({
      calls: [{ name: 'calc', arguments: { expression: '1+1' } }],
    });
  });

  it('reads a turn without a call as the answer, trimmed', () => {
    expect(parseChatTurn(hermes, '  29842\n')).toEqual({ kind: 'answer', text: '29842' });
  });

  it('names what is wrong with a broken call, and never throws', () => {
    const cases: [string, RegExp][] = [
      ['<tool_call>\n{"name": "calc", "arguments": {}', /no complete JSON object/],
      ['<tool_call>{"name": "calc", "arguments": {}}', /not closed by <\/tool_call>/],
      ['<tool_call>{"name": 7, "arguments": {}}</tool_call>', /"name" must be a tool name/],
      [
        '<tool_call>{"name": "calc", "arguments": [1]}</tool_call>',
        /"arguments" must be a JSON object/,
      ],
      ['<tool_call>{"name": "calc", "arguments": {},}</tool_call>', /not a JSON object/],
      [
        '<tool_call>' + '{"a":'.repeat(40) + '1' + '}'.repeat(40) + '</tool_call>',
        /no complete JSON/,
      ],
    ];
    for (const [text, reason] of cases) {
      const turn = parseChatTurn(hermes, text);
      expect(turn.kind, text).toBe('malformed');
      expect(turn.kind === 'malformed' && turn.reason, text).toMatch(reason);
    }
  });

  it('reads bare JSON calls, and any other turn as the answer', () => {
    const bare = { open: '', close: '', nameKey: 'name', argumentsKey: 'parameters' };
    expect(
      parseChatTurn(bare, ' {"name": "search", "parameters": {"query": "lake miro"}} '),
    ).toEqual({
      kind: 'calls',
      content: '',
      calls: [{ name: 'search', arguments: { query: 'lake miro' } }],
    });
    expect(parseChatTurn(bare, '37')).toEqual({ kind: 'answer', text: '37' });
    expect(parseChatTurn(bare, '{"name": "search"} and more').kind).toBe('malformed');
  });
});

describe('the tools as chat functions', () => {
  it('lists each tool with its one text parameter', () => {
    const [calc] = chatToolDefinitions(['calc']);
    expect(calc).toEqual({
      name: 'calc',
      description: expect.stringContaining('arithmetic') as string,
      parameters: {
        type: 'object',
        properties: { expression: { type: 'string', description: expect.any(String) as string } },
        required: ['expression'],
      },
    });
    expect(() => chatToolDefinitions(['calc', 'shell'])).toThrow(/names\[1\] 'shell'/);
  });

  it('turns arguments into the tool’s text, or an error the model reads', () => {
    expect(chatToolArgs('calc', { expression: '2*3' })).toEqual({ ok: true, text: '2*3' });
    expect(chatToolArgs('price', { item: 12 })).toEqual({ ok: true, text: '12' });
    expect(chatToolArgs('calc', {})).toEqual({
      ok: false,
      error: 'error: calc takes one argument, "expression"',
    });
    expect(chatToolArgs('calc', { expression: '1', extra: 2 }).ok).toBe(false);
    expect(chatToolArgs('search', { query: ['a'] })).toEqual({
      ok: false,
      error: 'error: "query" must be text',
    });
  });
});

const CALC_CALL =
  '<tool_call>\n{"name": "calc", "arguments": {"expression": "347*186"}}\n</tool_call>';

/** One episode of 347*186 in `tok`'s template: the scripted model calls calc, then answers. */
async function calcEpisode(tok: ChatTokenizer) {
  const task = multiplyTask({ minDigits: 3, maxDigits: 3 });
  const policy = scriptedPolicy(
    tok,
    (_, call) => (call === 0 ? CALC_CALL : '64542') + '<|im_end|>',
  );
  const [episode] = await runChatEpisodes({
    policy,
    tokenizer: tok,
    task,
    samples: [{ prompt: '347*186=', answer: '64542' }],
    maxLength: 1500,
    maxTurnTokens: 64,
    sampling: { temperature: 1 },
    seed: 3,
  });
  return { task, episode: episode! };
}

describe('chat episodes', () => {
  it('runs calls in the template’s format; the row is the template’s chat, the mask the model’s turns', async () => {
    const tok = await tokenizerOf(QWEN);
    const { task, episode } = await calcEpisode(tok);
    expect(episode!.end).toBe('answer');
    expect(episode!.answer).toBe('64542');
    expect(episode!.calls).toEqual([{ tool: 'calc', args: '347*186', ok: true, result: '64542' }]);
    expect(episode!.turns).toBe(2);

    // The whole row reads as the template writes the same conversation.
    const setup = chatAgentSetup(tok, task);
    const messages = [
      ...openingMessages(setup, 'What is 347*186?'),
      {
        role: 'assistant' as const,
        content: '',
        toolCalls: [{ name: 'calc', arguments: { expression: '347*186' } }],
      },
      { role: 'tool' as const, content: '64542' },
    ];
    const used = episode!.segments.at(-1)!.end;
    const expected = renderChat(setup, messages, true) + '64542<|im_end|>';
    expect(tok.decode(episode!.tokens.subarray(0, used))).toBe(expected);
    expect(expected).toContain('<tools>');
    expect(expected).toContain('<tool_response>\n64542\n</tool_response>');
    // Padding past the end; mask 1 exactly on the two turns' tokens.
    expect([...episode!.tokens.subarray(used)].every((id) => id === tok.pad)).toBe(true);
    const model = episode!.segments.filter((s) => s.kind === 'model');
    expect(model.map((s) => s.text)).toEqual([CALC_CALL + '<|im_end|>', '64542<|im_end|>']);
    for (let t = 0; t < episode!.mask.length; t++) {
      const inTurn = model.some((s) => t >= s.start && t < s.end);
      expect(episode!.mask[t], `position ${t}`).toBe(inTurn ? 1 : 0);
    }
    expect(episode!.modelTokens).toBe(model.reduce((n, s) => n + s.end - s.start, 0));
  });

  it('keeps what the model saw where the template rewrites earlier turns (as Qwen3 does)', async () => {
    // Qwen3's way, on the Qwen fixture's template: an empty thinking block after the generation
    // prompt when thinking is off, and on the last assistant turn only — once a tool result
    // follows, the turn is written without it.
    const qwen = (JSON.parse(files(QWEN).tokenizerConfig) as { chat_template: string })
      .chat_template;
    const qwen3Style = qwen
      .replace(
        "{{- '<|im_start|>assistant' }}",
        "{{- '<|im_start|>assistant' }}{%- if loop.last %}{{- '\\n<think>\\n\\n</think>\\n' }}{%- endif %}",
      )
      .replace(
        "{{- '<|im_start|>assistant\\n' }}",
        "{{- '<|im_start|>assistant\\n' }}{%- if enable_thinking is defined and enable_thinking is false %}{{- '<think>\\n\\n</think>\\n\\n' }}{%- endif %}",
      );
    expect(qwen3Style).not.toBe(qwen);
    const tok = await tokenizerOf(QWEN, qwen3Style);
    const { task, episode } = await calcEpisode(tok);
    expect(episode!.end).toBe('answer');
    expect(episode!.answer).toBe('64542');
    expect(episode!.calls).toEqual([{ tool: 'calc', args: '347*186', ok: true, result: '64542' }]);
    // The template's own tool messages, though it rewrites the turn before them.
    expect(chatToolFormat(tok).resultsIn).toBe('tool-role');
    // The row: the prompt as generation saw it (thinking off), the call, the result, and the
    // answer after a second generation prompt — not the template's rewrite of the first turn.
    const setup = chatAgentSetup(tok, task);
    const prompt = renderChat(setup, openingMessages(setup, 'What is 347*186?'), true);
    expect(prompt.endsWith('<|im_start|>assistant\n<think>\n\n</think>\n\n')).toBe(true);
    const used = episode!.segments.at(-1)!.end;
    expect(tok.decode(episode!.tokens.subarray(0, used))).toBe(
      `${prompt}${CALC_CALL}<|im_end|>\n<|im_start|>user\n<tool_response>\n64542\n</tool_response>` +
        '<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\n64542<|im_end|>',
    );
  });

  it('teaches the format in a system message where the template defines none', async () => {
    const tok = await tokenizerOf(TINY_CHAT);
    const task = factsTask();
    const sample = task.sample(() => 0.5);
    const policy = scriptedPolicy(tok, (prompt, call) =>
      call === 0
        ? `<tool_call>\n{"name": "search", "arguments": {"query": "${sample.prompt.slice(0, -1)}"}}\n</tool_call><|im_end|>`
        : `${sample.answer}<|im_end|>`,
    );
    const [episode] = await runChatEpisodes({
      policy,
      tokenizer: tok,
      task,
      samples: [sample],
      maxLength: 1024,
      maxTurnTokens: 200,
      sampling: { temperature: 1 },
      seed: 1,
    });
    const [first, second] = policy.calls;
    expect(first![0]).toContain(
      '<|im_start|>system\nYou can call these tools:\n{"type":"function","function":{"name":"search"',
    );
    expect(second![0]).toMatch(
      /<\|im_start\|>user\n<tool_response>\n[^\n]+\n<\/tool_response><\|im_end\|>\n<\|im_start\|>assistant\n$/,
    );
    expect(episode!.calls[0]!.ok).toBe(true);
    expect(episode!.end).toBe('answer');
    expect(task.verify(sample, episode!.answer!)).toBe(1);
  });

  it('ends on a malformed call, the turn limit, the row’s length, and fails calls past the budget', async () => {
    const tok = await tokenizerOf(QWEN);
    const calc =
      '<tool_call>\n{"name": "calc", "arguments": {"expression": "1+1"}}\n</tool_call><|im_end|>';
    const run = async (task: ReturnType<typeof multiplyTask>, write: string, maxLength = 2000) =>
      (
        await runChatEpisodes({
          policy: scriptedPolicy(tok, () => write),
          tokenizer: tok,
          task,
          samples: [{ prompt: '12*34=', answer: '408' }],
          maxLength,
          maxTurnTokens: 64,
          sampling: { temperature: 1 },
          seed: 1,
        })
      )[0]!;
    expect((await run(multiplyTask(), '<tool_call>{"name": 1}</tool_call><|im_end|>')).end).toBe(
      'malformed',
    );
    const looping = await run(multiplyTask({ maxTurns: 3, maxCalls: 2 }), calc);
    expect(looping.end).toBe('turn-limit');
    expect(looping.calls.map((c) => c.ok)).toEqual([true, true, false]);
    expect(looping.calls[2]!.result).toBe('error: call limit reached');
    // A row with room for five more tokens: the turn is cut before its end.
    const setup = chatAgentSetup(tok, multiplyTask());
    const prompt = chatAgentPromptIds(setup, multiplyTask(), { prompt: '12*34=', answer: '408' });
    const cut = await run(multiplyTask(), '408408408408408408408<|im_end|>', prompt.length + 5);
    expect(cut.end).toBe('token-limit');
    expect(cut.modelTokens).toBe(5);
    // A row the prompt alone fills is refused, naming the sample and both lengths.
    await expect(run(multiplyTask(), '1<|im_end|>', prompt.length)).rejects.toThrow(
      new RegExp(
        `samples\\[0\\] its prompt takes ${prompt.length} tokens .* a row holds ${prompt.length}`,
      ),
    );
  });

  it('writes a special token a tool result spells as "?", so no result can end a turn', async () => {
    const tok = await tokenizerOf(QWEN);
    const setup = chatAgentSetup(tok, multiplyTask());
    const opening = openingMessages(setup, 'q');
    const turn = {
      text: '',
      content: '',
      calls: [{ name: 'calc', arguments: { expression: '1' } }],
    };
    const ids = observationIds(setup, opening, turn, ['a<|im_end|>b']);
    const eot = tok.endOfTurn!;
    // The template's own end of the tool message is there; the result's is not.
    const text = tok.decode(ids);
    expect(text).toContain('<tool_response>\na?b\n</tool_response>');
    expect(ids.filter((id) => id === eot)).toHaveLength(1);
  });

  it('bounds an episode: prompt framing, the task’s characters and each call’s framing', async () => {
    const tok = await tokenizerOf(QWEN);
    for (const task of [multiplyTask(), shoppingTask(), factsTask()]) {
      const setup = chatAgentSetup(tok, task);
      const bound = chatAgentLengthBound(setup, task);
      const opening = tok.encode(renderChat(setup, openingMessages(setup, ''), true)).length;
      expect(bound, task.name).toBeGreaterThan(opening + task.maxChars);
      // A whole correct episode fits: its demonstration's calls in the template's format.
      const sample = task.sample(() => 0.3);
      const question = task.chatQuestion?.(sample) ?? sample.prompt;
      const rendered = tok.encode(renderChat(setup, openingMessages(setup, question), true));
      expect(rendered.length, task.name).toBeLessThan(bound);
    }
  });
});

describe('a tool task on a brought model', () => {
  it('trains with GRPO on episodes in the template, and is measured on them', async () => {
    // The Qwen fixture, its context long enough for the tools' system prompt (RoPE has no limit).
    const dir = mkdtempSync(join(tmpdir(), 'chat-agent-'));
    for (const file of readdirSync(QWEN)) copyFileSync(join(QWEN, file), join(dir, file));
    const config = JSON.parse(readFileSync(join(QWEN, 'config.json'), 'utf8')) as object;
    writeFileSync(
      join(dir, 'config.json'),
      JSON.stringify({ ...config, max_position_embeddings: 4096 }),
    );
    const { model, params } = await loadLmModel(dir);
    const tokenizer = await tokenizerOf(dir);
    const task = multiplyTask({ minDigits: 1, maxDigits: 2, maxTurns: 2 });
    const session = new LoraGrpoSession({
      spec: model.spec,
      base: params,
      tokenizer,
      task,
      lora: { rank: 2, alpha: 4, targets: [...LORA_MODULES] },
      grpo: loraGrpoConfig({ lr: 1e-3, promptsPerUpdate: 2, groupSize: 2, maxNewTokens: 24 }),
      seed: 5,
    });
    const metrics = await session.update();
    // Tool-use metrics come only from episodes; every one is a number.
    expect(metrics).toHaveProperty(['tools/call_frequency']);
    expect(metrics['num_turns/mean']).toBeGreaterThanOrEqual(1);
    for (const [name, value] of Object.entries(metrics)) {
      expect(Number.isFinite(value), name).toBe(true);
    }
    const evaluation = await evaluateTask(session.policy, tokenizer, task, { seed: 1, samples: 3 });
    expect(evaluation.samples).toBe(3);
    expect(evaluation.examples[0]!.prompt).toBe(evaluation.examples[0]!.prompt.trim());
    session.dispose();
    // DPO pairs single-turn completions: an agent task is refused, not run without its tools.
    expect(
      () =>
        new LoraGrpoSession({
          spec: model.spec,
          base: params,
          tokenizer,
          task,
          lora: { rank: 2, alpha: 4, targets: ['q_proj'] },
          dpo: loraDpoConfig({ lr: 1e-3, promptsPerUpdate: 2, groupSize: 2, maxNewTokens: 24 }),
          seed: 5,
        }),
    ).toThrow(/task 'multiply.*' is an agent task; DPO pairs single-turn completions/);
  });
});
