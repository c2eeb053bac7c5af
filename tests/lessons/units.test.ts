/**
 * The home page's curriculum comes from the lesson files: every unit folder has written text, every
 * written unit has lessons, and each unit's lessons, first link and minutes are the catalog's.
 */
import { describe, expect, it } from 'vitest';
import { LESSONS, lessonsByUnit } from '../../src/lessons/catalog';
import { curriculum, UNIT_TEXT } from '../../src/lessons/units';
import type { LessonHead } from '../../src/lessons/lesson-head';

describe('the curriculum units', () => {
  it('gives every unit folder a title and a summary, and names no folder without lessons', () => {
    const folders = [...lessonsByUnit().keys()];
    expect(Object.keys(UNIT_TEXT).sort()).toEqual([...folders].sort());
    for (const text of Object.values(UNIT_TEXT)) {
      expect(text.title.length).toBeGreaterThan(2);
      expect(text.summary.length).toBeGreaterThan(20);
    }
  });

  it('lists every lesson once, in reading order, under its own unit', () => {
    const units = curriculum();
    expect(units.map((unit) => unit.id)).toEqual([
      '01-mdp',
      '02-policy-gradient',
      '03-ppo',
      '04-grpo',
      '05-reward-engineering',
      '06-tool-use',
      '07-reading-a-run',
      '08-real-models',
    ]);
    expect(units.flatMap((unit) => unit.lessons.map((lesson) => lesson.id))).toEqual(
      LESSONS.map((lesson) => lesson.id),
    );
    for (const unit of units) {
      for (const lesson of unit.lessons) expect(lesson.unit).toBe(unit.id);
      expect(unit.minutes).toBe(unit.lessons.reduce((sum, lesson) => sum + lesson.minutes, 0));
    }
    expect(units.find((unit) => unit.id === '04-grpo')?.title).toBe('GRPO for language models');
  });

  it('falls back to the folder name for a unit with no written text, and sums its minutes', () => {
    const lesson = (id: string, minutes: number) =>
      ({ id, unit: id.split('/')[0]!, minutes }) as LessonHead;
    const units = curriculum(
      new Map([
        [
          '08-multi-agent-games',
          [lesson('08-multi-agent-games/01-a', 7), lesson('08-multi-agent-games/02-b', 9)],
        ],
      ]),
      {},
    );
    expect(units).toEqual([
      expect.objectContaining({
        id: '08-multi-agent-games',
        title: 'Multi agent games',
        summary: '',
        minutes: 16,
      }),
    ]);
  });
});
