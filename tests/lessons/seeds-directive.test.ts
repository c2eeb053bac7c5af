/**
 * The `::seeds` directive: presets side by side over seeds. Parsed into a block whose presets are
 * widget blocks (found by lessonWidgets like any widget), refused with the file and line for every
 * malformed list, and counted as one run per preset in the reading estimate.
 */
import { describe, expect, it } from 'vitest';
import { LESSONS } from '../../src/lessons/catalog';
import { lessonBlocks, lessonWidgets, parseLesson } from '../../src/lessons/lesson';
import { estimateReading } from '../../src/lessons/reading-time';

const F = 'lessons/01-x/01-y/index.md';
/** Front matter on lines 1–6: the body starts at line 7. */
const lesson = (body: string) =>
  ['---', 'title: T', 'goals: [g]', 'prerequisites: []', 'minutes: 5', '---', body].join('\n');

describe('::seeds', () => {
  it('parses presets, seeds, metric, check and label into a block of widget blocks', () => {
    const parsed = parseLesson(
      F,
      lesson(
        'Text.\n::seeds{presets="ppo-copy, grpo-copy" seeds="1,2,3" check="reward/accuracy gain>=0.2" label="Both"}',
      ),
    );
    const block = parsed.blocks[1]!;
    if (block.kind !== 'seeds') throw new Error(`got a ${block.kind} block`);
    expect(block.id).toBe('seeds:ppo-copy,grpo-copy');
    expect(block.line).toBe(8);
    expect(block.label).toBe('Both');
    expect(block.seeds).toEqual([1, 2, 3]);
    // Both presets chart reward/accuracy: the metric comes from them when not named.
    expect(block.metric).toBe('reward/accuracy');
    expect(block.presets.map((p) => [p.kind, p.preset, p.check.text, p.free, p.line])).toEqual([
      ['widget', 'ppo-copy', 'reward/accuracy gain>=0.2', [], 8],
      ['widget', 'grpo-copy', 'reward/accuracy gain>=0.2', [], 8],
    ]);
    expect(lessonWidgets(parsed.blocks).map((w) => w.preset)).toEqual(['ppo-copy', 'grpo-copy']);
  });

  it("takes each preset's own check when none is given", () => {
    const block = parseLesson(
      F,
      lesson('::seeds{presets="grpo-copy-collapse,grpo-copy" seeds="4,5" metric="x/y"}'),
    ).blocks[0]!;
    if (block.kind !== 'seeds') throw new Error(`got a ${block.kind} block`);
    expect(block.metric).toBe('x/y');
    expect(block.label).toBe('grpo-copy-collapse and grpo-copy');
    expect(block.presets.map((p) => p.check.text)).toEqual([
      'frac_reward_zero_std gain>=0.3',
      'reward/accuracy gain>=0.3',
    ]);
  });

  it.each([
    ['::seeds{presets="ppo-copy,grpo-copy"}', "'seeds' needs the attribute 'seeds'"],
    ['::seeds{presets="ppo-copy" seeds="1,2"}', 'at least 2 presets'],
    ['::seeds{presets="ppo-copy,nope" seeds="1,2"}', "unknown preset 'nope' in seeds"],
    ['::seeds{presets="ppo-copy,ppo-copy" seeds="1,2"}', 'a preset appears twice'],
    ['::seeds{presets="ppo-copy,grpo-copy" seeds="1"}', 'at least 2 seeds'],
    ['::seeds{presets="ppo-copy,grpo-copy" seeds="1,1"}', 'a seed appears twice'],
    [
      '::seeds{presets="ppo-copy,grpo-copy" seeds="1,-2"}',
      "whole numbers ≥ 0, separated by commas; got '-2'",
    ],
    ['::seeds{presets="ppo-copy,grpo-copy" seeds="1,2.5"}', "got '2.5'"],
    ['::seeds{presets="ppo-copy,grpo-copy" seeds="1,2,3,4,5"}', '10 runs; the lab keeps at most 8'],
    ['::seeds{presets="ppo-copy,grpo-copy-collapse" seeds="1,2"}', 'name one with metric="…"'],
    [
      '::seeds{presets="ppo-copy,grpo-copy" seeds="1,2" metric="a b"}',
      "'a b' is not a metric name",
    ],
    ['::seeds{presets="ppo-copy,grpo-copy" seeds="1,2" check="oops"}', 'ppo-copy: check must read'],
    [
      '::seeds{presets="q-learning-cliff,sarsa-cliff" seeds="1,2" metric="charts/episodic_return"}',
      'q-learning-cliff: seeds takes metric checks only',
    ],
    [
      '::seeds{presets="ppo-copy,grpo-copy" seeds="1,2" colour="red"}',
      "unknown attribute 'colour'",
    ],
  ])('refuses %j, naming the file and line', (line, message) => {
    const text = lesson(`Text.\n\n${line}`);
    expect(() => parseLesson(F, text)).toThrow(`${F}:9: `);
    expect(() => parseLesson(F, text)).toThrow(message);
  });

  it('counts one run per preset in the reading estimate', () => {
    const body = '::seeds{presets="ppo-copy,grpo-copy,dpo-copy" seeds="1,2" metric="m"}';
    expect(estimateReading(F, body).widgets).toBe(3);
  });

  it('the PPO-vs-GRPO lesson runs three seeds of each preset on one metric', () => {
    const found = LESSONS.find((l) => l.id === '04-grpo/06-ppo-vs-grpo')!;
    const blocks = lessonBlocks(found);
    expect(blocks.filter((b) => b.kind === 'widget')).toEqual([]);
    const seeds = blocks.find((b) => b.kind === 'seeds');
    if (seeds?.kind !== 'seeds') throw new Error('no seeds block');
    expect(seeds.presets.map((p) => p.preset)).toEqual(['ppo-copy', 'grpo-copy']);
    expect(seeds.seeds.length).toBeGreaterThanOrEqual(3);
    expect(seeds.metric).toBe('reward/accuracy');
  });
});
